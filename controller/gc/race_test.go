package gc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// laggingAPI is the fake server with the watch events of chosen resources
// held back until released: the collector's graph then lags the store, as
// it does for a moment after every write on a real server.
type laggingAPI struct {
	*fakeapi.Server
	mu    sync.Mutex
	gates map[string]chan struct{} // resourceKey -> closed on release
	// failLists, when set, fails every List of that resource.
	failLists *api.ResourceInfo
	// expireContinues: that many list requests with a continue token get
	// 410 Gone, as an expired token does.
	expireContinues int
	lists           int // List calls so far
}

// List counts calls and fails those of failLists.
func (l *laggingAPI) List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error {
	l.mu.Lock()
	l.lists++
	fail := l.failLists != nil && resourceKey(l.failLists) == resourceKey(info)
	expire := opts.Continue != "" && l.expireContinues > 0
	if expire {
		l.expireContinues--
	}
	l.mu.Unlock()
	if expire {
		return client.NewAPIError(410, api.StatusReasonExpired, "the provided continue parameter is too old")
	}
	if fail {
		return client.NewAPIError(500, api.StatusReasonInternalError, "injected list failure")
	}
	return l.Server.List(ctx, info, ns, opts, into)
}

func (l *laggingAPI) setFailLists(info *api.ResourceInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLists = info
}

func (l *laggingAPI) listCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lists
}

func newLaggingAPI(s *fakeapi.Server) *laggingAPI {
	return &laggingAPI{Server: s, gates: map[string]chan struct{}{}}
}

// hold delays every later watch event of info until release(info).
func (l *laggingAPI) hold(info *api.ResourceInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gates[resourceKey(info)] = make(chan struct{})
}

func (l *laggingAPI) release(info *api.ResourceInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g := l.gates[resourceKey(info)]; g != nil {
		close(g)
		delete(l.gates, resourceKey(info))
	}
}

func (l *laggingAPI) gate(info *api.ResourceInfo) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gates[resourceKey(info)]
}

// Watch forwards the fake's events in order, each one waiting for its
// resource's gate.
func (l *laggingAPI) Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions) (*client.Watcher, error) {
	inner, err := l.Server.Watch(ctx, info, ns, opts)
	if err != nil {
		return nil, err
	}
	return client.NewWatcher(ctx, func(ctx context.Context, send func(client.Event) bool) error {
		defer inner.Stop()
		for ev := range inner.ResultChan() {
			if g := l.gate(info); g != nil {
				select {
				case <-g:
				case <-ctx.Done():
					return nil
				}
			}
			if !send(ev) {
				return nil
			}
		}
		return inner.Err()
	}), nil
}

// startLagging runs the collector against a laggingAPI.
func (e *env) startLagging() *laggingAPI {
	l := newLaggingAPI(e.srv)
	e.startWith(l)
	return l
}

// createHeld creates an object that holds finalizers.
func (e *env) createHeld(info *api.ResourceInfo, ns, name string, finalizers []string, owners ...api.OwnerReference) string {
	e.t.Helper()
	uid, err := e.srv.Create(e.ctx, info, ns, &testObject{ObjectMeta: api.ObjectMeta{Name: name, OwnerReferences: owners, Finalizers: finalizers}})
	if err != nil {
		e.t.Fatalf("create %s %s: %v", info.Resource, name, err)
	}
	return uid
}

const testHold = "test.skiff.dev/hold"

// lateCase is an owner and one dependent whose watch events reach the
// collector only after the owner's deletion has been processed.
type lateCase struct {
	name        string
	owner       func(e *env) *api.ResourceInfo
	ownerNS     string
	dependent   func(e *env) *api.ResourceInfo
	dependentNS string
}

// histKey is how the fake's history names an object.
func histKey(info *api.ResourceInfo, ns, name string) string {
	return info.Group + "/" + info.Resource + " " + ns + "/" + name
}

