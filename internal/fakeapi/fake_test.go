package fakeapi

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type obj struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

func setup(t *testing.T) (*Server, *api.ResourceInfo, *api.ResourceInfo, context.Context) {
	res := Resources()
	s := New(res)
	ctx := t.Context()
	ns, pods := Find(res, "", "namespaces"), Find(res, "", "pods")
	if _, err := s.Create(ctx, ns, "", &obj{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	return s, ns, pods, ctx
}

func TestDeletionRules(t *testing.T) {
	tests := []struct {
		name           string
		finalizers     []string
		policy         string
		wantGone       bool
		wantFinalizers []string
	}{
		{name: "background without finalizers: gone", wantGone: true},
		{name: "foreground adds its finalizer", policy: client.DeletePropagationForeground, wantFinalizers: []string{FinalizerForeground}},
		{name: "orphan adds its finalizer", policy: client.DeletePropagationOrphan, wantFinalizers: []string{FinalizerOrphan}},
		{name: "custom finalizer keeps the object", finalizers: []string{"x/y"}, wantFinalizers: []string{"x/y"}},
		{name: "background drops propagation finalizers", finalizers: []string{FinalizerOrphan}, wantGone: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, pods, ctx := setup(t)
			if _, err := s.Create(ctx, pods, "default", &obj{ObjectMeta: api.ObjectMeta{Name: "p", Finalizers: tc.finalizers}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, pods, "default", "p", client.DeleteOptions{PropagationPolicy: tc.policy}); err != nil {
				t.Fatal(err)
			}
			m, ok := s.Meta(pods, "default", "p")
			if ok == tc.wantGone {
				t.Fatalf("exists = %v, want gone = %v", ok, tc.wantGone)
			}
			if ok && (m.DeletionTimestamp == nil || len(m.Finalizers) != len(tc.wantFinalizers) || m.Finalizers[0] != tc.wantFinalizers[0]) {
				t.Fatalf("marked object: %+v", m)
			}
		})
	}
}

func TestWriteRules(t *testing.T) {
	s, _, pods, ctx := setup(t)
	uid, err := s.Create(ctx, pods, "default", &obj{ObjectMeta: api.ObjectMeta{Name: "p", Finalizers: []string{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, pods, "default", &obj{ObjectMeta: api.ObjectMeta{Name: "p"}}); !client.IsAlreadyExists(err) {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, err := s.Create(ctx, pods, "nowhere", &obj{ObjectMeta: api.ObjectMeta{Name: "p"}}); !client.IsNotFound(err) {
		t.Fatalf("create in a missing namespace: %v", err)
	}
	var cur obj
	if err := s.Get(ctx, pods, "default", "p", &cur); err != nil {
		t.Fatal(err)
	}
	stale := cur
	cur.Labels = map[string]string{"x": "y"}
	if err := s.Update(ctx, pods, "default", &cur); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := s.Update(ctx, pods, "default", &stale); !client.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	if err := s.Delete(ctx, pods, "default", "p", client.DeleteOptions{Preconditions: &client.Preconditions{UID: "other"}}); !client.IsConflict(err) {
		t.Fatalf("delete with a wrong uid precondition: %v", err)
	}
	if err := s.Delete(ctx, pods, "default", "p", client.DeleteOptions{Preconditions: &client.Preconditions{UID: uid}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Patch(ctx, pods, "default", "p", client.MergePatchType, []byte(`{"metadata":{"finalizers":["a","b"]}}`), nil); !client.IsForbidden(err) {
		t.Fatalf("adding a finalizer to a marked object: %v", err)
	}
	if err := s.Patch(ctx, pods, "default", "p", client.JSONPatchType, []byte(`[{"op":"test","path":"/metadata/resourceVersion","value":"1"},{"op":"remove","path":"/metadata/finalizers"}]`), nil); !client.IsInvalid(err) {
		t.Fatalf("JSON patch with a failing test: %v", err)
	}
	if err := s.Patch(ctx, pods, "default", "p", client.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Meta(pods, "default", "p"); ok {
		t.Fatal("a marked object without finalizers was kept")
	}
}

func TestNamespaceLifecycle(t *testing.T) {
	s, ns, pods, ctx := setup(t)
	if err := s.Delete(ctx, ns, "", "default", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var u client.Unstructured
	if err := s.Get(ctx, ns, "", "default", &u); err != nil {
		t.Fatal(err)
	}
	var status struct{ Phase string }
	if _, err := u.Field("status", &status); err != nil || status.Phase != "Terminating" {
		t.Fatalf("status %+v %v", status, err)
	}
	if _, err := s.Create(ctx, pods, "default", &obj{ObjectMeta: api.ObjectMeta{Name: "late"}}); !client.IsForbidden(err) {
		t.Fatalf("create in a terminating namespace: %v", err)
	}
	// The main resource cannot drop spec.finalizers.
	if err := s.Patch(ctx, ns, "", "default", client.MergePatchType, []byte(`{"spec":{"finalizers":null}}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Meta(ns, "", "default"); !ok {
		t.Fatal("namespace removed without finalize")
	}
	if err := s.Get(ctx, ns, "", "default", &u); err != nil {
		t.Fatal(err)
	}
	if err := u.SetField("spec", map[string]any{"finalizers": []string{}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, ns, "", &u, "finalize"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Meta(ns, "", "default"); ok {
		t.Fatal("finalized namespace kept")
	}
}

func TestWatchGone(t *testing.T) {
	s, _, pods, ctx := setup(t)
	if _, err := s.Create(ctx, pods, "default", &obj{ObjectMeta: api.ObjectMeta{Name: "p"}}); err != nil {
		t.Fatal(err)
	}
	s.Expire()
	w, err := s.Watch(ctx, pods, "", client.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if !client.IsGone(ev.Err()) {
		t.Fatalf("want 410, got %s %v", ev.Type, ev.Err())
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("stream continued after ERROR")
	}
}

// TestClientCreateAndGeneration: generateName gets a suffix, Create decodes
// the stored object back, and generation moves only on spec changes.
func TestClientCreateAndGeneration(t *testing.T) {
	s := New(api.Resources())
	c := s.Client()
	ctx := t.Context()
	nsInfo := api.Lookup(api.Resources(), "v1", "namespaces")
	pods := api.Lookup(api.Resources(), "v1", "pods")
	if err := c.Create(ctx, nsInfo, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	p := &api.Pod{ObjectMeta: api.ObjectMeta{GenerateName: "web-"}}
	if err := c.Create(ctx, pods, "default", p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "web-00001" || p.UID == "" || p.Generation != 1 || p.ResourceVersion == "" {
		t.Fatalf("created pod meta %+v: want name web-00001, a uid, generation 1 and a resourceVersion", p.ObjectMeta)
	}
	steps := []struct {
		name    string
		change  func(*api.Pod)
		sub     []string
		wantGen int64
	}{
		{"label only", func(p *api.Pod) { p.Labels = map[string]string{"a": "b"} }, nil, 1},
		{"status only", func(p *api.Pod) { p.Status.PodIP = "10.0.0.1" }, []string{"status"}, 1},
		{"spec", func(p *api.Pod) { p.Spec.Hostname = "h" }, nil, 2},
	}
	for _, st := range steps {
		st.change(p)
		if err := c.Update(ctx, pods, "default", p, st.sub...); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if p.Generation != st.wantGen {
			t.Fatalf("%s: generation %d, want %d", st.name, p.Generation, st.wantGen)
		}
	}
}

// TestClientBinding: a binding sets spec.nodeName once; a second binding
// or a wrong uid is a conflict, a missing pod 404.
func TestClientBinding(t *testing.T) {
	s := New(api.Resources())
	c := s.Client()
	ctx := t.Context()
	nsInfo := api.Lookup(api.Resources(), "v1", "namespaces")
	pods := api.Lookup(api.Resources(), "v1", "pods")
	if err := c.Create(ctx, nsInfo, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"}}
	if err := c.Create(ctx, pods, "default", p); err != nil {
		t.Fatal(err)
	}
	bind := func(name, uid, node string) error {
		path, err := client.ResourcePath(pods, "default", name, "binding")
		if err != nil {
			t.Fatal(err)
		}
		return c.Do(ctx, "POST", path, &api.Binding{ObjectMeta: api.ObjectMeta{Name: name, UID: uid}, Target: api.ObjectReference{Kind: "Node", Name: node}}, nil)
	}
	if err := bind("p", "other", "n1"); !client.IsConflict(err) {
		t.Fatalf("binding with a wrong uid: %v, want a conflict", err)
	}
	if err := bind("p", p.UID, "n1"); err != nil {
		t.Fatal(err)
	}
	var got api.Pod
	if err := c.Get(ctx, pods, "default", "p", &got); err != nil || got.Spec.NodeName != "n1" {
		t.Fatalf("after binding: nodeName %q, err %v", got.Spec.NodeName, err)
	}
	if err := bind("p", p.UID, "n2"); !client.IsConflict(err) {
		t.Fatalf("second binding: %v, want a conflict", err)
	}
	if err := bind("q", "", "n1"); !client.IsNotFound(err) {
		t.Fatalf("binding of a missing pod: %v, want not found", err)
	}
}

// TestWaitFailsAfterTimeout: a condition that never holds fails the test
// (run in a subtest whose failure is observed), one that holds returns.
func TestWaitFailsAfterTimeout(t *testing.T) {
	calls := 0
	Wait(t, "the third call", func() bool { calls++; return calls >= 3 })
	if calls != 3 {
		t.Fatalf("Wait called cond %d times, want 3", calls)
	}
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(ft, "never", func() bool { return false }, 20*time.Millisecond)
	}()
	<-done
	if !ft.failed {
		t.Fatal("Wait returned for a condition that never held")
	}
}

// fatalRecorder records Fatalf and ends the goroutine, as testing does.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}
