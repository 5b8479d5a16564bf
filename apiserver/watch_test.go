package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
)

func TestWatchInitialThenLive(t *testing.T) {
	e := newEnv(t)
	e.createWidget("a", nil, nil)
	e.createWidget("b", nil, nil)
	for _, rv := range []string{"", "&resourceVersion=0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			e.t = t
			w := e.watch(widgetsPath + "?watch=true" + rv)
			for _, want := range []string{"a", "b"} {
				ev := w.next(false)
				if ev.Type != "ADDED" || ev.meta(t).Name != want {
					t.Fatalf("initial event %s %s, want ADDED %s", ev.Type, ev.meta(t).Name, want)
				}
			}
			w.stop()
		})
	}
	e.t = t
	w := e.watch(widgetsPath + "?watch=1")
	w.next(false)
	w.next(false)
	c := e.createWidget("c", nil, nil)
	ev := w.next(false)
	if ev.Type != "ADDED" || ev.meta(t).Name != "c" || ev.meta(t).ResourceVersion != c.ResourceVersion {
		t.Fatalf("live add: %s %s", ev.Type, ev.Object)
	}
	e.must(200, "PATCH", widgetsPath+"/c", `{"spec":{"size":4}}`, "Content-Type: application/merge-patch+json")
	ev = w.next(false)
	if ev.Type != "MODIFIED" || ev.meta(t).Name != "c" {
		t.Fatalf("modify: %s %s", ev.Type, ev.Object)
	}
	e.must(200, "DELETE", widgetsPath+"/c", nil)
	ev = w.next(false)
	cur, _ := e.store.Revision(t.Context())
	if ev.Type != "DELETED" || ev.meta(t).Name != "c" || ev.meta(t).ResourceVersion != strconv.FormatInt(cur, 10) {
		t.Fatalf("delete: %s %s (store rev %d)", ev.Type, ev.Object, cur)
	}
	// The event object is the full object.
	var obj widget
	if err := json.Unmarshal(ev.Object, &obj); err != nil || obj.Spec.Size != 4 || obj.Kind != "Widget" {
		t.Fatalf("deleted object %s", ev.Object)
	}
	// Other namespaces' objects are not seen on a namespaced watch.
	e.createNS("other")
	e.must(201, "POST", "/apis/example.com/v1/namespaces/other/widgets", `{"metadata":{"name":"o"}}`)
	w.expectNone(200 * time.Millisecond)
}

func TestWatchFromResourceVersion(t *testing.T) {
	e := newEnv(t)
	a := e.createWidget("a", nil, nil)
	e.createWidget("b", nil, nil)
	e.must(200, "PATCH", widgetsPath+"/a", `{"spec":{"size":2}}`, "Content-Type: application/merge-patch+json")
	w := e.watch(widgetsPath + "?watch=true&resourceVersion=" + a.ResourceVersion)
	want := []struct{ typ, name string }{{"ADDED", "b"}, {"MODIFIED", "a"}}
	for _, wv := range want {
		ev := w.next(false)
		if ev.Type != wv.typ || ev.meta(t).Name != wv.name {
			t.Fatalf("event %s %s, want %s %s", ev.Type, ev.meta(t).Name, wv.typ, wv.name)
		}
	}
	w.expectNone(100 * time.Millisecond)
}

func TestWatchBookmarks(t *testing.T) {
	e := newEnv(t)
	e.createWidget("a", nil, nil)
	w := e.watch(widgetsPath + "?watch=true&allowWatchBookmarks=true")
	if ev := w.next(false); ev.Type != "ADDED" {
		t.Fatalf("first event %s", ev.Type)
	}
	ev := w.next(true)
	if ev.Type != "BOOKMARK" {
		t.Fatalf("want BOOKMARK, got %s", ev.Type)
	}
	var bm map[string]any
	if err := json.Unmarshal(ev.Object, &bm); err != nil {
		t.Fatal(err)
	}
	meta, _ := bm["metadata"].(map[string]any)
	cur, _ := e.store.Revision(t.Context())
	if bm["kind"] != "Widget" || bm["apiVersion"] != "example.com/v1" || meta["resourceVersion"] != strconv.FormatInt(cur, 10) || len(bm) != 3 || len(meta) != 1 {
		t.Fatalf("bookmark %s", ev.Object)
	}
	// Without allowWatchBookmarks there are none.
	w2 := e.watch(widgetsPath + "?watch=true")
	w2.next(false)
	timeout := time.After(300 * time.Millisecond)
	for {
		select {
		case ev := <-w2.events:
			t.Fatalf("unexpected %s", ev.Type)
		case <-timeout:
			return
		}
	}
}

