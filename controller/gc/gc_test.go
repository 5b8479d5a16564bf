package gc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// testObject is any object with metadata only.
type testObject struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

// env runs a collector against a fake API server inside a synctest bubble.
type env struct {
	t                               *testing.T
	srv                             *fakeapi.Server
	res                             []*api.ResourceInfo
	ns, pods, svc, rs, deploy, ipad *api.ResourceInfo
	ctx                             context.Context
	cancel                          context.CancelFunc
	done                            chan error
}

func newEnv(t *testing.T) *env {
	res := fakeapi.Resources()
	e := &env{
		t: t, res: res, srv: fakeapi.New(res),
		ns:     fakeapi.Find(res, "", "namespaces"),
		pods:   fakeapi.Find(res, "", "pods"),
		svc:    fakeapi.Find(res, "", "services"),
		rs:     fakeapi.Find(res, "apps", "replicasets"),
		deploy: fakeapi.Find(res, "apps", "deployments"),
		ipad:   fakeapi.Find(res, "networking.k8s.io", "ipaddresses"),
	}
	e.ctx, e.cancel = context.WithCancel(t.Context())
	e.create(e.ns, "", "default")
	return e
}

// start runs the collector; stop (registered as cleanup) ends it and
// checks Run's result.
func (e *env) start() *Controller { return e.startWith(e.srv) }

// startWith runs the collector against cl, a view of e.srv.
func (e *env) startWith(cl Client) *Controller {
	logger := slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := New(Deps{Client: cl, Log: logger}, Options{Resources: e.res})
	c.queue = workqueue.New[string](5*time.Millisecond, time.Second)
	c.reflectorBackoff = 10 * time.Millisecond
	e.done = make(chan error, 1)
	go func() { e.done <- c.Run(e.ctx) }()
	return c
}

