package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// fakeCache is an informer cache the test fills by hand; it never changes
// on its own, so it plays a cache that lags behind the controller's
// writes.
type fakeCache struct {
	mu       sync.Mutex
	objs     map[string]api.Object
	handlers []client.EventHandler
}

func newFakeCache() *fakeCache { return &fakeCache{objs: map[string]api.Object{}} }

func (f *fakeCache) AddEventHandler(h client.EventHandler) { f.handlers = append(f.handlers, h) }
func (f *fakeCache) HasSynced() bool                       { return true }

func (f *fakeCache) Get(ns, name string) (api.Object, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objs[ns+"/"+name]
	return o, ok
}

func (f *fakeCache) ByIndex(index, value string) []api.Object {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []api.Object
	for _, o := range f.objs {
		if index == client.NamespaceIndex && o.GetObjectMeta().Namespace == value {
			out = append(out, o)
		}
	}
	return out
}

// put stores obj and tells the handlers, as an informer would.
func (f *fakeCache) put(obj api.Object) {
	key := obj.GetObjectMeta().Namespace + "/" + obj.GetObjectMeta().Name
	f.mu.Lock()
	old, ok := f.objs[key]
	f.objs[key] = obj
	f.mu.Unlock()
	for _, h := range f.handlers {
		if ok {
			h.OnUpdate(old, obj)
		} else {
			h.OnAdd(obj)
		}
	}
}

// fakeClient records writes and fails creates of the names in failCreate.
type fakeClient struct {
	mu         sync.Mutex
	calls      []string
	failCreate map[string]bool
	lastStatus map[string]any
}

func (f *fakeClient) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeClient) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeClient) Create(_ context.Context, _ *api.ResourceInfo, _ string, obj api.Object) error {
	name := obj.GetObjectMeta().Name
	f.record("create " + name)
	if f.failCreate[name] {
		return client.NewAPIError(http.StatusInternalServerError, api.StatusReasonInternalError, "boom")
	}
	return nil
}

// Get is only for a revision name taken, which this fake never answers.
func (f *fakeClient) Get(_ context.Context, info *api.ResourceInfo, _, name string, _ api.Object) error {
	f.record("get " + info.Resource + " " + name)
	return fmt.Errorf("fake: no %s %s", info.Resource, name)
}

func (f *fakeClient) Update(_ context.Context, _ *api.ResourceInfo, _ string, obj api.Object, sub ...string) error {
	f.record(fmt.Sprintf("update %s %v", obj.GetObjectMeta().Name, sub))
	return nil
}

func (f *fakeClient) Delete(_ context.Context, _ *api.ResourceInfo, _, name string, opts client.DeleteOptions) error {
	if opts.Preconditions == nil || opts.Preconditions.UID == "" {
		f.record("delete " + name + " without uid precondition")
		return nil
	}
	f.record("delete " + name)
	return nil
}

func (f *fakeClient) Patch(_ context.Context, _ *api.ResourceInfo, _, name, patchType string, data []byte, _ api.Object, sub ...string) error {
	f.record(fmt.Sprintf("patch %s %v", name, sub))
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if patchType != client.JSONPatchType {
		return fmt.Errorf("unexpected patch type %s", patchType)
	}
	if err := json.Unmarshal(data, &ops); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastStatus = map[string]any{}
	for _, o := range ops {
		f.lastStatus[o.Op+" "+o.Path] = o.Value
	}
	return nil
}

type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *fakeRecorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func newTestController(t *testing.T) (*Controller, *fakeCache, *fakeCache, *fakeClient, *fakeRecorder) {
	t.Helper()
	sets, pods := newFakeCache(), newFakeCache()
	fc := &fakeClient{failCreate: map[string]bool{}}
	rec := &fakeRecorder{}
	ctl := New(Deps{Client: fc, StatefulSets: sets, Pods: pods, Recorder: rec}, Options{})
	ctl.now = func() time.Time { return testNow }
	return ctl, sets, pods, fc, rec
}

func creates(calls []string) []string {
	var out []string
	for _, c := range calls {
		if len(c) > 7 && (c[:7] == "create " || c[:7] == "delete ") {
			out = append(out, c)
		}
	}
	return out
}

func TestSyncStaleCacheNeverCreatesTwice(t *testing.T) {
	ctl, sets, _, fc, rec := newTestController(t)
	sets.put(testSet(3, parallel))
	ctx := context.Background()

	if _, err := ctl.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if got := creates(fc.take()); !slices.Equal(got, []string{"create web-0", "create web-1", "create web-2"}) {
		t.Fatalf("first sync: %v", got)
	}
	// The pod cache has not caught up: nothing is created again.
	if _, err := ctl.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if got := creates(fc.take()); len(got) != 0 {
		t.Fatalf("sync with creates in flight wrote %v", got)
	}
	if len(rec.events) != 3 || rec.events[0] != "Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful" {
		t.Errorf("events %v", rec.events)
	}
}

func TestSyncObservedCreatesUnblock(t *testing.T) {
	ctl, sets, pods, fc, _ := newTestController(t)
	sets.put(testSet(3))
	ctx := context.Background()
	ctl.sync(ctx, "ns/web")
	if got := creates(fc.take()); !slices.Equal(got, []string{"create web-0"}) {
		t.Fatalf("first sync: %v", got)
	}
	// The cache sees web-0, Ready (the handler observes the create).
	rev, _ := revisionName(testSet(3))
	pods.put(mkPod(0, rev, "ready"))
	ctl.sync(ctx, "ns/web")
	if got := creates(fc.take()); !slices.Equal(got, []string{"create web-1"}) {
		t.Fatalf("after web-0 is seen Ready: %v", got)
	}
}

