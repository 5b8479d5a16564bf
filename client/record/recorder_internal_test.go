package record

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// fakeWriter keeps Events in a map, as the server would, and fails calls
// on demand.
type fakeWriter struct {
	mu      sync.Mutex
	events  map[string]*api.Event // namespace/name
	calls   []string
	failing []error // returned (and consumed) by the next calls, in order
}

func newFakeWriter() *fakeWriter { return &fakeWriter{events: map[string]*api.Event{}} }

func (f *fakeWriter) nextErr() error {
	if len(f.failing) == 0 {
		return nil
	}
	err := f.failing[0]
	f.failing = f.failing[1:]
	return err
}

func (f *fakeWriter) Create(_ context.Context, _ *api.ResourceInfo, ns string, obj api.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := obj.(*api.Event)
	f.calls = append(f.calls, "create "+ev.Name)
	if err := f.nextErr(); err != nil {
		return err
	}
	key := ns + "/" + ev.Name
	if _, ok := f.events[key]; ok {
		return client.NewAPIError(http.StatusConflict, api.StatusReasonAlreadyExists, "exists")
	}
	cp := *ev
	f.events[key] = &cp
	return nil
}

func (f *fakeWriter) Patch(_ context.Context, _ *api.ResourceInfo, ns, name, patchType string, data []byte, _ api.Object, _ ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "patch "+name)
	if err := f.nextErr(); err != nil {
		return err
	}
	if patchType != client.MergePatchType {
		return client.NewAPIError(http.StatusUnsupportedMediaType, api.StatusReasonUnsupportedMediaType, "type %s", patchType)
	}
	ev, ok := f.events[ns+"/"+name]
	if !ok {
		return client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "not found")
	}
	return json.Unmarshal(data, ev)
}

func (f *fakeWriter) snapshot() (map[string]api.Event, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]api.Event{}
	for k, v := range f.events {
		out[k] = *v
	}
	return out, append([]string(nil), f.calls...)
}

func testPod() *api.Pod {
	return &api.Pod{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{Name: "web-0", Namespace: "ns", UID: "u1", ResourceVersion: "7"},
	}
}

func TestMakeEvent(t *testing.T) {
	r := newRecorder(newFakeWriter(), "sts-controller", nil)
	now := time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)
	tests := []struct {
		name   string
		obj    api.Object
		wantNS string
		want   api.ObjectReference
	}{
		{
			name: "namespaced object with TypeMeta", obj: testPod(), wantNS: "ns",
			want: api.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web-0", Namespace: "ns", UID: "u1", ResourceVersion: "7"},
		},
		{
			name: "empty TypeMeta is filled from the Go type",
			obj:  &api.StatefulSet{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", UID: "u2"}}, wantNS: "ns",
			want: api.ObjectReference{Kind: "StatefulSet", APIVersion: "apps/v1", Name: "web", Namespace: "ns", UID: "u2"},
		},
		{
			name: "cluster-scoped object goes to default",
			obj:  &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1", UID: "u3"}}, wantNS: "default",
			want: api.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1", UID: "u3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := r.makeEvent(tt.obj, api.EventTypeWarning, "Because", "msg", now)
			if ev.Namespace != tt.wantNS {
				t.Errorf("namespace %q, want %q", ev.Namespace, tt.wantNS)
			}
			if ev.InvolvedObject != tt.want {
				t.Errorf("involvedObject %+v, want %+v", ev.InvolvedObject, tt.want)
			}
			if want := tt.obj.GetObjectMeta().Name + ".1829812e57fbb97a"; ev.Name != want {
				t.Errorf("name %q, want %q", ev.Name, want)
			}
			if ev.Source.Component != "sts-controller" || ev.ReportingController != "sts-controller" {
				t.Errorf("source %+v reportingComponent %q", ev.Source, ev.ReportingController)
			}
			if ev.Type != api.EventTypeWarning || ev.Reason != "Because" || ev.Message != "msg" || ev.Count != 1 {
				t.Errorf("type/reason/message/count: %q %q %q %d", ev.Type, ev.Reason, ev.Message, ev.Count)
			}
			if !ev.FirstTimestamp.Equal(now.Truncate(time.Second)) || !ev.LastTimestamp.Equal(now.Truncate(time.Second)) {
				t.Errorf("timestamps %v %v", ev.FirstTimestamp, ev.LastTimestamp)
			}
			if errs := api.ValidateEvent(ev); len(errs) > 0 {
				t.Errorf("event does not validate: %v", errs)
			}
		})
	}
}

