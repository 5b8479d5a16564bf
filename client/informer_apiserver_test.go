package client_test

// The informer against the real API server (package apiserver) on a real
// bbolt store in t.TempDir(), served over HTTPS on 127.0.0.1 behind a
// streamGate, so that streams can be dropped and the history outrun on
// purpose. informer_server_test.go runs the whole control plane instead.

import (
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/store"
)

// startAPIServer serves apiserver behind a streamGate on a bbolt store that
// keeps history revisions and sends progress (bookmarks) every 20ms.
func startAPIServer(t *testing.T, history int) (*streamGate, *client.Client, []*api.ResourceInfo) {
	t.Helper()
	st, err := store.OpenBolt(t.Context(), filepath.Join(t.TempDir(), "skiff.db"), store.BoltOptions{
		HistorySize: history, NoSync: true, ProgressInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("OpenBolt: %v", err)
	}
	resources := api.Resources()
	s, err := apiserver.New(apiserver.Config{
		Store:         st,
		Resources:     resources,
		Authenticator: apiserver.StaticTokens{"admin-token": {Name: "admin", Groups: []string{"system:masters"}}},
	})
	if err != nil {
		t.Fatalf("apiserver.New: %v", err)
	}
	g := newStreamGate(s.Handler(), false)
	srv := httptest.NewUnstartedServer(g)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		_ = st.Close()
	})
	c, err := client.New(client.Config{Server: srv.URL, CAPEM: caPEM(srv), Token: "admin-token"})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return g, c, resources
}

func TestInformerAgainstAPIServer(t *testing.T) {
	g, c, res := startAPIServer(t, 5)
	ctx := ctxT(t)
	nsInfo := api.Lookup(res, "v1", "namespaces")
	leaseInfo := api.Lookup(res, "coordination.k8s.io/v1", "leases")
	mkNS := func(name string) string {
		t.Helper()
		ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}
		if err := c.Create(ctx, nsInfo, "", ns); err != nil {
			t.Fatalf("create namespace %s: %v", name, err)
		}
		return ns.ResourceVersion
	}
	mkNS("default")
	mkLease := func(name, app string) *api.Lease {
		t.Helper()
		l := &api.Lease{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"app": app}}}
		if err := c.Create(ctx, leaseInfo, "default", l); err != nil {
			t.Fatalf("create lease %s: %v", name, err)
		}
		return l
	}
	update := func(name string, fn func(*api.Lease)) *api.Lease {
		t.Helper()
		var l api.Lease
		if err := c.Get(ctx, leaseInfo, "default", name, &l); err != nil {
			t.Fatal(err)
		}
		fn(&l)
		if err := c.Update(ctx, leaseInfo, "default", &l); err != nil {
			t.Fatalf("update lease %s: %v", name, err)
		}
		return &l
	}
	l1 := mkLease("l1", "x")
	l2 := mkLease("l2", "x")
	mkLease("l3", "y")

	inf := client.NewInformer(c, leaseInfo, client.InformerOptions{Namespace: "default", LabelSelector: "app=x"})
	client.SetInformerTunables(inf, 1, 10*time.Millisecond, 100*time.Millisecond) // one object per page
	inf.AddIndexer("holder", func(o api.Object) []string {
		if h := o.(*api.Lease).Spec.HolderIdentity; h != nil {
			return []string{*h}
		}
		return nil
	})
	rec := newRecorder(t)
	inf.AddEventHandler(rec)
	stop := runInformer(t, inf, rec)
	if !client.WaitForCacheSync(ctx, inf.HasSynced) {
		t.Fatal("no sync")
	}
	got := rec.log()
	slices.Sort(got)
	if want := []string{"add " + id("default", "l1", l1.ResourceVersion), "add " + id("default", "l2", l2.ResourceVersion)}; !slices.Equal(got, want) {
		t.Fatalf("first list: %q, want %q (the selector keeps l3 out)", got, want)
	}
	if n := g.listCount(); n != 3 {
		t.Errorf("list requests = %d, want 3 pages of one", n)
	}
	if obj, _ := inf.Get("default", "l1"); obj == nil || obj.GetTypeMeta().Kind != "Lease" {
		t.Fatalf("cached l1 = %#v, want a typed Lease", obj)
	}

	// Watch: an update, an object leaving the selector (DELETED), an add.
	holder := "node-1"
	l1b := update("l1", func(l *api.Lease) { l.Spec.HolderIdentity = &holder })
	l2b := update("l2", func(l *api.Lease) { l.Labels["app"] = "y" })
	l4 := mkLease("l4", "x")
	got = rec.waitCalls(t, 5)[2:]
	want := []string{
		"update " + id("default", "l1", l1.ResourceVersion) + "->" + l1b.ResourceVersion,
		"delete " + id("default", "l2", l2b.ResourceVersion),
		"add " + id("default", "l4", l4.ResourceVersion),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("watch calls:\n got %q\nwant %q", got, want)
	}
	if got := sortedIDs(inf.ByIndex("holder", "node-1")); !slices.Equal(got, []string{id("default", "l1", l1b.ResourceVersion)}) {
		t.Errorf("holder=node-1: %q", got)
	}

	// Bookmarks: a write elsewhere advances the informer's RV, and a
	// dropped stream resumes from it, without a relist.
	otherRV := mkNS("other")
	waitFor(t, "a bookmark at "+otherRV, func() bool { return inf.LastSyncResourceVersion() == otherRV })
	g.dropWatches()
	waitFor(t, "the resumed watch", func() bool { return len(g.watchStarts()) == 2 && g.activeWatches() == 1 })
	if starts := g.watchStarts(); starts[1] != otherRV {
		t.Errorf("watch resumed from %q, want the bookmark's %q", starts[1], otherRV)
	}
	if n := g.listCount(); n != 3 {
		t.Errorf("list requests = %d after a dropped stream, want still 3", n)
	}

	// 410: while the informer is away, l1 is deleted and the history
	// (5 revisions) moves past its resourceVersion.
	n := len(rec.log())
	release := g.holdWatches()
	g.dropWatches()
	waitFor(t, "the held re-watch", func() bool { return len(g.watchStarts()) == 3 })
	if err := c.Delete(ctx, leaseInfo, "default", "l1", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"n1", "n2", "n3", "n4", "n5", "n6"} {
		mkNS(name)
	}
	release()
	got = rec.waitCalls(t, n+1)[n:]
	if want := []string{"delete " + id("default", "l1", l1b.ResourceVersion)}; !slices.Equal(got, want) {
		t.Fatalf("after 410: %q, want %q (the last cached state)", got, want)
	}
	waitFor(t, "the relist", func() bool { return g.listCount() == 3+1 })
	if got := sortedIDs(inf.List()); !slices.Equal(got, []string{id("default", "l4", l4.ResourceVersion)}) {
		t.Fatalf("cache after relist: %q", got)
	}
	if got := inf.ByIndex("holder", "node-1"); len(got) != 0 {
		t.Errorf("holder index still holds %d objects after l1 left", len(got))
	}
	l5 := mkLease("l5", "x")
	if got := rec.waitCalls(t, n+2)[n+1:]; !slices.Equal(got, []string{"add " + id("default", "l5", l5.ResourceVersion)}) {
		t.Fatalf("after relist: %q", got)
	}
	stop()
	waitFor(t, "the server to see the watch end", func() bool { return g.activeWatches() == 0 })
}
