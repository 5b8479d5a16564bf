package gc

import (
	"reflect"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

var (
	tPods = &api.ResourceInfo{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	tRS   = &api.ResourceInfo{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
)

func ptr[T any](v T) *T { return &v }

func owner(uid string, block bool) api.OwnerReference {
	return api.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + uid, UID: uid, BlockOwnerDeletion: ptr(block)}
}

func ref(uid string) objectRef {
	return objectRef{Info: tPods, Namespace: "ns", Name: "pod-" + uid, UID: uid}
}

func TestDecide(t *testing.T) {
	self := objectRef{Info: tRS, Namespace: "ns", Name: "self", UID: "self"}
	tests := []struct {
		name   string
		item   item
		owners map[string]ownerState
		deps   []dependent
		want   plan
	}{
		{
			name: "no owners: nothing to do",
			item: item{Ref: self},
		},
		{
			name:   "every owner alive: kept",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", false), owner("b", true)}},
			owners: map[string]ownerState{"a": ownerSolid, "b": ownerSolid},
		},
		{
			name:   "owner not looked up counts as alive",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", false)}},
			owners: map[string]ownerState{},
		},
		{
			name:   "only owner absent: deleted in the background",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", false)}},
			owners: map[string]ownerState{"a": ownerAbsent},
			want:   plan{Delete: client.DeletePropagationBackground},
		},
		{
			name:   "every owner absent, dependents of its own: still background",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", false), owner("b", false)}},
			owners: map[string]ownerState{"a": ownerAbsent, "b": ownerAbsent},
			deps:   []dependent{{Ref: ref("p1"), Blocking: true}},
			want:   plan{Delete: client.DeletePropagationBackground},
		},
		{
			name:   "owner absent, item asks for orphaning: deleted with Orphan",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", false)}, Finalizers: []string{FinalizerOrphan}},
			owners: map[string]ownerState{"a": ownerAbsent},
			want:   plan{Delete: client.DeletePropagationOrphan},
		},
		{
			name:   "one owner alive, one absent: dangling reference removed",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", false), owner("b", false)}},
			owners: map[string]ownerState{"a": ownerSolid, "b": ownerAbsent},
			want:   plan{RemoveOwners: []string{"b"}},
		},
		{
			name:   "one owner alive, one waiting: reference to the waiting owner removed",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", true), owner("b", true)}},
			owners: map[string]ownerState{"a": ownerWaiting, "b": ownerSolid},
			want:   plan{RemoveOwners: []string{"a"}},
		},
		{
			name:   "owner waiting, no dependents: background",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", true)}},
			owners: map[string]ownerState{"a": ownerWaiting},
			want:   plan{Delete: client.DeletePropagationBackground},
		},
		{
			name:   "owner waiting, own dependents: foreground so the wait propagates",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", true)}},
			owners: map[string]ownerState{"a": ownerWaiting},
			deps:   []dependent{{Ref: ref("p1"), Blocking: true}},
			want:   plan{Delete: client.DeletePropagationForeground},
		},
		{
			name:   "owner waiting, absent other owner, own dependents: foreground",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", true), owner("b", false)}},
			owners: map[string]ownerState{"a": ownerWaiting, "b": ownerAbsent},
			deps:   []dependent{{Ref: ref("p1")}},
			want:   plan{Delete: client.DeletePropagationForeground},
		},
		{
			name:   "cycle: a dependent waits for the item: unblock then foreground",
			item:   item{Ref: self, Owners: []api.OwnerReference{owner("a", true)}},
			owners: map[string]ownerState{"a": ownerWaiting},
			deps:   []dependent{{Ref: ref("a"), Blocking: true, Deleting: true, DeletingDependents: true}},
			want:   plan{Delete: client.DeletePropagationForeground, UnblockOwners: true},
		},
		{
			name: "orphan: every dependent loses its reference, then the finalizer goes",
			item: item{Ref: self, Deleting: true, Finalizers: []string{FinalizerOrphan}},
			deps: []dependent{{Ref: ref("p1"), Blocking: true}, {Ref: ref("p2")}},
			want: plan{Orphan: []objectRef{ref("p1"), ref("p2")}, RemoveFinalizer: FinalizerOrphan},
		},
		{
			name: "orphan without dependents: finalizer removed",
			item: item{Ref: self, Deleting: true, Finalizers: []string{"custom", FinalizerOrphan}},
			want: plan{RemoveFinalizer: FinalizerOrphan},
		},
		{
			name: "orphan before foreground when both are asked",
			item: item{Ref: self, Deleting: true, Finalizers: []string{FinalizerForeground, FinalizerOrphan}},
			deps: []dependent{{Ref: ref("p1"), Blocking: true}},
			want: plan{Orphan: []objectRef{ref("p1")}, RemoveFinalizer: FinalizerOrphan},
		},
		{
			name: "foreground: blocking dependents synced, finalizer kept",
			item: item{Ref: self, Deleting: true, Finalizers: []string{FinalizerForeground}},
			deps: []dependent{
				{Ref: ref("p1"), Blocking: true},
				{Ref: ref("p2")},
				{Ref: ref("p3"), Blocking: true, Deleting: true},
				{Ref: ref("p4"), Blocking: true, Deleting: true, DeletingDependents: true},
			},
			want: plan{Enqueue: []string{"p1", "p3"}},
		},
		{
			name: "foreground: only non-blocking dependents left: finalizer removed",
			item: item{Ref: self, Deleting: true, Finalizers: []string{FinalizerForeground}},
			deps: []dependent{{Ref: ref("p2")}},
			want: plan{RemoveFinalizer: FinalizerForeground},
		},
		{
			name: "foreground: no dependents: finalizer removed",
			item: item{Ref: self, Deleting: true, Finalizers: []string{FinalizerForeground}},
			want: plan{RemoveFinalizer: FinalizerForeground},
		},
		{
			name:   "being deleted by someone else: left alone even if its owner is gone",
			item:   item{Ref: self, Deleting: true, Finalizers: []string{"example.com/cleanup"}, Owners: []api.OwnerReference{owner("a", false)}},
			owners: map[string]ownerState{"a": ownerAbsent},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.item, tc.owners, tc.deps)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decide:\n got %+v\nwant %+v", got, tc.want)
			}
			if got.empty() != reflect.DeepEqual(tc.want, plan{}) {
				t.Fatalf("empty() = %v for %+v", got.empty(), got)
			}
		})
	}
}

