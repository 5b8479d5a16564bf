package namespace

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/controller/gc"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

func TestToDelete(t *testing.T) {
	now := &api.Time{Time: time.Unix(1, 0)}
	tests := []struct {
		name string
		objs []reflector.Meta
		want []string
	}{
		{name: "empty"},
		{name: "all live", objs: []reflector.Meta{{Name: "a"}, {Name: "b"}}, want: []string{"a", "b"}},
		{name: "terminating ones are waited for", objs: []reflector.Meta{{Name: "a", DeletionTimestamp: now}, {Name: "b"}}, want: []string{"b"}},
		{name: "all terminating", objs: []reflector.Meta{{Name: "a", DeletionTimestamp: now}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range toDelete(tc.objs) {
				got = append(got, m.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("toDelete = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFinalizedSpec(t *testing.T) {
	tests := []struct {
		name    string
		spec    map[string]any
		want    map[string]any
		changed bool
	}{
		{name: "kubernetes finalizer emptied", spec: map[string]any{"finalizers": []any{"kubernetes"}}, want: map[string]any{"finalizers": []any{}}, changed: true},
		{name: "every finalizer emptied", spec: map[string]any{"finalizers": []any{"kubernetes", "x"}, "other": 1.0}, want: map[string]any{"finalizers": []any{}, "other": 1.0}, changed: true},
		{name: "already empty", spec: map[string]any{"finalizers": []any{}}, want: map[string]any{"finalizers": []any{}}},
		{name: "no spec", spec: map[string]any{}, want: map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.spec)
			got, changed := finalizedSpec(tc.spec)
			if changed != tc.changed || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("finalizedSpec = %v, %v; want %v, %v", got, changed, tc.want, tc.changed)
			}
			if len(tc.spec) != before {
				t.Fatal("finalizedSpec modified its input")
			}
		})
	}
}

type testObject struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

type env struct {
	t      *testing.T
	srv    *fakeapi.Server
	res    []*api.ResourceInfo
	ns     *api.ResourceInfo
	pods   *api.ResourceInfo
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newEnv(t *testing.T) *env {
	res := fakeapi.Resources()
	e := &env{t: t, res: res, srv: fakeapi.New(res), ns: fakeapi.Find(res, "", "namespaces"), pods: fakeapi.Find(res, "", "pods")}
	e.ctx, e.cancel = context.WithCancel(t.Context())
	return e
}

func (e *env) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// start runs the namespace controller (and the collector when withGC).
func (e *env) start(withGC bool) {
	c := New(Deps{Client: e.srv, Log: e.logger()}, Options{Resources: e.res})
	c.queue = workqueue.New[string](5*time.Millisecond, time.Second)
	c.reflectorBackoff = 10 * time.Millisecond
	e.wg.Go(func() {
		if err := c.Run(e.ctx); err != nil {
			e.t.Errorf("namespace Run: %v", err)
		}
	})
	if withGC {
		g := gc.New(gc.Deps{Client: e.srv, Log: e.logger()}, gc.Options{Resources: e.res})
		e.wg.Go(func() {
			if err := g.Run(e.ctx); err != nil {
				e.t.Errorf("gc Run: %v", err)
			}
		})
	}
}

func (e *env) stop() {
	e.cancel()
	e.wg.Wait()
}

func (e *env) create(info *api.ResourceInfo, ns, name string, mutate ...func(*api.ObjectMeta)) string {
	e.t.Helper()
	obj := &testObject{ObjectMeta: api.ObjectMeta{Name: name}}
	for _, m := range mutate {
		m(&obj.ObjectMeta)
	}
	uid, err := e.srv.Create(e.ctx, info, ns, obj)
	if err != nil {
		e.t.Fatalf("create %s %s/%s: %v", info.Resource, ns, name, err)
	}
	return uid
}

func (e *env) exists(info *api.ResourceInfo, ns, name string) bool {
	_, ok := e.srv.Meta(info, ns, name)
	return ok
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			var acts []string
			for _, a := range e.srv.Actions() {
				acts = append(acts, a.String())
			}
			e.t.Fatalf("timed out waiting for %s; history:\n%s\nactions:\n%s", what,
				strings.Join(e.srv.History(), "\n"), strings.Join(acts, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// finalizes counts the finalize calls for a namespace.
func (e *env) finalizes(name string) int {
	n := 0
	for _, a := range e.srv.Actions() {
		if a.Verb == "update" && a.Subresource == "finalize" && a.Name == name && a.Err == nil {
			n++
		}
	}
	return n
}

func TestEmptiesAndFinalizes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		defer e.stop()
		svc := fakeapi.Find(e.res, "", "services")
		deploy := fakeapi.Find(e.res, "apps", "deployments")
		slices := fakeapi.Find(e.res, "discovery.k8s.io", "endpointslices")
		e.create(e.ns, "", "team")
		e.create(e.ns, "", "keep")
		for _, name := range []string{"p1", "p2", "p3"} {
			e.create(e.pods, "team", name)
		}
		e.create(svc, "team", "web")
		e.create(deploy, "team", "web")
		e.create(slices, "team", "web-abc")
		e.create(e.pods, "keep", "p1")
		e.start(false)
		synctest.Wait()
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, a := range e.srv.Actions() {
			if a.Verb != "create" {
				t.Fatalf("controller acted on Active namespaces: %v", a)
			}
		}

		if err := e.srv.Delete(e.ctx, e.ns, "", "team", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitFor("namespace team to be removed", func() bool { return !e.exists(e.ns, "", "team") })

		for _, a := range e.srv.Actions() {
			if a.Verb == "delete" && a.Namespace == "team" && a.Policy != client.DeletePropagationBackground {
				t.Fatalf("content deleted with policy %q", a.Policy)
			}
			if a.Verb == "delete" && a.Namespace == "keep" {
				t.Fatalf("controller deleted from another namespace: %v", a)
			}
		}
		for _, o := range []struct {
			info *api.ResourceInfo
			name string
		}{{e.pods, "p1"}, {e.pods, "p2"}, {svc, "web"}, {deploy, "web"}, {slices, "web-abc"}} {
			if e.exists(o.info, "team", o.name) {
				t.Fatalf("%s %s survived its namespace", o.info.Resource, o.name)
			}
		}
		if !e.exists(e.ns, "", "keep") || !e.exists(e.pods, "keep", "p1") {
			t.Fatal("another namespace was touched")
		}
		if n := e.finalizes("team"); n != 1 {
			t.Fatalf("finalize called %d times, want 1", n)
		}
	})
}

func TestWaitsForTerminatingContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		defer e.stop()
		e.create(e.ns, "", "team")
		e.create(e.pods, "team", "held", func(m *api.ObjectMeta) { m.Finalizers = []string{"example.com/hold"} })
		e.create(e.pods, "team", "free")
		// Deleted before the controller starts: found by the first list.
		if err := e.srv.Delete(e.ctx, e.ns, "", "team", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if m, _ := e.srv.Meta(e.ns, "", "team"); m.DeletionTimestamp == nil {
			t.Fatal("fake did not mark the namespace")
		}
		e.start(false)
		e.waitFor("the free pod to go and the held one to be marked", func() bool {
			m, ok := e.srv.Meta(e.pods, "team", "held")
			return !e.exists(e.pods, "team", "free") && ok && m.DeletionTimestamp != nil
		})
		time.Sleep(5 * time.Minute) // many back-off rounds
		synctest.Wait()
		if !e.exists(e.ns, "", "team") || e.finalizes("team") != 0 {
			t.Fatal("namespace finalized while content remained")
		}
		deletes := 0
		for _, a := range e.srv.Actions() {
			if a.Verb == "delete" && a.Name == "held" {
				deletes++
			}
		}
		if deletes != 1 {
			t.Fatalf("terminating pod deleted %d times, want once", deletes)
		}

		// Whoever owns the finalizer lets go.
		if err := e.srv.Patch(e.ctx, e.pods, "team", "held", client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), nil); err != nil {
			t.Fatal(err)
		}
		e.waitFor("namespace team to be removed", func() bool { return !e.exists(e.ns, "", "team") })
	})
}

func TestFinalizeConflictRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		defer e.stop()
		e.create(e.ns, "", "team")
		var mu sync.Mutex
		conflicts := 0
		e.srv.SetIntercept(func(a fakeapi.Action) error {
			mu.Lock()
			defer mu.Unlock()
			if a.Subresource == "finalize" && conflicts < 2 {
				conflicts++
				return client.NewAPIError(409, api.StatusReasonConflict, "the object has been modified")
			}
			return nil
		})
		e.start(false)
		synctest.Wait()
		if err := e.srv.Delete(e.ctx, e.ns, "", "team", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitFor("namespace team to be removed", func() bool { return !e.exists(e.ns, "", "team") })
		mu.Lock()
		defer mu.Unlock()
		if conflicts != 2 {
			t.Fatalf("injected %d conflicts, want 2", conflicts)
		}
	})
}

func TestWithGarbageCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		defer e.stop()
		deploy := fakeapi.Find(e.res, "apps", "deployments")
		rs := fakeapi.Find(e.res, "apps", "replicasets")
		e.create(e.ns, "", "team")
		dUID := e.create(deploy, "team", "web")
		block := true
		ref := func(info *api.ResourceInfo, name, uid string) func(*api.ObjectMeta) {
			return func(m *api.ObjectMeta) {
				m.OwnerReferences = []api.OwnerReference{{APIVersion: info.GroupVersion(), Kind: info.Kind, Name: name, UID: uid, BlockOwnerDeletion: &block}}
			}
		}
		rsUID := e.create(rs, "team", "web-1", ref(deploy, "web", dUID))
		e.create(e.pods, "team", "web-1-a", ref(rs, "web-1", rsUID))
		e.start(true)
		synctest.Wait()
		// A foreground delete in flight when the namespace goes.
		if err := e.srv.Delete(e.ctx, deploy, "team", "web", client.DeleteOptions{PropagationPolicy: client.DeletePropagationForeground}); err != nil {
			t.Fatal(err)
		}
		if err := e.srv.Delete(e.ctx, e.ns, "", "team", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitFor("namespace team to be removed", func() bool { return !e.exists(e.ns, "", "team") })
		if e.srv.Len() != 0 {
			t.Fatalf("%d objects left:\n%s", e.srv.Len(), strings.Join(e.srv.History(), "\n"))
		}
	})
}

func TestRunWithoutNamespacesResource(t *testing.T) {
	c := New(Deps{Client: fakeapi.New(nil)}, Options{Resources: []*api.ResourceInfo{{Version: "v1", Resource: "pods", Namespaced: true}}})
	if err := c.Run(t.Context()); err != ErrNoNamespaces {
		t.Fatalf("Run = %v, want ErrNoNamespaces", err)
	}
}
