package history_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/internal/history"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var revInfo = api.Lookup(api.Resources(), "apps/v1", "controllerrevisions")

const ns = "default"

func start(t *testing.T) (*fakeapi.Server, *history.History, *client.Informer) {
	t.Helper()
	fake := fakeapi.New(api.Resources())
	if _, err := fake.Create(context.Background(), api.Lookup(api.Resources(), "v1", "namespaces"), "",
		&api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	inf := client.NewInformerFor(fake, revInfo, client.InformerOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	fakeapi.Wait(t, "the informer", inf.HasSynced)
	return fake, history.New(fake.Client(), inf), inf
}

func owner(image, hash string) history.Owner {
	yes := true
	return history.Owner{
		Meta: &api.ObjectMeta{Name: "agent", Namespace: ns, UID: "ds-uid"},
		Ref:  api.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "ds-uid", Controller: &yes},
		Template: &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "agent"}},
			Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: image}}}},
		Hash: hash,
	}
}

// TestSyncAndTruncate: each new template gets the next revision; going
// back to an old template renumbers its revision instead of making one;
// Truncate keeps the current, the live and the limit newest others.
func TestSyncAndTruncate(t *testing.T) {
	_, h, _ := start(t)
	ctx := context.Background()
	sync := func(image, hash string) *api.ControllerRevision {
		t.Helper()
		o := owner(image, hash)
		cur, err := h.Sync(ctx, o, h.Owned(ns, "ds-uid"))
		if err != nil {
			t.Fatal(err)
		}
		// The cache catches up with the write.
		fakeapi.Wait(t, hash+" in the cache", func() bool {
			for _, r := range h.Owned(ns, "ds-uid") {
				if r.Name == cur.Name && r.Revision == cur.Revision {
					return true
				}
			}
			return false
		})
		return cur
	}
	r1 := sync("v1", "h1")
	if r1.Name != "agent-h1" || r1.Revision != 1 || r1.Labels["app"] != "agent" || r1.Labels[api.LabelControllerRevisionHash] != "h1" {
		t.Fatalf("first revision %+v", r1.ObjectMeta)
	}
	tmpl, err := r1.Template()
	if err != nil || tmpl.Spec.Containers[0].Image != "v1" {
		t.Fatalf("template of r1: %+v, %v", tmpl, err)
	}
	if r := sync("v2", "h2"); r.Revision != 2 {
		t.Fatalf("second revision %d", r.Revision)
	}
	if r := sync("v2", "h2"); r.Revision != 2 {
		t.Fatalf("a second sync renumbered: %d", r.Revision)
	}
	back := sync("v1", "h1")
	if back.Name != "agent-h1" || back.Revision != 3 {
		t.Fatalf("rollback: %s revision %d, want agent-h1 3", back.Name, back.Revision)
	}
	if n := len(h.Owned(ns, "ds-uid")); n != 2 {
		t.Fatalf("%d revisions after the rollback, want 2", n)
	}
	for i, img := range []string{"v3", "v4", "v5"} {
		sync(img, "h"+string(rune('3'+i)))
	}
	// Revisions: h2(2) h1(3) h3(4) h4(5) h5(6, current). Keep 1 other
	// plus the live h2: h1 and h3 go.
	revs := h.Owned(ns, "ds-uid")
	cur := revs[len(revs)-1]
	if err := h.Truncate(ctx, revs, cur, map[string]bool{"h2": true}, 1); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "truncation", func() bool {
		var names []string
		for _, r := range h.Owned(ns, "ds-uid") {
			names = append(names, r.Name)
		}
		return len(names) == 3 && names[0] == "agent-h2" && names[1] == "agent-h4" && names[2] == "agent-h5"
	})
}

// TestCollision: a revision name taken by another template is
// ErrCollision; taken by the same one, it is that revision.
func TestCollision(t *testing.T) {
	fake, h, _ := start(t)
	ctx := context.Background()
	other := owner("other", "hx")
	data, _ := history.TemplatePatch(other.Template)
	if _, err := fake.Create(ctx, revInfo, ns, &api.ControllerRevision{
		ObjectMeta: api.ObjectMeta{Name: "agent-hx", Namespace: ns, OwnerReferences: []api.OwnerReference{other.Ref}},
		Data:       data, Revision: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sync(ctx, owner("mine", "hx"), nil); !errors.Is(err, history.ErrCollision) {
		t.Fatalf("sync over another template's name: %v, want ErrCollision", err)
	}
	r, err := h.Sync(ctx, other, nil) // the cache is not asked: nil revisions
	if err != nil || r.Name != "agent-hx" {
		t.Fatalf("sync of the same template: %v, %v", r, err)
	}
}