func TestSyncFailedCreateIsRetried(t *testing.T) {
	ctl, sets, _, fc, rec := newTestController(t)
	sets.put(testSet(1))
	fc.failCreate["web-0"] = true
	ctx := context.Background()
	if _, err := ctl.sync(ctx, "ns/web"); err == nil {
		t.Fatal("sync with a failing create returned nil")
	}
	if len(rec.events) != 1 || rec.events[0][:20] != "Warning FailedCreate" {
		t.Errorf("events %v", rec.events)
	}
	fc.take()
	fc.failCreate["web-0"] = false
	if _, err := ctl.sync(ctx, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if got := creates(fc.take()); !slices.Equal(got, []string{"create web-0"}) {
		t.Fatalf("retry after a failed create: %v (a failed create must not stay expected)", got)
	}
}

func TestSyncStaleCacheNeverDeletesTwice(t *testing.T) {
	ctl, sets, pods, fc, _ := newTestController(t)
	set := testSet(1)
	sets.put(set)
	rev, _ := revisionName(set)
	for i := range 3 {
		p := mkPod(i, rev, "ready")
		pods.put(p)
	}
	ctx := context.Background()
	ctl.sync(ctx, "ns/web")
	if got := creates(fc.take()); !slices.Equal(got, []string{"delete web-2"}) {
		t.Fatalf("first sync: %v", got)
	}
	// web-2 still looks alive in the cache: web-1 must not be deleted yet.
	ctl.sync(ctx, "ns/web")
	if got := creates(fc.take()); len(got) != 0 {
		t.Fatalf("sync with a delete in flight wrote %v", got)
	}
	// The cache sees web-2 terminating: the delete is observed, and the
	// plan waits for web-2 to be gone.
	term := mkPod(2, rev, "terminating")
	term.ResourceVersion = "2" // a new version, not a resync
	pods.put(term)
	ctl.sync(ctx, "ns/web")
	if got := creates(fc.take()); len(got) != 0 {
		t.Fatalf("sync with web-2 terminating wrote %v", got)
	}
	pods.mu.Lock()
	delete(pods.objs, "ns/web-2")
	pods.mu.Unlock()
	ctl.sync(ctx, "ns/web")
	if got := creates(fc.take()); !slices.Equal(got, []string{"delete web-1"}) {
		t.Fatalf("after web-2 is gone: %v", got)
	}
}

func TestSyncWritesStatusOnlyOnChange(t *testing.T) {
	ctl, sets, pods, fc, _ := newTestController(t)
	set := testSet(1)
	rev, _ := revisionName(set)
	pods.put(mkPod(0, rev, "ready"))
	sets.put(set)
	ctx := context.Background()
	ctl.sync(ctx, "ns/web")
	calls := fc.take()
	if !slices.Contains(calls, "patch web [status]") {
		t.Fatalf("status not written: %v", calls)
	}
	if fc.lastStatus["test /metadata/uid"] != "set-uid" || fc.lastStatus["add /status/readyReplicas"] != float64(1) ||
		fc.lastStatus["add /status/updateRevision"] != rev {
		t.Errorf("status patch %v", fc.lastStatus)
	}
	// The cache now holds that status: nothing to write.
	withStatus := api.DeepCopy(set)
	withStatus.Status, _ = computeStatus(set, []*api.Pod{mkPod(0, rev, "ready")}, revisions{rev, rev}, testNow)
	sets.put(withStatus)
	ctl.sync(ctx, "ns/web")
	if calls := fc.take(); len(calls) != 0 {
		t.Fatalf("sync of a settled set wrote %v", calls)
	}
}

func TestSyncAdoptsOrphans(t *testing.T) {
	ctl, sets, pods, fc, _ := newTestController(t)
	set := testSet(1)
	rev, _ := revisionName(set)
	sets.put(set)
	orphan := mkPod(0, rev, "ready")
	orphan.OwnerReferences = nil
	pods.put(orphan)
	other := mkPod(0, rev, "ready")
	other.Name, other.OwnerReferences = "web-x", nil // not a name of the set
	pods.put(other)
	ctl.sync(context.Background(), "ns/web")
	calls := fc.take()
	if !slices.Contains(calls, "update web-0 []") || slices.Contains(calls, "update web-x []") {
		t.Fatalf("adoption calls %v, want web-0 adopted and web-x left alone", calls)
	}
	if got := creates(calls); len(got) != 0 {
		t.Fatalf("adopted pod recreated: %v", got)
	}
}

func TestSyncOfDeletedSetForgets(t *testing.T) {
	ctl, sets, _, fc, _ := newTestController(t)
	sets.put(testSet(1))
	ctl.sync(context.Background(), "ns/web")
	fc.take()
	sets.mu.Lock()
	delete(sets.objs, "ns/web")
	sets.mu.Unlock()
	if _, err := ctl.sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := ctl.exp.Satisfied("ns/web"); !ok {
		t.Error("expectations of a deleted set kept")
	}
	if calls := fc.take(); len(calls) != 0 {
		t.Errorf("sync of a deleted set wrote %v", calls)
	}
}