func TestEventfNeverBlocks(t *testing.T) {
	r := newRecorder(newFakeWriter(), "c", nil)
	for range BufferSize + 5 {
		r.Eventf(testPod(), api.EventTypeNormal, "R", "m")
	}
	if got := r.Dropped(); got != 5 {
		t.Fatalf("Dropped() = %d, want 5", got)
	}
	// Unsupported input is dropped without being queued.
	r.Eventf(nil, api.EventTypeNormal, "R", "m")
	r.Eventf((*api.Pod)(nil), api.EventTypeNormal, "R", "m")
	r.Eventf(testPod(), "Error", "R", "m")
	if got := r.Dropped(); got != 5 {
		t.Fatalf("Dropped() = %d after invalid events, want 5", got)
	}
	var nilRec *Recorder
	nilRec.Eventf(testPod(), api.EventTypeNormal, "R", "m") // must not panic
}

// runFor runs r over the events queued so far and stops it.
func runFor(t *testing.T, r *Recorder, occurrences uint64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for r.handled.Load() < occurrences && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := r.handled.Load(); got < occurrences {
		t.Fatalf("%d of %d occurrences processed", got, occurrences)
	}
}

func TestRecorderWrites(t *testing.T) {
	tests := []struct {
		name      string
		failing   []error
		occurs    int
		wantCalls []string // with the event name reduced to its position
		wantCount int32
		wantNum   int
	}{
		{
			name: "repeats are patched", occurs: 3,
			wantCalls: []string{"create 0", "patch 0", "patch 0"}, wantCount: 3, wantNum: 1,
		},
		{
			name: "transient create failure is retried", occurs: 1,
			failing:   []error{client.NewAPIError(500, api.StatusReasonInternalError, "boom")},
			wantCalls: []string{"create 0", "create 0"}, wantCount: 1, wantNum: 1,
		},
		{
			name: "rejected create is not retried and the next occurrence creates", occurs: 2,
			failing:   []error{client.NewAPIError(422, api.StatusReasonInvalid, "bad")},
			wantCalls: []string{"create 0", "create 1"}, wantCount: 1, wantNum: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newFakeWriter()
			w.failing = tt.failing
			r := newRecorder(w, "c", nil)
			base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var names []string
			for i := range tt.occurs {
				at := base.Add(time.Duration(i) * time.Second)
				r.now = func() time.Time { return at }
				r.Eventf(testPod(), api.EventTypeNormal, "R", "same")
				names = append(names, r.makeEvent(testPod(), api.EventTypeNormal, "R", "same", at).Name)
			}
			runFor(t, r, uint64(tt.occurs))
			events, calls := w.snapshot()
			var got []string
			for _, c := range calls {
				for i, n := range names {
					if c == "create "+n {
						c = "create " + string(rune('0'+i))
					}
					if c == "patch "+n {
						c = "patch " + string(rune('0'+i))
					}
				}
				got = append(got, c)
			}
			if len(got) != len(tt.wantCalls) {
				t.Fatalf("calls %v, want %v", got, tt.wantCalls)
			}
			for i := range got {
				if got[i] != tt.wantCalls[i] {
					t.Fatalf("calls %v, want %v", got, tt.wantCalls)
				}
			}
			if len(events) != tt.wantNum {
				t.Fatalf("%d events stored, want %d", len(events), tt.wantNum)
			}
			for _, ev := range events {
				if ev.Count != tt.wantCount {
					t.Errorf("count %d, want %d", ev.Count, tt.wantCount)
				}
			}
		})
	}
}

func TestRecorderPatchOfVanishedEventCreates(t *testing.T) {
	w := newFakeWriter()
	r := newRecorder(w, "c", nil)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return base }
	r.Eventf(testPod(), api.EventTypeNormal, "R", "m")
	runFor(t, r, 1)

	w.mu.Lock()
	clear(w.events) // deleted by someone (TTL, kubectl)
	w.mu.Unlock()

	// Drive process with a correlator that remembers the first event.
	corr := newCorrelator()
	first := r.makeEvent(testPod(), api.EventTypeNormal, "R", "m", base)
	corr.observe(first, base)
	second := r.makeEvent(testPod(), api.EventTypeNormal, "R", "m", base.Add(time.Minute))
	r.process(context.Background(), corr, second, base.Add(time.Minute))

	events, calls := w.snapshot()
	if len(events) != 1 {
		t.Fatalf("%d events, want 1 (calls %v)", len(events), calls)
	}
	for _, ev := range events {
		if ev.Count != 1 || ev.Name == first.Name {
			t.Errorf("event %s count %d: want a new event with count 1", ev.Name, ev.Count)
		}
	}
	if n := len(calls); n < 2 || calls[n-2][:5] != "patch" || calls[n-1][:6] != "create" {
		t.Errorf("calls %v, want a patch then a create", calls)
	}
}

func TestRunOnce(t *testing.T) {
	r := newRecorder(newFakeWriter(), "c", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for deadline := time.Now().Add(5 * time.Second); !r.running.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if err := r.Run(ctx); err != ErrRunning {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
