package gc

import (
	"slices"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
)

func meta(uid string, owners ...api.OwnerReference) reflector.Meta {
	return reflector.Meta{Name: "n-" + uid, Namespace: "ns", UID: uid, OwnerReferences: owners}
}

func deleting(m reflector.Meta, finalizers ...string) reflector.Meta {
	m.DeletionTimestamp = &api.Time{}
	m.DeletionTimestamp.Time = m.DeletionTimestamp.Add(1)
	m.Finalizers = finalizers
	return m
}

// step is one graph change and the uids it must enqueue.
type step struct {
	op   string // upsert, remove, replace, learn
	meta reflector.Meta
	objs []reflector.Meta // for replace
	want []string
}

func TestGraphEnqueues(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "objects without owners are not synced",
			steps: []step{
				{op: "upsert", meta: meta("a")},
			},
		},
		{
			name: "a new dependent is synced once; an unchanged update is not",
			steps: []step{
				{op: "upsert", meta: meta("d", owner("o", false)), want: []string{"d"}},
				{op: "upsert", meta: meta("d", owner("o", false))},
			},
		},
		{
			name: "an owner's deletion syncs its dependents, even unseen owners",
			steps: []step{
				{op: "upsert", meta: meta("d1", owner("o", false)), want: []string{"d1"}},
				{op: "upsert", meta: meta("d2", owner("o", true)), want: []string{"d2"}},
				{op: "remove", meta: meta("o"), want: []string{"d1", "d2"}},
			},
		},
		{
			name: "a dependent of a present, live owner waits for the owner to change",
			steps: []step{
				{op: "upsert", meta: meta("o")},
				{op: "upsert", meta: meta("d", owner("o", true))},
				{op: "upsert", meta: meta("d", owner("o", true), owner("p", false)), want: []string{"d"}},
				{op: "upsert", meta: deleting(meta("o"))},
				{op: "upsert", meta: meta("d2", owner("o", true)), want: []string{"d2"}},
			},
		},
		{
			name: "an owner turning foreground syncs itself and its dependents",
			steps: []step{
				{op: "upsert", meta: meta("o")},
				{op: "upsert", meta: meta("d", owner("o", true))},
				{op: "upsert", meta: deleting(meta("o"), FinalizerForeground), want: []string{"d", "o"}},
				// Same state again: nothing.
				{op: "upsert", meta: deleting(meta("o"), FinalizerForeground)},
			},
		},
		{
			name: "a deleting owner is synced when a dependent goes or stops blocking",
			steps: []step{
				{op: "upsert", meta: meta("d1", owner("o", true)), want: []string{"d1"}},
				{op: "upsert", meta: meta("d2", owner("o", true)), want: []string{"d2"}},
				{op: "upsert", meta: deleting(meta("o"), FinalizerForeground), want: []string{"d1", "d2", "o"}},
				{op: "upsert", meta: meta("d1", owner("o", false)), want: []string{"d1", "o"}},
				{op: "upsert", meta: meta("d2"), want: []string{"o"}},
				{op: "upsert", meta: meta("d1", owner("o", false), owner("p", false)), want: []string{"d1"}},
				{op: "remove", meta: meta("d1"), want: []string{"o"}},
			},
		},
		{
			name: "orphan finalizer makes an owner interesting",
			steps: []step{
				{op: "upsert", meta: meta("o")},
				{op: "upsert", meta: deleting(meta("o"), FinalizerOrphan), want: []string{"o"}},
			},
		},
		{
			name: "relist removes vanished objects and syncs their dependents",
			steps: []step{
				{op: "upsert", meta: meta("o")},
				{op: "upsert", meta: meta("d", owner("o", false))},
				{op: "replace", objs: []reflector.Meta{meta("d", owner("o", false))}, want: []string{"d"}},
			},
		},
		{
			name: "a dependent learned from a live list is synced under its deleting owner",
			steps: []step{
				{op: "upsert", meta: deleting(meta("o"), FinalizerOrphan), want: []string{"o"}},
				{op: "learn", meta: meta("d", owner("o", true)), want: []string{"d"}},
				// The watch's event for it, later: same state, nothing.
				{op: "upsert", meta: meta("d", owner("o", true))},
			},
		},
		{
			name: "learning a known object keeps the watch's newer state",
			steps: []step{
				{op: "upsert", meta: deleting(meta("o"), FinalizerForeground), want: []string{"o"}},
				{op: "upsert", meta: meta("d", owner("o", false)), want: []string{"d"}},
				// A list read before the watch's update: ignored.
				{op: "learn", meta: meta("d", owner("o", true))},
				// Proof the node kept blocking=false: this is no change.
				{op: "upsert", meta: meta("d", owner("o", false)), want: nil},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGraph()
			for i, s := range tc.steps {
				var got []string
				switch s.op {
				case "upsert":
					got = g.upsert(tPods, s.meta)
				case "remove":
					got = g.remove(s.meta.UID)
				case "replace":
					got = g.replace(tPods, s.objs)
				case "learn":
					_, got = g.learn(tPods, s.meta)
				}
				slices.Sort(got)
				got = slices.Compact(got)
				if !slices.Equal(got, s.want) {
					t.Fatalf("step %d (%s %s): enqueued %v, want %v", i, s.op, s.meta.UID, got, s.want)
				}
			}
		})
	}
}

func TestGraphSnapshot(t *testing.T) {
	g := newGraph()
	g.upsert(tRS, meta("o"))
	g.upsert(tPods, meta("d1", owner("o", true)))
	g.upsert(tPods, deleting(meta("d2", owner("o", false)), FinalizerForeground))
	g.upsert(tPods, meta("x", owner("other", true)))

	ref, deps, ok := g.snapshot("o")
	if !ok || ref.UID != "o" || ref.Info != tRS {
		t.Fatalf("snapshot of o: %+v %v", ref, ok)
	}
	want := []dependent{
		{Ref: objectRef{Info: tPods, Namespace: "ns", Name: "n-d1", UID: "d1"}, Blocking: true},
		{Ref: objectRef{Info: tPods, Namespace: "ns", Name: "n-d2", UID: "d2"}, Deleting: true, DeletingDependents: true},
	}
	if !slices.Equal(deps, want) {
		t.Fatalf("dependents:\n got %+v\nwant %+v", deps, want)
	}
	if _, _, ok := g.snapshot("absent"); ok {
		t.Fatal("snapshot of an unknown uid")
	}
	g.remove("d1")
	if _, deps, _ := g.snapshot("o"); len(deps) != 1 {
		t.Fatalf("after removing d1: %+v", deps)
	}
}
