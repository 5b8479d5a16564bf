package client_test

// The informer against the whole control plane as `skiff server` runs it
// (server.Start, through servertest: PKI, bbolt, allocators, API server,
// controllers), over its own HTTPS listener on 127.0.0.1.

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

func TestInformerAgainstServerStart(t *testing.T) {
	ctx := ctxT(t)
	c := servertest.Start(t, servertest.Options{}).Client()
	res := api.Resources()
	svcInfo := api.Lookup(res, "v1", "services")
	nsInfo := api.Lookup(res, "v1", "namespaces")

	nsInf := client.NewInformer(c, nsInfo, client.InformerOptions{})
	svcInf := client.NewInformer(c, svcInfo, client.InformerOptions{})
	svcInf.AddIndexer("clusterIP", func(o api.Object) []string { return []string{o.(*api.Service).Spec.ClusterIP} })
	rec := newRecorder(t)
	svcInf.AddEventHandler(rec)
	stopNS := runInformer(t, nsInf)
	if !client.WaitForCacheSync(ctx, nsInf.HasSynced) {
		t.Fatal("namespaces informer did not sync")
	}
	stopNS()
	stop := runInformer(t, svcInf, rec)
	if !client.WaitForCacheSync(ctx, svcInf.HasSynced) {
		t.Fatal("services informer did not sync")
	}

	// The built-in objects, typed.
	var nsNames []string
	for _, o := range nsInf.List() {
		nsNames = append(nsNames, o.(*api.Namespace).Name)
	}
	slices.Sort(nsNames)
	if want := []string{"default", "kube-node-lease", "kube-public", "kube-system"}; !slices.Equal(nsNames, want) {
		t.Errorf("namespaces %q, want %q", nsNames, want)
	}
	obj, ok := svcInf.Get("default", "kubernetes")
	if !ok {
		t.Fatal("the kubernetes Service is not cached")
	}
	if ip := obj.(*api.Service).Spec.ClusterIP; ip != "10.96.0.1" {
		t.Errorf("kubernetes Service clusterIP %q, want 10.96.0.1", ip)
	}

	// A created Service arrives with the ClusterIP the server allocated.
	n := len(rec.log())
	svc := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt32(8080)}}},
	}
	if err := c.Create(ctx, svcInfo, "default", svc); err != nil {
		t.Fatalf("create Service: %v", err)
	}
	if _, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil {
		t.Fatalf("created Service has no ClusterIP: %q", svc.Spec.ClusterIP)
	}
	if got := rec.waitCalls(t, n+1)[n:]; !slices.Equal(got, []string{"add " + id("default", "web", svc.ResourceVersion)}) {
		t.Fatalf("after create: %q", got)
	}
	byIP := svcInf.ByIndex("clusterIP", svc.Spec.ClusterIP)
	if len(byIP) != 1 || byIP[0].GetObjectMeta().Name != "web" {
		t.Fatalf("ByIndex(clusterIP, %s) = %v", svc.Spec.ClusterIP, byIP)
	}

	// A copy is changed and written back; the cache's object is untouched.
	cached, _ := svcInf.Get("default", "web")
	cp := api.DeepCopy(cached.(*api.Service))
	cp.Labels = map[string]string{"tier": "front"}
	if err := c.Update(ctx, svcInfo, "default", cp); err != nil {
		t.Fatalf("update Service: %v", err)
	}
	if cached.GetObjectMeta().Labels != nil {
		t.Fatal("DeepCopy shared labels with the cached object")
	}
	if err := c.Delete(ctx, svcInfo, "default", "web", client.DeleteOptions{}); err != nil {
		t.Fatalf("delete Service: %v", err)
	}
	got := rec.waitCalls(t, n+3)[n+1:]
	if len(got) != 2 || got[0] != "update "+id("default", "web", svc.ResourceVersion)+"->"+cp.ResourceVersion ||
		!strings.HasPrefix(got[1], "delete default/web@") {
		t.Fatalf("after update and delete: %q", got)
	}
	waitFor(t, "the Service to leave the cache", func() bool { _, ok := svcInf.Get("default", "web"); return !ok })
	if len(svcInf.ByIndex("clusterIP", svc.Spec.ClusterIP)) != 0 {
		t.Error("the deleted Service is still indexed")
	}
	stop()
}