func lateCases() []lateCase {
	return []lateCase{
		{
			name:  "namespaced owner, pod dependent",
			owner: func(e *env) *api.ResourceInfo { return e.rs }, ownerNS: "default",
			dependent: func(e *env) *api.ResourceInfo { return e.pods }, dependentNS: "default",
		},
		{
			name:  "namespaced owner, service dependent",
			owner: func(e *env) *api.ResourceInfo { return e.deploy }, ownerNS: "default",
			dependent: func(e *env) *api.ResourceInfo { return e.svc }, dependentNS: "default",
		},
		{
			name:  "cluster-scoped owner, namespaced dependent",
			owner: func(e *env) *api.ResourceInfo { return fakeapi.Find(e.res, "", "nodes") }, ownerNS: "",
			dependent: func(e *env) *api.ResourceInfo { return e.pods }, dependentNS: "default",
		},
		{
			name:  "cluster-scoped owner, cluster-scoped dependent",
			owner: func(e *env) *api.ResourceInfo { return fakeapi.Find(e.res, "", "nodes") }, ownerNS: "",
			dependent: func(e *env) *api.ResourceInfo { return e.ipad }, dependentNS: "",
		},
	}
}

// TestOrphanDependentSeenLate: an owner deleted with Orphan right after a
// dependent was created, before the collector's watch delivered that
// dependent. The dependent must be orphaned, never collected.
func TestOrphanDependentSeenLate(t *testing.T) {
	for _, tc := range lateCases() {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				oInfo, dInfo := tc.owner(e), tc.dependent(e)
				oUID := e.create(oInfo, tc.ownerNS, "owner")
				l := e.startLagging()
				defer e.stop()
				synctest.Wait()

				l.hold(dInfo)
				e.create(dInfo, tc.dependentNS, "child", ownerRef(oInfo, "owner", oUID, true))
				e.delete(oInfo, tc.ownerNS, "owner", client.DeletePropagationOrphan)
				e.waitFor("the orphaning owner to be deleted", func() bool { return !e.exists(oInfo, tc.ownerNS, "owner") })
				e.settle()
				l.release(dInfo)
				e.settle()

				m, ok := e.srv.Meta(dInfo, tc.dependentNS, "child")
				if !ok {
					t.Fatalf("the dependent of an owner deleted with Orphan was deleted; actions:\n%s", actionsString(e.srv.Actions()))
				}
				if len(m.OwnerReferences) != 0 {
					t.Fatalf("dependent still refers to its deleted owner: %+v", m.OwnerReferences)
				}
				// A worker may have read the child before the orphaning
				// patch and decided on that version once the owner was
				// gone: its delete carries that version as a precondition,
				// so the server refuses it (409) and the next sync decides
				// again. Any delete that was not refused so is a bug.
				for _, d := range e.deletesOf("child") {
					if !client.IsConflict(d.Err) {
						t.Fatalf("collector sent a delete for the orphan that the server did not refuse as stale: %v (err %v)", d, d.Err)
					}
				}
				h := e.srv.History()
				gone := slices.Index(h, "DELETED "+histKey(oInfo, tc.ownerNS, "owner"))
				orphaned := slices.Index(h, "MODIFIED "+histKey(dInfo, tc.dependentNS, "child"))
				if gone < 0 || orphaned < 0 || orphaned > gone {
					t.Fatalf("the dependent was not orphaned before its owner went away:\n%s", strings.Join(h, "\n"))
				}
			})
		})
	}
}