func (e *env) stop() {
	e.cancel()
	if err := <-e.done; err != nil {
		e.t.Errorf("Run: %v", err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (e *env) create(info *api.ResourceInfo, ns, name string, owners ...api.OwnerReference) string {
	e.t.Helper()
	uid, err := e.srv.Create(e.ctx, info, ns, &testObject{ObjectMeta: api.ObjectMeta{Name: name, OwnerReferences: owners}})
	if err != nil {
		e.t.Fatalf("create %s %s: %v", info.Resource, name, err)
	}
	return uid
}

func (e *env) delete(info *api.ResourceInfo, ns, name, policy string) {
	e.t.Helper()
	if err := e.srv.Delete(e.ctx, info, ns, name, client.DeleteOptions{PropagationPolicy: policy}); err != nil {
		e.t.Fatalf("delete %s %s: %v", info.Resource, name, err)
	}
}

func ownerRef(info *api.ResourceInfo, name, uid string, block bool) api.OwnerReference {
	return api.OwnerReference{APIVersion: info.GroupVersion(), Kind: info.Kind, Name: name, UID: uid, Controller: ptr(true), BlockOwnerDeletion: ptr(block)}
}

func (e *env) exists(info *api.ResourceInfo, ns, name string) bool {
	_, ok := e.srv.Meta(info, ns, name)
	return ok
}

// waitFor lets fake time run until cond holds.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s; history:\n%s\nactions:\n%s", what,
				strings.Join(e.srv.History(), "\n"), actionsString(e.srv.Actions()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle lets the system run long enough for every retry to have happened.
func (e *env) settle() {
	time.Sleep(5 * time.Minute)
	synctest.Wait()
}

func actionsString(as []fakeapi.Action) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(a.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// deletesOf returns the delete actions sent for name.
func (e *env) deletesOf(name string) []fakeapi.Action {
	var out []fakeapi.Action
	for _, a := range e.srv.Actions() {
		if a.Verb == "delete" && a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

// indexOf finds an entry of the server's history.
func (e *env) indexOf(entry string) int {
	e.t.Helper()
	i := slices.Index(e.srv.History(), entry)
	if i < 0 {
		e.t.Fatalf("history has no %q:\n%s", entry, strings.Join(e.srv.History(), "\n"))
	}
	return i
}

func TestBackgroundDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		dUID := e.create(e.deploy, "default", "web")
		rsUID := e.create(e.rs, "default", "web-1", ownerRef(e.deploy, "web", dUID, true))
		e.create(e.pods, "default", "web-1-a", ownerRef(e.rs, "web-1", rsUID, true))
		e.create(e.pods, "default", "web-1-b", ownerRef(e.rs, "web-1", rsUID, false))
		e.create(e.pods, "default", "standalone")
		e.start()
		defer e.stop()
		e.settle()
		if !e.exists(e.rs, "default", "web-1") || !e.exists(e.pods, "default", "web-1-a") {
			t.Fatal("collector deleted objects whose owners exist")
		}

		e.delete(e.deploy, "default", "web", client.DeletePropagationBackground)
		e.waitFor("the replicaset and its pods to be collected", func() bool {
			return !e.exists(e.rs, "default", "web-1") && !e.exists(e.pods, "default", "web-1-a") && !e.exists(e.pods, "default", "web-1-b")
		})
		if !e.exists(e.pods, "default", "standalone") {
			t.Fatal("a pod without owners was deleted")
		}
		for _, name := range []string{"web-1", "web-1-a", "web-1-b"} {
			ds := e.deletesOf(name)
			if len(ds) == 0 || ds[0].Policy != client.DeletePropagationBackground {
				t.Fatalf("deletes of %s: %v", name, ds)
			}
		}
	})
}

func TestLiveOwnerKeepsDependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		a := e.create(e.rs, "default", "a")
		b := e.create(e.rs, "default", "b")
		e.create(e.pods, "default", "shared", ownerRef(e.rs, "a", a, true), ownerRef(e.rs, "b", b, false))
		e.start()
		defer e.stop()

		e.delete(e.rs, "default", "a", "")
		e.waitFor("the dangling reference to be removed", func() bool {
			m, ok := e.srv.Meta(e.pods, "default", "shared")
			return ok && len(m.OwnerReferences) == 1
		})
		m, _ := e.srv.Meta(e.pods, "default", "shared")
		if m.OwnerReferences[0].UID != b {
			t.Fatalf("kept the wrong reference: %+v", m.OwnerReferences)
		}
		e.settle()
		if !e.exists(e.pods, "default", "shared") || len(e.deletesOf("shared")) != 0 {
			t.Fatal("a dependent with a live owner was deleted")
		}
	})
}

func TestForegroundDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		dUID := e.create(e.deploy, "default", "web")
		rsUID := e.create(e.rs, "default", "web-1", ownerRef(e.deploy, "web", dUID, true))
		e.create(e.pods, "default", "web-1-a", ownerRef(e.rs, "web-1", rsUID, true))
		e.create(e.pods, "default", "web-1-b", ownerRef(e.rs, "web-1", rsUID, true))
		e.create(e.svc, "default", "loose", ownerRef(e.deploy, "web", dUID, false))
		e.start()
		defer e.stop()
		synctest.Wait()

		e.delete(e.deploy, "default", "web", client.DeletePropagationForeground)
		e.waitFor("the deployment to be deleted", func() bool { return !e.exists(e.deploy, "default", "web") })

		for _, gone := range []struct {
			info *api.ResourceInfo
			name string
		}{{e.rs, "web-1"}, {e.pods, "web-1-a"}, {e.pods, "web-1-b"}, {e.svc, "loose"}} {
			if e.exists(gone.info, "default", gone.name) {
				t.Fatalf("%s %s outlived its foreground-deleted owner", gone.info.Resource, gone.name)
			}
		}
		// Dependents went first, down the chain.
		rsGone := e.indexOf("DELETED apps/replicasets default/web-1")
		deployGone := e.indexOf("DELETED apps/deployments default/web")
		for _, p := range []string{"web-1-a", "web-1-b"} {
			if e.indexOf("DELETED /pods default/"+p) > rsGone {
				t.Fatalf("pod %s deleted after its replicaset", p)
			}
		}
		if rsGone > deployGone {
			t.Fatal("replicaset deleted after the deployment")
		}
		if ds := e.deletesOf("web-1"); len(ds) == 0 || ds[0].Policy != client.DeletePropagationForeground {
			t.Fatalf("the replicaset (which has dependents) was not deleted in the foreground: %v", ds)
		}
		if ds := e.deletesOf("web-1-a"); len(ds) == 0 || ds[0].Policy != client.DeletePropagationBackground {
			t.Fatalf("leaf pod deleted with %v", ds)
		}
	})
}

func TestForegroundOwnerReleasesSharedDependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		a := e.create(e.rs, "default", "a")
		b := e.create(e.rs, "default", "b")
		e.create(e.pods, "default", "shared", ownerRef(e.rs, "a", a, true), ownerRef(e.rs, "b", b, true))
		e.start()
		defer e.stop()
		synctest.Wait()

		e.delete(e.rs, "default", "a", client.DeletePropagationForeground)
		e.waitFor("the foreground owner to be deleted", func() bool { return !e.exists(e.rs, "default", "a") })
		m, ok := e.srv.Meta(e.pods, "default", "shared")
		if !ok {
			t.Fatal("a dependent with another live owner was deleted")
		}
		if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != b {
			t.Fatalf("owner references = %+v, want only b", m.OwnerReferences)
		}
	})
}

func TestOrphanDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		rsUID := e.create(e.rs, "default", "web-1")
		other := e.create(e.rs, "default", "other")
		e.create(e.pods, "default", "a", ownerRef(e.rs, "web-1", rsUID, true))
		e.create(e.pods, "default", "b", ownerRef(e.rs, "web-1", rsUID, false), ownerRef(e.rs, "other", other, false))
		e.start()
		defer e.stop()
		synctest.Wait()

		e.delete(e.rs, "default", "web-1", client.DeletePropagationOrphan)
		e.waitFor("the orphaning owner to be deleted", func() bool { return !e.exists(e.rs, "default", "web-1") })
		e.settle()
		ma, okA := e.srv.Meta(e.pods, "default", "a")
		mb, okB := e.srv.Meta(e.pods, "default", "b")
		if !okA || !okB {
			t.Fatal("orphaned dependents were deleted")
		}
		if len(ma.OwnerReferences) != 0 || len(mb.OwnerReferences) != 1 || mb.OwnerReferences[0].UID != other {
			t.Fatalf("owner references after orphaning: a %+v, b %+v", ma.OwnerReferences, mb.OwnerReferences)
		}
		gone := e.indexOf("DELETED apps/replicasets default/web-1")
		h := e.srv.History()
		for _, p := range []string{"a", "b"} {
			if i := slices.Index(h, "MODIFIED /pods default/"+p); i < 0 || i > gone {
				t.Fatalf("pod %s was not orphaned before its owner went away:\n%s", p, strings.Join(h, "\n"))
			}
		}
	})
}

func TestOwnersCheckedLiveAtStartup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		// An owner that never existed.
		e.create(e.pods, "default", "ghost-child", ownerRef(e.rs, "ghost", "uid-never", false))
		// An owner deleted and recreated under the same name.
		oldUID := e.create(e.rs, "default", "reborn")
		e.delete(e.rs, "default", "reborn", "")
		newUID := e.create(e.rs, "default", "reborn")
		e.create(e.pods, "default", "old-child", ownerRef(e.rs, "reborn", oldUID, false))
		e.create(e.pods, "default", "new-child", ownerRef(e.rs, "reborn", newUID, false))
		// A cluster-scoped owner of a namespaced dependent.
		nodes := fakeapi.Find(e.res, "", "nodes")
		nodeUID := e.create(nodes, "", "n1")
		e.create(e.pods, "default", "node-child", ownerRef(nodes, "n1", nodeUID, false))
		e.create(e.pods, "default", "gone-node-child", ownerRef(nodes, "n2", "uid-n2", false))
		// Owners the collector cannot resolve: kept.
		e.create(e.pods, "default", "unknown-kind", api.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "uid-w"})
		e.create(e.ipad, "", "10.96.0.10", ownerRef(e.svc, "s", "uid-s", false))

		e.start()
		defer e.stop()
		e.waitFor("dependents of absent owners to be deleted", func() bool {
			return !e.exists(e.pods, "default", "ghost-child") && !e.exists(e.pods, "default", "old-child") &&
				!e.exists(e.pods, "default", "gone-node-child")
		})
		e.settle()
		for _, kept := range []struct {
			info     *api.ResourceInfo
			ns, name string
		}{{e.pods, "default", "new-child"}, {e.pods, "default", "node-child"}, {e.pods, "default", "unknown-kind"}, {e.ipad, "", "10.96.0.10"}} {
			if !e.exists(kept.info, kept.ns, kept.name) || len(e.deletesOf(kept.name)) != 0 {
				t.Errorf("%s %s was deleted", kept.info.Resource, kept.name)
			}
		}
	})
}

func TestRelistAfterCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		rsUID := e.create(e.rs, "default", "web-1")
		e.create(e.pods, "default", "a", ownerRef(e.rs, "web-1", rsUID, false))
		e.start()
		defer e.stop()
		synctest.Wait()

		// The collector misses the owner's deletion event, and the
		// revision it would resume from is compacted away.
		e.srv.PauseWatches()
		e.delete(e.rs, "default", "web-1", "")
		synctest.Wait()
		e.settle()
		if !e.exists(e.pods, "default", "a") {
			t.Fatal("dependent deleted before the collector could know")
		}
		e.srv.Expire()
		e.waitFor("the dependent to be collected after the relist", func() bool { return !e.exists(e.pods, "default", "a") })
	})
}

func TestRetriesConflictsAndFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		rsUID := e.create(e.rs, "default", "web-1")
		e.create(e.pods, "default", "a", ownerRef(e.rs, "web-1", rsUID, true))
		var mu sync.Mutex
		patchConflicts, deleteFailures := 0, 0
		e.srv.SetIntercept(func(a fakeapi.Action) error {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case a.Verb == "patch" && patchConflicts < 3:
				patchConflicts++
				return client.NewAPIError(409, api.StatusReasonConflict, "the object has been modified")
			case a.Verb == "delete" && a.Name == "a" && deleteFailures < 4:
				deleteFailures++
				return client.NewAPIError(500, api.StatusReasonInternalError, "etcdserver: request timed out")
			}
			return nil
		})
		e.start()
		defer e.stop()
		synctest.Wait()

		e.delete(e.rs, "default", "web-1", client.DeletePropagationForeground)
		e.waitFor("the owner to be deleted despite errors", func() bool { return !e.exists(e.rs, "default", "web-1") })
		if e.exists(e.pods, "default", "a") {
			t.Fatal("dependent survived")
		}
		mu.Lock()
		defer mu.Unlock()
		if patchConflicts != 3 || deleteFailures != 4 {
			t.Fatalf("injected %d conflicts and %d failures, want 3 and 4", patchConflicts, deleteFailures)
		}
	})
}

func TestOwnershipCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		aUID := e.create(e.rs, "default", "a")
		bUID := e.create(e.rs, "default", "b", ownerRef(e.rs, "a", aUID, true))
		// Close the cycle: a is owned by b.
		if err := e.srv.Patch(e.ctx, e.rs, "default", "a", client.MergePatchType,
			[]byte(fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":%q,"blockOwnerDeletion":true}]}}`, bUID)), nil); err != nil {
			t.Fatal(err)
		}
		e.start()
		defer e.stop()
		e.settle()
		if !e.exists(e.rs, "default", "a") || !e.exists(e.rs, "default", "b") {
			t.Fatal("a cycle of live owners was collected")
		}
		e.delete(e.rs, "default", "a", client.DeletePropagationForeground)
		e.waitFor("both members of the cycle to be deleted", func() bool {
			return !e.exists(e.rs, "default", "a") && !e.exists(e.rs, "default", "b")
		})
	})
}

func TestRunReturnsBeforeSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		// A resource the server does not serve never syncs.
		res := append(slices.Clone(e.res), &api.ResourceInfo{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true})
		c := New(Deps{Client: e.srv}, Options{Resources: res, Workers: 1})
		done := make(chan error, 1)
		go func() { done <- c.Run(e.ctx) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		default:
		}
		e.cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}

// staleGet hands out the object it read, then, once, changes it in the
// store before returning: the collector's view is then one version behind,
// as when an owner deleted with Orphan removes its reference between the
// collector's read of a dependent and its decision.
type staleGet struct {
	*fakeapi.Server
	armed atomic.Bool
	name  string
	edit  func() error
}

func (s *staleGet) Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error {
	err := s.Server.Get(ctx, info, ns, name, into)
	if err == nil && name == s.name && s.armed.CompareAndSwap(true, false) {
		if eerr := s.edit(); eerr != nil {
			return eerr
		}
	}
	return err
}

func TestDeleteOnlyTheVersionDecidedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		rsUID := e.create(e.rs, "default", "web-1")
		e.create(e.pods, "default", "p", ownerRef(e.rs, "web-1", rsUID, false))
		cl := &staleGet{Server: e.srv, name: "p", edit: func() error {
			return e.srv.Patch(e.ctx, e.pods, "default", "p", client.JSONPatchType,
				[]byte(`[{"op":"remove","path":"/metadata/ownerReferences"}]`), nil)
		}}
		e.startWith(cl)
		defer e.stop()
		e.settle()

		cl.armed.Store(true)
		e.delete(e.rs, "default", "web-1", client.DeletePropagationBackground)
		e.waitFor("the stale read to happen", func() bool { return !cl.armed.Load() })
		e.settle()
		m, ok := e.srv.Meta(e.pods, "default", "p")
		if !ok {
			t.Fatalf("a dependent whose owner reference went between the read and the delete was deleted:\n%s", actionsString(e.srv.Actions()))
		}
		if len(m.OwnerReferences) != 0 {
			t.Fatalf("owner references: %+v", m.OwnerReferences)
		}
		// The collector did decide on the stale view (so the test reached
		// the race); the resourceVersion precondition refused that delete.
		if ds := e.deletesOf("p"); len(ds) == 0 {
			t.Fatal("the collector never tried to delete p: the stale read did not reach a decision")
		}
	})
}
