package endpointslice

import (
	"errors"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func trackedSlice(uid string, gen int64) *api.EndpointSlice {
	return &api.EndpointSlice{ObjectMeta: api.ObjectMeta{
		Name: "web-" + uid, Namespace: testNS, UID: uid, Generation: gen,
		Labels: map[string]string{api.LabelServiceName: "web", api.LabelManagedBy: ControllerName},
	}}
}

func TestSliceTrackerStale(t *testing.T) {
	cases := []struct {
		name   string
		writes func(tr *sliceTracker)
		cached []*api.EndpointSlice
		svc    *api.Service
		want   bool
	}{
		{name: "nothing written", writes: func(*sliceTracker) {}, cached: []*api.EndpointSlice{trackedSlice("a", 1)}, want: false},
		{name: "cache has what was written", writes: func(tr *sliceTracker) { tr.Wrote(trackedSlice("a", 2)) },
			cached: []*api.EndpointSlice{trackedSlice("a", 2)}, want: false},
		{name: "cache is newer than the write", writes: func(tr *sliceTracker) { tr.Wrote(trackedSlice("a", 2)) },
			cached: []*api.EndpointSlice{trackedSlice("a", 3)}, want: false},
		{name: "cache older than an update", writes: func(tr *sliceTracker) { tr.Wrote(trackedSlice("a", 3)) },
			cached: []*api.EndpointSlice{trackedSlice("a", 2)}, want: true},
		{name: "created slice not cached yet", writes: func(tr *sliceTracker) { tr.Wrote(trackedSlice("b", 1)) },
			cached: []*api.EndpointSlice{trackedSlice("a", 1)}, want: true},
		{name: "deleted slice still cached", writes: func(tr *sliceTracker) { tr.ExpectDeletion(trackedSlice("a", 1)) },
			cached: []*api.EndpointSlice{trackedSlice("a", 1)}, want: true},
		{name: "deleted slice gone from the cache", writes: func(tr *sliceTracker) { tr.ExpectDeletion(trackedSlice("a", 1)) },
			cached: nil, want: false},
		{name: "writes for an older service of the same name are forgotten", writes: func(tr *sliceTracker) {
			tr.Stale(testService(func(s *api.Service) { s.UID = "old" }), nil)
			tr.Wrote(trackedSlice("a", 5))
		}, cached: nil, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newSliceTracker()
			tc.writes(tr)
			svc := tc.svc
			if svc == nil {
				svc = testService()
			}
			if got := tr.Stale(svc, tc.cached); got != tc.want {
				t.Errorf("Stale = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSliceTrackerEvents(t *testing.T) {
	tr := newSliceTracker()
	s := trackedSlice("a", 2)
	if !tr.ShouldSync(s) || tr.Has(s) {
		t.Fatal("untracked slice: ShouldSync must be true, Has false")
	}
	tr.Wrote(s)
	if tr.ShouldSync(trackedSlice("a", 2)) {
		t.Error("own write echoed by the cache must not sync")
	}
	if !tr.ShouldSync(trackedSlice("a", 3)) {
		t.Error("a newer generation (someone else's write) must sync")
	}
	if tr.HandleDeletion(trackedSlice("a", 2)) {
		t.Error("an unexpected deletion must report false")
	}
	tr.ExpectDeletion(s)
	if !tr.HandleDeletion(s) {
		t.Error("an expected deletion must report true")
	}
	if tr.Has(s) {
		t.Error("deleted slice still tracked")
	}
	tr.Wrote(s)
	tr.DeleteService(testNS + "/web")
	if tr.Has(s) {
		t.Error("DeleteService kept the slice")
	}
}

func TestSliceTrackerUnseen(t *testing.T) {
	tr := newSliceTracker()
	key := testNS + "/web"
	a, b := trackedSlice("a", 1), trackedSlice("b", 1)
	tr.Wrote(a)
	tr.Wrote(b)
	if !tr.Unseen(key, []*api.EndpointSlice{a}) {
		t.Error("b was written but is not cached: Unseen must be true")
	}
	if tr.Unseen(key, []*api.EndpointSlice{a, b}) {
		t.Error("everything written is cached: Unseen must be false")
	}
	tr.ExpectDeletion(b)
	if tr.Unseen(key, []*api.EndpointSlice{a}) {
		t.Error("a deleted slice is not expected in the cache")
	}
}

func TestTriggerTracker(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	svc := testService()
	created := svc.CreationTimestamp.Time
	tr := newTriggerTracker()
	a := testPod("a", "10.0.0.1", true, readyAt(t0))
	b := testPod("b", "10.0.0.2", true, readyAt(t0))

	steps := []struct {
		name string
		pods []*api.Pod
		want time.Time
	}{
		{"first sync: service creation", []*api.Pod{a, b}, created},
		{"nothing new", []*api.Pod{a, b}, time.Time{}},
		{"one pod flips", []*api.Pod{testPod("a", "10.0.0.1", false, readyAt(t0.Add(3*time.Second))), b}, t0.Add(3 * time.Second)},
		{"two flips: the earliest", []*api.Pod{
			testPod("a", "10.0.0.1", true, readyAt(t0.Add(9*time.Second))),
			testPod("b", "10.0.0.2", false, readyAt(t0.Add(7*time.Second))),
		}, t0.Add(7 * time.Second)},
		{"a new pod", []*api.Pod{
			testPod("a", "10.0.0.1", true, readyAt(t0.Add(9*time.Second))),
			testPod("b", "10.0.0.2", false, readyAt(t0.Add(7*time.Second))),
			testPod("c", "10.0.0.3", true, readyAt(t0.Add(8*time.Second))),
		}, t0.Add(8 * time.Second)},
		{"a flip within the same second: the status counts", []*api.Pod{
			testPod("a", "10.0.0.1", true, readyAt(t0.Add(9*time.Second))),
			testPod("b", "10.0.0.2", false, readyAt(t0.Add(7*time.Second))),
			testPod("c", "10.0.0.3", false, readyAt(t0.Add(8*time.Second))),
		}, t0.Add(8 * time.Second)},
		{"a pod without transition time", []*api.Pod{testPod("d", "10.0.0.4", true)}, time.Time{}},
	}
	for _, st := range steps {
		if got := tr.Compute(svc, st.pods); !got.Equal(st.want) {
			t.Errorf("%s: trigger %v, want %v", st.name, got, st.want)
		}
	}
	tr.DeleteService(testNS + "/web")
	if got := tr.Compute(svc, nil); !got.Equal(created) {
		t.Errorf("after DeleteService: %v, want the creation time", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		max  int
		ok   bool
	}{
		{"default", 0, true},
		{"one", 1, true},
		{"thousand", 1000, true},
		{"too many", 1001, false},
		{"negative", -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Options{MaxEndpointsPerSlice: tc.max}.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidOptions)) {
				t.Errorf("Validate(%d) = %v", tc.max, err)
			}
		})
	}
	if got := (Options{}).withDefaults().MaxEndpointsPerSlice; got != 100 {
		t.Errorf("default %d", got)
	}
}

func TestPodChanged(t *testing.T) {
	base := testPod("a", "10.0.0.1", true)
	base.ResourceVersion = "1"
	mod := func(f func(p *api.Pod)) *api.Pod {
		p := api.DeepCopy(base)
		p.ResourceVersion = "2"
		f(p)
		return p
	}
	cases := []struct {
		name string
		pod  *api.Pod
		want bool
	}{
		{"resync", api.DeepCopy(base), false},
		{"irrelevant status change", mod(func(p *api.Pod) { p.Status.Message = "hi" }), false},
		{"ready flips", mod(func(p *api.Pod) { p.Status.Conditions[0].Status = api.ConditionFalse }), true},
		{"labels", mod(func(p *api.Pod) { p.Labels = map[string]string{"app": "other"} }), true},
		{"ip", mod(func(p *api.Pod) { p.Status.PodIPs = []api.PodIP{{IP: "10.0.0.2"}} }), true},
		{"deleting", mod(terminating), true},
		{"failed", mod(func(p *api.Pod) { p.Status.Phase = api.PodFailed }), true},
		{"node", mod(func(p *api.Pod) { p.Spec.NodeName = "node-2" }), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := podChanged(base, tc.pod); got != tc.want {
				t.Errorf("podChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