// TestForegroundDependentSeenLate: an owner deleted with Foreground right
// after a blocking dependent was created, before the collector's watch
// delivered it. The owner must wait, marked, while the dependent exists.
func TestForegroundDependentSeenLate(t *testing.T) {
	for _, tc := range lateCases() {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				oInfo, dInfo := tc.owner(e), tc.dependent(e)
				oUID := e.create(oInfo, tc.ownerNS, "owner")
				l := e.startLagging()
				defer e.stop()
				synctest.Wait()

				l.hold(dInfo)
				// The finalizer keeps the dependent, marked, after the
				// collector deletes it: the owner must wait all along.
				e.createHeld(dInfo, tc.dependentNS, "child", []string{testHold}, ownerRef(oInfo, "owner", oUID, true))
				e.delete(oInfo, tc.ownerNS, "owner", client.DeletePropagationForeground)
				e.settle()

				m, ok := e.srv.Meta(oInfo, tc.ownerNS, "owner")
				if !ok {
					t.Fatalf("the owner went before its blocking dependent; actions:\n%s", actionsString(e.srv.Actions()))
				}
				if m.DeletionTimestamp == nil || !slices.Contains(m.Finalizers, FinalizerForeground) {
					t.Fatalf("owner: deletionTimestamp %v finalizers %v", m.DeletionTimestamp, m.Finalizers)
				}
				dm, ok := e.srv.Meta(dInfo, tc.dependentNS, "child")
				if !ok || dm.DeletionTimestamp == nil {
					t.Fatalf("the blocking dependent was not deleted (exists %v)", ok)
				}
				if ds := e.deletesOf("child"); len(ds) == 0 || ds[0].Policy != client.DeletePropagationBackground {
					t.Fatalf("deletes of the dependent: %v", ds)
				}

				// The dependent goes; then, and only then, the owner.
				l.release(dInfo)
				if err := e.srv.Patch(e.ctx, dInfo, tc.dependentNS, "child", client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), nil); err != nil {
					t.Fatal(err)
				}
				e.waitFor("the owner to be deleted", func() bool { return !e.exists(oInfo, tc.ownerNS, "owner") })
				h := e.srv.History()
				childGone := slices.Index(h, "DELETED "+histKey(dInfo, tc.dependentNS, "child"))
				ownerGone := slices.Index(h, "DELETED "+histKey(oInfo, tc.ownerNS, "owner"))
				if childGone < 0 || ownerGone < 0 || childGone > ownerGone {
					t.Fatalf("the owner went before its dependent:\n%s", strings.Join(h, "\n"))
				}
			})
		})
	}
}

// TestForegroundNonBlockingDependentSeenLate: a dependent that does not
// block its owner is still collected, even if the owner is gone first.
func TestForegroundNonBlockingDependentSeenLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		oUID := e.create(e.rs, "default", "owner")
		l := e.startLagging()
		defer e.stop()
		synctest.Wait()

		l.hold(e.pods)
		e.create(e.pods, "default", "child", ownerRef(e.rs, "owner", oUID, false))
		e.delete(e.rs, "default", "owner", client.DeletePropagationForeground)
		e.waitFor("the owner to be deleted", func() bool { return !e.exists(e.rs, "default", "owner") })
		l.release(e.pods)
		e.waitFor("the non-blocking dependent to be collected", func() bool { return !e.exists(e.pods, "default", "child") })
	})
}

// TestBackgroundOwnerSeenLate: a dependent whose owner the graph has not
// seen yet is kept, because owners are looked up live before any delete.
func TestBackgroundOwnerSeenLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		l := e.startLagging()
		defer e.stop()
		synctest.Wait()

		l.hold(e.rs)
		oUID := e.create(e.rs, "default", "owner")
		e.create(e.pods, "default", "child", ownerRef(e.rs, "owner", oUID, true))
		e.settle()
		if !e.exists(e.pods, "default", "child") || len(e.deletesOf("child")) != 0 {
			t.Fatalf("a dependent of a live owner the graph had not seen was deleted; actions:\n%s", actionsString(e.srv.Actions()))
		}
		l.release(e.rs)
		e.settle()
		if !e.exists(e.pods, "default", "child") {
			t.Fatal("dependent of a live owner deleted after the owner was seen")
		}

		// Once the owner really goes, the dependent follows.
		e.delete(e.rs, "default", "owner", client.DeletePropagationBackground)
		e.waitFor("the dependent to be collected", func() bool { return !e.exists(e.pods, "default", "child") })
	})
}