// TestWatchCompacted compacts for real: the store keeps the last 5
// revisions, the test writes 20 more, and a watch from before the kept
// history gets ERROR 410 while one from its oldest kept revision resumes.
func TestWatchCompacted(t *testing.T) {
	const history = 5
	bo := testBoltOptions()
	bo.HistorySize = history
	e := newEnvWithStore(t, bo)
	a := e.createWidget("a", nil, nil)
	e.createWidget("b", nil, nil)
	for i := range 20 {
		e.must(200, "PATCH", widgetsPath+"/b", fmt.Sprintf(`{"spec":{"size":%d}}`, i+1), "Content-Type: application/merge-patch+json")
	}
	cur, err := e.store.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	oldestKept := cur - history // the log holds (cur-history, cur]
	cases := []struct {
		name     string
		fromRev  int64
		wantGone bool
	}{
		{"created widget a", mustAtoi(t, a.ResourceVersion), true},
		{"one before the kept history", oldestKept - 1, true},
		{"oldest kept", oldestKept, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			rv := strconv.FormatInt(tc.fromRev, 10)
			w := e.watch(widgetsPath + "?watch=true&resourceVersion=" + rv)
			defer w.stop()
			ev := w.next(false)
			if !tc.wantGone {
				// The first kept revision after fromRev patched b.
				if ev.Type != "MODIFIED" || ev.meta(t).Name != "b" || ev.meta(t).ResourceVersion != strconv.FormatInt(tc.fromRev+1, 10) {
					t.Fatalf("resumed watch: %s %s, want MODIFIED b at %d", ev.Type, ev.Object, tc.fromRev+1)
				}
				return
			}
			if ev.Type != "ERROR" {
				t.Fatalf("want ERROR, got %s %s", ev.Type, ev.Object)
			}
			var st struct {
				Kind    string `json:"kind"`
				Code    int    `json:"code"`
				Reason  string `json:"reason"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(ev.Object, &st); err != nil {
				t.Fatal(err)
			}
			want := "too old resource version: " + rv + " (" + strconv.FormatInt(cur, 10) + ")"
			if st.Kind != "Status" || st.Code != 410 || st.Reason != "Gone" || st.Message != want {
				t.Fatalf("error status %+v, want message %q", st, want)
			}
			if ev, ok := <-w.events; ok {
				t.Fatalf("stream did not end after ERROR: %s %s", ev.Type, ev.Object)
			}
		})
	}
	e.t = t
}

func mustAtoi(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}

func TestWatchSelectorTransitions(t *testing.T) {
	e := newEnv(t)
	e.createWidget("x", map[string]string{"app": "a"}, nil)
	e.createWidget("y", map[string]string{"app": "b"}, nil)
	w := e.watch(widgetsPath + "?watch=true&labelSelector=app%3Da")
	if ev := w.next(false); ev.Type != "ADDED" || ev.meta(t).Name != "x" {
		t.Fatalf("initial %s %s", ev.Type, ev.Object)
	}
	steps := []struct {
		name, patch, typ string
		labels           string
	}{
		{"x", `{"metadata":{"labels":{"app":"b"}}}`, "DELETED", "a"}, // DELETED carries the last matching state
		{"y", `{"metadata":{"labels":{"app":"a"}}}`, "ADDED", "a"},
		{"y", `{"spec":{"size":3}}`, "MODIFIED", "a"},
		{"x", `{"metadata":{"labels":{"app":"a"}}}`, "ADDED", "a"},
	}
	for _, s := range steps {
		r := e.must(200, "PATCH", widgetsPath+"/"+s.name, s.patch, "Content-Type: application/merge-patch+json")
		var after widget
		r.into(t, &after)
		ev := w.next(false)
		m := ev.meta(t)
		if ev.Type != s.typ || m.Name != s.name || m.Labels["app"] != s.labels || m.ResourceVersion != after.ResourceVersion {
			t.Fatalf("after patch of %s: %s %s, want %s", s.name, ev.Type, ev.Object, s.typ)
		}
	}
	// A change to a non-matching object is not sent.
	e.createWidget("z", map[string]string{"app": "c"}, nil)
	w.expectNone(150 * time.Millisecond)
	// Field selector transitions too.
	wf := e.watch(widgetsPath + "?watch=true&fieldSelector=status.phase%3DRunning")
	e.must(200, "PATCH", widgetsPath+"/z/status", `{"status":{"phase":"Running"}}`, "Content-Type: application/merge-patch+json")
	if ev := wf.next(false); ev.Type != "ADDED" || ev.meta(t).Name != "z" {
		t.Fatalf("field ADDED: %s %s", ev.Type, ev.Object)
	}
	e.must(200, "PATCH", widgetsPath+"/z/status", `{"status":{"phase":"Done"}}`, "Content-Type: application/merge-patch+json")
	if ev := wf.next(false); ev.Type != "DELETED" || ev.meta(t).Name != "z" {
		t.Fatalf("field DELETED: %s %s", ev.Type, ev.Object)
	}
}

func TestWatchTimeoutAndHeaders(t *testing.T) {
	e := newEnv(t)
	start := time.Now()
	w := e.watch(widgetsPath + "?watch=true&timeoutSeconds=1")
	if ct := w.res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if te := w.res.TransferEncoding; len(te) == 0 || te[0] != "chunked" {
		if w.res.ProtoMajor == 1 {
			t.Errorf("Transfer-Encoding %v", te)
		}
	}
	select {
	case _, ok := <-w.events:
		if ok {
			t.Fatal("unexpected event")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not end after timeoutSeconds")
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("ended after %v", d)
	}
	e.must(400, "GET", widgetsPath+"?watch=true&resourceVersion=abc", nil)
	r := e.do("GET", widgetsPath+"?watch=true&resourceVersion=999999", nil)
	if r.code != 200 || !strings.Contains(string(r.body), `"type":"ERROR"`) || !strings.Contains(string(r.body), "Too large resource version") {
		t.Fatalf("future rv: %d %s", r.code, r.body)
	}
}

func TestWatchMetricsGauge(t *testing.T) {
	e := newEnv(t)
	w := e.watch(widgetsPath + "?watch=true")
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if gaugeValue(t, e, "apiserver_watchers") == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := gaugeValue(t, e, "apiserver_watchers"); v != 1 {
		t.Fatalf("apiserver_watchers = %v with one watch open", v)
	}
	w.stop()
	deadline = time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && gaugeValue(t, e, "apiserver_watchers") != 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if v := gaugeValue(t, e, "apiserver_watchers"); v != 0 {
		t.Fatalf("apiserver_watchers = %v after the watch ended", v)
	}
}

func gaugeValue(t *testing.T, e *testEnv, name string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// scriptedStore hands out a watch channel the test writes to.
type scriptedStore struct {
	store.Interface
	events chan store.Event
}

func (s *scriptedStore) Watch(ctx context.Context, prefix string, fromRev int64, opts store.WatchOptions) (<-chan store.Event, error) {
	return s.events, nil
}

func TestWatchStoreErrors(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		wantError bool
	}{
		{"too slow ends the stream", store.ErrWatcherTooSlow, false},
		{"compacted mid-stream sends 410", store.ErrCompacted, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := &scriptedStore{events: make(chan store.Event, 4)}
			e := newEnv(t, func(c *Config) {
				ss.Interface = c.Store
				c.Store = ss
			})
			w := e.watch(widgetsPath + "?watch=true&resourceVersion=1")
			raw := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s","namespace":"default","resourceVersion":"7"}}`)
			ss.events <- store.Event{Type: store.EventPut, Revision: 7, KV: store.KeyValue{Key: "/registry/example.com/widgets/default/s", Value: raw}}
			ss.events <- store.Event{Type: store.EventError, Err: tc.err}
			close(ss.events)
			if ev := w.next(false); ev.Type != "ADDED" || ev.meta(t).Name != "s" {
				t.Fatalf("first event %s %s", ev.Type, ev.Object)
			}
			ev, ok := <-w.events
			if tc.wantError {
				if !ok || ev.Type != "ERROR" || !strings.Contains(string(ev.Object), `"code":410`) {
					t.Fatalf("want ERROR 410, got %v %s %s", ok, ev.Type, ev.Object)
				}
				ev, ok = <-w.events
			}
			if ok {
				t.Fatalf("stream continued with %s %s", ev.Type, ev.Object)
			}
		})
	}
}
