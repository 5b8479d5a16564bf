//go:build integration

package client_test

// Run against a real Skiff server (after the branches merge):
//
//	SKIFF_KUBECONFIG=/var/lib/skiff/admin.kubeconfig go test -tags integration -run Integration ./client/
//
// It creates a namespace named skiff-client-it-<n> and a few Leases in it.

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

var (
	itNamespaces = &api.ResourceInfo{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	itLeases     = &api.ResourceInfo{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true}
)

func TestIntegrationRealServer(t *testing.T) {
	path := os.Getenv("SKIFF_KUBECONFIG")
	if path == "" {
		t.Fatal("SKIFF_KUBECONFIG must name an admin kubeconfig of a running server")
	}
	cfg, err := client.FromKubeconfig(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)

	bad := cfg
	bad.Token = "wrong"
	bc, _ := client.New(bad)
	if err := bc.List(ctx, itNamespaces, "", client.ListOptions{}, &client.RawList{}); !client.IsUnauthorized(err) {
		t.Fatalf("wrong token: want 401, got %v", err)
	}

	nsName := fmt.Sprintf("skiff-client-it-%d", time.Now().UnixNano()%1e9)
	ns := &client.Unstructured{ObjectMeta: api.ObjectMeta{Name: nsName}}
	if err := c.Create(ctx, itNamespaces, "", ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, itNamespaces, "", nsName, client.DeleteOptions{}) })

	var list client.RawList
	if err := c.List(ctx, itLeases, nsName, client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, itLeases, nsName, client.ListOptions{ResourceVersion: list.Metadata.ResourceVersion})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	lease := func(name string) *client.Unstructured {
		u := &client.Unstructured{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"it": "yes"}}}
		_ = u.SetField("spec", map[string]any{"holderIdentity": "a", "leaseDurationSeconds": 10})
		return u
	}
	l := lease("l0")
	if err := c.Create(ctx, itLeases, nsName, l); err != nil {
		t.Fatalf("create lease: %v", err)
	}
	if l.UID == "" || l.ResourceVersion == "" || l.CreationTimestamp.IsZero() {
		t.Fatalf("server did not set uid/resourceVersion/creationTimestamp: %+v", l.ObjectMeta)
	}
	if err := c.Create(ctx, itLeases, nsName, lease("l0")); !client.IsAlreadyExists(err) {
		t.Fatalf("duplicate: want AlreadyExists, got %v", err)
	}
	if err := c.Get(ctx, itLeases, nsName, "missing", &client.Unstructured{}); !client.IsNotFound(err) {
		t.Fatalf("missing: want NotFound, got %v", err)
	}
	stale := *l
	_ = l.SetField("spec", map[string]any{"holderIdentity": "b", "leaseDurationSeconds": 10})
	if err := c.Update(ctx, itLeases, nsName, l); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := c.Update(ctx, itLeases, nsName, &stale); !client.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}
	if err := c.Patch(ctx, itLeases, nsName, "l0", client.MergePatchType, []byte(`{"metadata":{"labels":{"p":"q"}}}`), l); err != nil || l.Labels["p"] != "q" {
		t.Fatalf("merge patch: %v %v", err, l.Labels)
	}
	jp := `[{"op":"test","path":"/metadata/resourceVersion","value":"0"},{"op":"remove","path":"/metadata/labels/p"}]`
	if err := c.Patch(ctx, itLeases, nsName, "l0", client.JSONPatchType, []byte(jp), nil); !client.IsInvalid(err) {
		t.Fatalf("failed JSON patch test: want Invalid, got %v", err)
	}
	if err := c.Create(ctx, itLeases, nsName, &client.Unstructured{ObjectMeta: api.ObjectMeta{Name: "bad"}, Fields: map[string]json.RawMessage{"spec": json.RawMessage(`{"nope":1}`)}}); err == nil {
		t.Fatal("unknown field accepted")
	}
	for i := 1; i <= 3; i++ {
		if err := c.Create(ctx, itLeases, nsName, lease(fmt.Sprintf("l%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	pages, total := 0, 0
	opts := client.ListOptions{Limit: 2, LabelSelector: "it=yes"}
	for {
		var page client.RawList
		if err := c.List(ctx, itLeases, nsName, opts, &page); err != nil {
			t.Fatalf("list: %v", err)
		}
		pages++
		total += len(page.Items)
		if page.Metadata.Continue == "" {
			break
		}
		opts.Continue = page.Metadata.Continue
	}
	if pages != 2 || total != 4 {
		t.Fatalf("paged list: %d pages, %d items", pages, total)
	}
	if err := c.Delete(ctx, itLeases, nsName, "l0", client.DeleteOptions{Preconditions: &client.Preconditions{UID: "wrong"}}); !client.IsConflict(err) {
		t.Fatalf("delete with a wrong uid precondition: want Conflict, got %v", err)
	}
	if err := c.Delete(ctx, itLeases, nsName, "l0", client.DeleteOptions{PropagationPolicy: client.DeletePropagationBackground}); err != nil {
		t.Fatalf("delete: %v", err)
	}

	want := []string{"ADDED l0", "MODIFIED l0", "MODIFIED l0", "ADDED l1", "ADDED l2", "ADDED l3", "DELETED l0"}
	for _, w0 := range want {
		ev := nextEvent(t, w)
		var m struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(ev.Object, &m)
		if got := ev.Type + " " + m.Metadata.Name; got != w0 {
			t.Fatalf("watch event %q, want %q", got, w0)
		}
	}

	// A watch from a revision far in the past: the server may still have
	// it (no compaction yet) or answer 410; either is valid, a hang is not.
	old, err := c.Watch(ctx, itLeases, nsName, client.ListOptions{ResourceVersion: "1"})
	if err != nil && !client.IsGone(err) {
		t.Fatalf("watch from revision 1: %v", err)
	}
	if old != nil {
		old.Stop()
	}
}