// TestConfirmationFailureKeepsFinalizer: when the live list that confirms
// "no dependents left" fails, the finalizer stays until it succeeds.
func TestConfirmationFailureKeepsFinalizer(t *testing.T) {
	for _, policy := range []string{client.DeletePropagationOrphan, client.DeletePropagationForeground} {
		t.Run(policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				oUID := e.create(e.rs, "default", "owner")
				l := e.startLagging()
				defer e.stop()
				synctest.Wait()

				l.hold(e.svc)
				e.create(e.svc, "default", "child", ownerRef(e.rs, "owner", oUID, true))
				l.setFailLists(e.svc)
				before := l.listCalls()
				e.delete(e.rs, "default", "owner", policy)
				e.settle()
				if !e.exists(e.rs, "default", "owner") {
					t.Fatal("owner deleted although its dependents could not be confirmed")
				}
				if n := l.listCalls() - before; n < 2 {
					t.Fatalf("%d live lists after the deletion, want retries", n)
				}
				l.setFailLists(nil)
				// The dependent is found by the live list, though its
				// events are still held.
				e.waitFor("the dependent to be orphaned or deleted", func() bool {
					m, ok := e.srv.Meta(e.svc, "default", "child")
					return !ok || len(m.OwnerReferences) == 0
				})
				l.release(e.svc)
				e.waitFor("the owner to be deleted", func() bool { return !e.exists(e.rs, "default", "owner") })
				e.settle()
				m, ok := e.srv.Meta(e.svc, "default", "child")
				switch policy {
				case client.DeletePropagationOrphan:
					if !ok || len(m.OwnerReferences) != 0 {
						t.Fatalf("orphan: exists %v, owner references %+v", ok, m.OwnerReferences)
					}
				default:
					if ok {
						t.Fatal("foreground: the dependent outlived its owner")
					}
				}
			})
		})
	}
}

// TestNoLiveListWhileGraphShowsBlockers: the live confirmation costs lists
// only when the graph says the owner is done.
func TestNoLiveListWhileGraphShowsBlockers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		oUID := e.create(e.rs, "default", "owner")
		e.createHeld(e.pods, "default", "child", []string{testHold}, ownerRef(e.rs, "owner", oUID, true))
		l := e.startLagging()
		defer e.stop()
		synctest.Wait()

		before := l.listCalls()
		e.delete(e.rs, "default", "owner", client.DeletePropagationForeground)
		e.settle()
		if n := l.listCalls() - before; n != 0 {
			t.Fatalf("%d lists while a known dependent blocks the owner", n)
		}
		if !e.exists(e.rs, "default", "owner") {
			t.Fatal("owner gone while its dependent exists")
		}
		if err := e.srv.Patch(e.ctx, e.pods, "default", "child", client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), nil); err != nil {
			t.Fatal(err)
		}
		e.waitFor("the owner to be deleted", func() bool { return !e.exists(e.rs, "default", "owner") })
		// One confirmation: the namespaced resources of the owner's namespace.
		if n, want := l.listCalls()-before, namespacedCount(e.res); n != want {
			t.Fatalf("%d lists to confirm, want %d (one per namespaced resource)", n, want)
		}
	})
}

func namespacedCount(res []*api.ResourceInfo) int {
	n := 0
	for _, r := range res {
		if r.Namespaced {
			n++
		}
	}
	return n
}

// TestConfirmationPagesThroughLists: the live list reads every page, and
// starts over when a continue token expires.
func TestConfirmationPagesThroughLists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		oUID := e.create(e.rs, "default", "owner")
		for i := range listPageSize + 20 {
			e.create(e.pods, "default", fmt.Sprintf("bystander-%04d", i))
		}
		l := e.startLagging()
		defer e.stop()
		synctest.Wait()

		l.hold(e.pods)
		// Sorted after every bystander: on the second page.
		e.create(e.pods, "default", "zz-child", ownerRef(e.rs, "owner", oUID, true))
		l.mu.Lock()
		l.expireContinues = 2
		l.mu.Unlock()
		e.delete(e.rs, "default", "owner", client.DeletePropagationOrphan)
		e.waitFor("the owner to be deleted", func() bool { return !e.exists(e.rs, "default", "owner") })
		l.release(e.pods)
		e.settle()
		m, ok := e.srv.Meta(e.pods, "default", "zz-child")
		if !ok || len(m.OwnerReferences) != 0 {
			t.Fatalf("dependent on the second page: exists %v, owner references %+v", ok, m.OwnerReferences)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.expireContinues != 0 {
			t.Fatalf("%d expired continue tokens not requested", l.expireContinues)
		}
	})
}
