package rootcacert_test

import (
	"context"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/rootcacert"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var (
	res   = api.Resources()
	resNS = api.Lookup(res, "v1", "namespaces")
	resCM = api.Lookup(res, "v1", "configmaps")
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func activeNamespace(name string) *api.Namespace {
	return &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}, Status: api.NamespaceStatus{Phase: api.NamespaceActive}}
}

func TestReconcile(t *testing.T) {
	ns := activeNamespace("a")
	create, update := rootcacert.Reconcile(ns, nil, ca)
	if update != nil || create == nil || create.Data["ca.crt"] != ca || create.Annotations[rootcacert.DescriptionAnnotation] == "" || create.Name != "kube-root-ca.crt" {
		t.Fatalf("missing: create %+v update %+v", create, update)
	}
	if c, u := rootcacert.Reconcile(ns, create, ca); c != nil || u != nil {
		t.Fatalf("in sync: create %+v update %+v", c, u)
	}
	changed := api.DeepCopy(create)
	changed.Data = map[string]string{"ca.crt": "other", "extra": "x"}
	changed.Labels = map[string]string{"mine": "yes"}
	_, u := rootcacert.Reconcile(ns, changed, ca)
	if u == nil || len(u.Data) != 1 || u.Data["ca.crt"] != ca || u.Labels["mine"] != "yes" {
		t.Fatalf("changed: update %+v", u)
	}
	if changed.Data["ca.crt"] != "other" {
		t.Fatal("Reconcile changed the cached object")
	}
	noAnn := api.DeepCopy(create)
	noAnn.Annotations = nil
	if _, u := rootcacert.Reconcile(ns, noAnn, ca); u == nil || u.Annotations[rootcacert.DescriptionAnnotation] != rootcacert.Description {
		t.Fatalf("annotation removed: update %+v", u)
	}
	term := activeNamespace("b")
	term.Status.Phase = api.NamespaceTerminating
	if c, u := rootcacert.Reconcile(term, nil, ca); c != nil || u != nil {
		t.Fatal("a terminating namespace got its ConfigMap")
	}
	if c, u := rootcacert.Reconcile(nil, nil, ca); c != nil || u != nil {
		t.Fatal("an unknown namespace got its ConfigMap")
	}
}

// TestFakePublishes: every namespace gets the ConfigMap, a deleted one
// comes back and a changed one is put back.
func TestFakePublishes(t *testing.T) {
	fake := fakeapi.New(res)
	c := fake.Client()
	ctx, cancel := context.WithCancel(t.Context())
	if err := c.Create(ctx, resNS, "", activeNamespace("default")); err != nil {
		t.Fatal(err)
	}
	nsInf := client.NewInformerFor(fake, resNS, client.InformerOptions{})
	cmInf := client.NewInformerFor(fake, resCM, client.InformerOptions{})
	ctl, err := rootcacert.New(rootcacert.Deps{Client: c, Namespaces: nsInf, ConfigMaps: cmInf, RootCA: []byte(ca)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = nsInf.Run(ctx) })
	wg.Go(func() { _ = cmInf.Run(ctx) })
	wg.Go(func() { _ = ctl.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	get := func(ns string) (api.ConfigMap, bool) {
		var cm api.ConfigMap
		err := fake.Get(ctx, resCM, ns, rootcacert.ConfigMapName, &cm)
		return cm, err == nil
	}
	fakeapi.Wait(t, "default/kube-root-ca.crt", func() bool { cm, ok := get("default"); return ok && cm.Data["ca.crt"] == ca })
	if err := c.Create(ctx, resNS, "", activeNamespace("team-a")); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "team-a/kube-root-ca.crt", func() bool { _, ok := get("team-a"); return ok })

	if err := fake.Delete(ctx, resCM, "team-a", rootcacert.ConfigMapName, client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "team-a/kube-root-ca.crt recreated", func() bool { _, ok := get("team-a"); return ok })

	cm, _ := get("default")
	cm.Data = map[string]string{"ca.crt": "tampered"}
	if err := fake.Update(ctx, resCM, "default", &cm); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "default/kube-root-ca.crt put back", func() bool { cm, ok := get("default"); return ok && cm.Data["ca.crt"] == ca })
}

func TestNewRejectsMissingDeps(t *testing.T) {
	if _, err := rootcacert.New(rootcacert.Deps{}); err == nil {
		t.Fatal("New accepted no deps")
	}
}