func TestNeedsOwners(t *testing.T) {
	tests := []struct {
		name string
		item item
		want bool
	}{
		{"no owners", item{}, false},
		{"owners", item{Owners: []api.OwnerReference{owner("a", false)}}, true},
		{"deleting with owners", item{Deleting: true, Owners: []api.OwnerReference{owner("a", false)}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsOwners(tc.item); got != tc.want {
				t.Fatalf("needsOwners = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPatchOps(t *testing.T) {
	meta := &api.ObjectMeta{
		Finalizers:      []string{"a", FinalizerForeground},
		OwnerReferences: []api.OwnerReference{owner("x", true), owner("y", false)},
	}
	tests := []struct {
		name string
		ops  []patchOp
		want []patchOp
	}{
		{"remove one finalizer", removeFinalizerOps(meta, FinalizerForeground), []patchOp{{Op: "replace", Path: "/metadata/finalizers", Value: []string{"a"}}}},
		{"remove absent finalizer", removeFinalizerOps(meta, FinalizerOrphan), nil},
		{"remove last finalizer", removeFinalizerOps(&api.ObjectMeta{Finalizers: []string{"a"}}, "a"), []patchOp{{Op: "remove", Path: "/metadata/finalizers"}}},
		{"remove one owner", removeOwnerOps(meta, []string{"x"}), []patchOp{{Op: "replace", Path: "/metadata/ownerReferences", Value: []api.OwnerReference{owner("y", false)}}}},
		{"remove every owner", removeOwnerOps(meta, []string{"x", "y"}), []patchOp{{Op: "remove", Path: "/metadata/ownerReferences"}}},
		{"remove unknown owner", removeOwnerOps(meta, []string{"z"}), nil},
		{"unblock", unblockOps(meta), []patchOp{{Op: "replace", Path: "/metadata/ownerReferences", Value: []api.OwnerReference{owner("x", false), owner("y", false)}}}},
		{"unblock nothing blocking", unblockOps(&api.ObjectMeta{OwnerReferences: []api.OwnerReference{owner("y", false)}}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.ops, tc.want) {
				t.Fatalf("got %+v, want %+v", tc.ops, tc.want)
			}
		})
	}
	if !blocks(meta.OwnerReferences[0]) {
		t.Fatal("unblockOps modified its input")
	}
}
