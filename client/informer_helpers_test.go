package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// typedWidgets is the fixture's widget resource with a New, as informers
// need.
var typedWidgets = &api.ResourceInfo{
	Version: "v1", Resource: "widgets", Kind: "Widget", ListKind: "WidgetList", Namespaced: true,
	New: func() api.Object { return &widget{} },
}

// streamGate wraps a server (the fixture or the real apiserver) to count
// lists and watches, record the resourceVersion each watch starts from,
// hold new watches back, refuse the next watch with a status, and end the
// open watch streams the way a server does (a clean end of the response).
type streamGate struct {
	next http.Handler
	// stripTimeout removes timeoutSeconds from watches: the fixture ends a
	// watch with timeoutSeconds right after its backlog.
	stripTimeout bool

	mu        sync.Mutex
	lists     int
	watchRVs  []string
	active    map[int]context.CancelFunc
	nextID    int
	hold      chan struct{} // non-nil: new watches wait until it is closed
	failWatch int           // non-zero: the next watch gets this code
}

func newStreamGate(next http.Handler, stripTimeout bool) *streamGate {
	return &streamGate{next: next, stripTimeout: stripTimeout, active: map[int]context.CancelFunc{}}
}

func isWatchRequest(req *http.Request) bool {
	return req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true"
}

func (g *streamGate) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/widgets") ||
		req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/leases") {
		if !isWatchRequest(req) {
			g.mu.Lock()
			g.lists++
			g.mu.Unlock()
			g.next.ServeHTTP(w, req)
			return
		}
		g.mu.Lock()
		g.watchRVs = append(g.watchRVs, req.URL.Query().Get("resourceVersion"))
		hold := g.hold
		g.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-req.Context().Done():
				return
			}
		}
		g.mu.Lock()
		code := g.failWatch
		g.failWatch = 0
		g.mu.Unlock()
		if code != 0 {
			writeStatus(w, code, api.StatusReasonGone, "too old resource version (injected)")
			return
		}
		if g.stripTimeout {
			q := req.URL.Query()
			q.Del("timeoutSeconds")
			req.URL.RawQuery = q.Encode()
		}
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		g.mu.Lock()
		id := g.nextID
		g.nextID++
		g.active[id] = cancel
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.active, id)
			g.mu.Unlock()
		}()
		g.next.ServeHTTP(w, req.WithContext(ctx))
		return
	}
	g.next.ServeHTTP(w, req)
}

// holdWatches makes new watches wait until release is called.
func (g *streamGate) holdWatches() (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.hold = ch
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.hold = nil
		g.mu.Unlock()
		close(ch)
	}
}

// dropWatches ends every open watch stream.
func (g *streamGate) dropWatches() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, cancel := range g.active {
		cancel()
	}
}

func (g *streamGate) failNextWatch(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failWatch = code
}

func (g *streamGate) listCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lists
}

func (g *streamGate) watchStarts() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.watchRVs)
}

func (g *streamGate) activeWatches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.active)
}

// startGatedFixture serves the fixture behind a streamGate over HTTPS on
// 127.0.0.1.
func startGatedFixture(t *testing.T) (*fixture, *streamGate, *client.Client) {
	t.Helper()
	f := newFixture(t)
	g := newStreamGate(f, true)
	srv := httptest.NewUnstartedServer(g)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Server: srv.URL, CAPEM: caPEM(srv), Token: fixtureToken})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f, g, c
}

// recorder is an EventHandler that logs calls as "add ns/name@rv",
// "update ns/name@rv->rv" and "delete ns/name@rv", and fails the test when
// calls overlap or arrive after Run returned.
type recorder struct {
	t        *testing.T
	inflight atomic.Int32
	stopped  atomic.Bool // set once Run has returned

	mu    sync.Mutex
	calls []string
	objs  []api.Object // the object of each call (new for updates)
	olds  []api.Object // the old object of updates, nil otherwise
	// syncedAtCall records HasSynced at each call when synced is set.
	synced       func() bool
	syncedAtCall []bool
}

func newRecorder(t *testing.T) *recorder { return &recorder{t: t} }

func objID(o api.Object) string {
	m := o.GetObjectMeta()
	if m.Namespace == "" {
		return m.Name + "@" + m.ResourceVersion
	}
	return m.Namespace + "/" + m.Name + "@" + m.ResourceVersion
}

func (r *recorder) record(call string, old, obj api.Object) {
	if n := r.inflight.Add(1); n != 1 {
		r.t.Errorf("handler calls overlap (%d at once) at %s", n, call)
	}
	defer r.inflight.Add(-1)
	if r.stopped.Load() {
		r.t.Errorf("handler called after Run returned: %s", call)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
	r.objs = append(r.objs, obj)
	r.olds = append(r.olds, old)
	if r.synced != nil {
		r.syncedAtCall = append(r.syncedAtCall, r.synced())
	}
}

func (r *recorder) OnAdd(obj api.Object) { r.record("add "+objID(obj), nil, obj) }
func (r *recorder) OnUpdate(old, obj api.Object) {
	r.record("update "+objID(old)+"->"+strings.SplitN(objID(obj), "@", 2)[1], old, obj)
}
func (r *recorder) OnDelete(obj api.Object) { r.record("delete "+objID(obj), nil, obj) }

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// since returns the calls from index n on.
func (r *recorder) since(n int) []string {
	l := r.log()
	if n > len(l) {
		return nil
	}
	return l[n:]
}

// waitCalls waits until the recorder holds n calls or more.
func (r *recorder) waitCalls(t *testing.T, n int) []string {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d handler calls", n), func() bool { return len(r.log()) >= n })
	return r.log()
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runInformer starts inf.Run and returns a stop func that cancels it,
// waits for Run to return nil, and checks that no informer goroutine is
// left.
func runInformer(t *testing.T, inf *client.Informer, recs ...*recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	runner := make(chan string, 1)
	go func() {
		runner <- goroutineID()
		done <- inf.Run(ctx)
	}()
	runID := <-runner
	ptr := fmt.Sprintf("%p", inf)
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after ctx ended")
		}
		for _, r := range recs {
			r.stopped.Store(true)
		}
		// A goroutine that has signalled its end may still be returning:
		// allow a moment, as goleak does.
		deadline := time.Now().Add(2 * time.Second)
		for leaked := informerGoroutines(runID, ptr); leaked != ""; leaked = informerGoroutines(runID, ptr) {
			if time.Now().After(deadline) {
				t.Errorf("informer goroutines left after Run returned:\n%s", leaked)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Cleanup(stop)
	return stop
}

// goroutineID is the caller's goroutine number, as stacks print it.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// informerGoroutines returns the stacks of goroutines running informer
// code, or a Watcher that the informer run by goroutine runID started.
// Only goroutines working for inf (its pointer is in their frames' receiver
// arguments) count, so informers that a server runs in the same process
// are not mistaken for leaks.
func informerGoroutines(runID, inf string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "informerGoroutines") {
			continue
		}
		if strings.Contains(g, "client.(*Informer).") && strings.Contains(g, "("+inf) ||
			strings.Contains(g, "client.NewWatcher in goroutine "+runID+"\n") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func sortedIDs(objs []api.Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, objID(o))
	}
	slices.Sort(out)
	return out
}
