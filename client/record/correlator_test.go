package record

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// occ is one occurrence in a correlator table: which object, reason and
// message, and how long after the start.
type occ struct {
	obj    string
	reason string
	msg    string
	at     time.Duration
}

func eventFor(o occ, start time.Time) *api.Event {
	now := start.Add(o.at)
	reason := o.reason
	if reason == "" {
		reason = "SuccessfulCreate"
	}
	msg := o.msg
	if msg == "" {
		msg = "m"
	}
	return &api.Event{
		ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("%s.%x", o.obj, now.UnixNano()), Namespace: "ns"},
		InvolvedObject: api.ObjectReference{
			Kind: "StatefulSet", APIVersion: "apps/v1", Namespace: "ns", Name: o.obj, UID: "uid-" + o.obj,
		},
		Reason: reason, Message: msg, Type: api.EventTypeNormal,
		Source: api.EventSource{Component: "c"},
	}
}

func TestCorrelatorObserve(t *testing.T) {
	tests := []struct {
		name   string
		occs   []occ
		want   []string // decision and count per occurrence
		burst  float64
		refill time.Duration
	}{
		{
			name: "first occurrence is created",
			occs: []occ{{obj: "a"}},
			want: []string{"create 1"},
		},
		{
			name: "repeat within the window is patched with a growing count",
			occs: []occ{{obj: "a"}, {obj: "a", at: time.Minute}, {obj: "a", at: 9 * time.Minute}},
			want: []string{"create 1", "patch 2", "patch 3"},
		},
		{
			name: "window counts from the last occurrence",
			occs: []occ{{obj: "a"}, {obj: "a", at: 8 * time.Minute}, {obj: "a", at: 17 * time.Minute}},
			want: []string{"create 1", "patch 2", "patch 3"},
		},
		{
			name: "repeat after the window is a new event",
			occs: []occ{{obj: "a"}, {obj: "a", at: 10*time.Minute + time.Second}},
			want: []string{"create 1", "create 1"},
		},
		{
			name: "different message is a new event",
			occs: []occ{{obj: "a", msg: "x"}, {obj: "a", msg: "y"}, {obj: "a", msg: "x"}},
			want: []string{"create 1", "create 1", "patch 2"},
		},
		{
			name: "different reason is a new event",
			occs: []occ{{obj: "a", reason: "A"}, {obj: "a", reason: "B"}},
			want: []string{"create 1", "create 1"},
		},
		{
			name: "different objects are independent",
			occs: []occ{{obj: "a"}, {obj: "b"}, {obj: "a"}, {obj: "b"}},
			want: []string{"create 1", "create 1", "patch 2", "patch 2"},
		},
		{
			name:  "burst exhausted drops, per object",
			burst: 2, refill: time.Minute,
			occs: []occ{{obj: "a", msg: "1"}, {obj: "a", msg: "2"}, {obj: "a", msg: "3"}, {obj: "b", msg: "1"}},
			want: []string{"create 1", "create 1", "drop", "create 1"},
		},
		{
			name:  "dropped repeats are not counted",
			burst: 1, refill: time.Minute,
			occs: []occ{{obj: "a"}, {obj: "a", at: time.Second}, {obj: "a", at: time.Minute + time.Second}},
			want: []string{"create 1", "drop", "patch 2"},
		},
		{
			name:  "tokens refill one per period",
			burst: 2, refill: time.Minute,
			occs: []occ{
				{obj: "a", msg: "1"}, {obj: "a", msg: "2"}, {obj: "a", msg: "3", at: 30 * time.Second},
				{obj: "a", msg: "4", at: 61 * time.Second}, {obj: "a", msg: "5", at: 62 * time.Second},
				{obj: "a", msg: "6", at: 5 * time.Minute}, {obj: "a", msg: "7", at: 5 * time.Minute}, {obj: "a", msg: "8", at: 5 * time.Minute},
			},
			want: []string{"create 1", "create 1", "drop", "create 1", "drop", "create 1", "create 1", "drop"},
		},
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCorrelator()
			if tt.burst > 0 {
				c.burst, c.refill = tt.burst, tt.refill
			}
			firstName := map[string]string{}
			for i, o := range tt.occs {
				ev := eventFor(o, start)
				d := c.observe(ev, start.Add(o.at))
				got := d.String()
				if d != decideDrop {
					got = fmt.Sprintf("%s %d", d, ev.Count)
				}
				if got != tt.want[i] {
					t.Fatalf("occurrence %d (%+v): got %q, want %q", i, o, got, tt.want[i])
				}
				key := o.obj + "/" + o.reason + "/" + o.msg
				switch d {
				case decideCreate:
					firstName[key] = ev.Name
					if !ev.FirstTimestamp.IsZero() && !ev.FirstTimestamp.Equal(ev.LastTimestamp.Time) {
						t.Errorf("occurrence %d: create with firstTimestamp %v != lastTimestamp %v", i, ev.FirstTimestamp, ev.LastTimestamp)
					}
				case decidePatch:
					if ev.Name != firstName[key] {
						t.Errorf("occurrence %d: patch of %q, want the event created as %q", i, ev.Name, firstName[key])
					}
					if want := api.NewTime(start.Add(o.at)); !ev.LastTimestamp.Equal(want.Time) {
						t.Errorf("occurrence %d: lastTimestamp %v, want %v", i, ev.LastTimestamp, want)
					}
					if !ev.FirstTimestamp.Before(ev.LastTimestamp.Time) && o.at >= time.Second {
						t.Errorf("occurrence %d: firstTimestamp %v not before lastTimestamp %v", i, ev.FirstTimestamp, ev.LastTimestamp)
					}
				}
			}
		})
	}
}

func TestCorrelatorForgetAndRestart(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCorrelator()
	ev := eventFor(occ{obj: "a"}, start)
	if d := c.observe(ev, start); d != decideCreate {
		t.Fatalf("first: %v", d)
	}
	c.forget(ev) // the create failed
	ev2 := eventFor(occ{obj: "a", at: time.Second}, start)
	if d := c.observe(ev2, start.Add(time.Second)); d != decideCreate {
		t.Fatalf("after a failed create: %v, want create", d)
	}
	ev3 := eventFor(occ{obj: "a", at: 2 * time.Second}, start)
	if d := c.observe(ev3, start.Add(2*time.Second)); d != decidePatch || ev3.Name != ev2.Name || ev3.Count != 2 {
		t.Fatalf("repeat: %v %s count %d, want patch of %s count 2", d, ev3.Name, ev3.Count, ev2.Name)
	}
	// The stored Event vanished: the recorder renames and restarts.
	ev3.Name = "a.new"
	c.restart(ev3, start.Add(2*time.Second))
	ev4 := eventFor(occ{obj: "a", at: 3 * time.Second}, start)
	if d := c.observe(ev4, start.Add(3*time.Second)); d != decidePatch || ev4.Name != "a.new" || ev4.Count != 2 {
		t.Fatalf("after restart: %v %s count %d, want patch of a.new count 2", d, ev4.Name, ev4.Count)
	}
}

func TestCorrelatorBounded(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCorrelator()
	c.maxEntries = 100
	for i := range 1000 {
		at := start.Add(time.Duration(i) * time.Millisecond)
		ev := eventFor(occ{obj: fmt.Sprintf("o%d", i)}, start)
		c.observe(ev, at)
		if len(c.aggregates) > c.maxEntries+1 {
			t.Fatalf("after %d events: %d aggregates, bound %d", i+1, len(c.aggregates), c.maxEntries)
		}
	}
	// The most recent aggregate survived the sweeps.
	last := eventFor(occ{obj: "o999"}, start)
	if d := c.observe(last, start.Add(time.Second)); d != decidePatch {
		t.Fatalf("most recent aggregate evicted: %v", d)
	}
	// Buckets with tokens spent are kept; once they have refilled, the
	// next sweep (due when the bucket count has doubled) removes them.
	later := start.Add(time.Duration(SpamBurst+1) * SpamRefill)
	added := 0
	for prev := len(c.buckets); added < 10000; added++ {
		c.observe(eventFor(occ{obj: fmt.Sprintf("n%d", added)}, later), later)
		if len(c.buckets) < prev {
			break
		}
		prev = len(c.buckets)
	}
	if added == 10000 {
		t.Fatalf("no bucket sweep after %d new objects (%d buckets)", added, len(c.buckets))
	}
	if len(c.buckets) > added+1 {
		t.Fatalf("%d buckets after the sweep, want only the %d objects since the refill", len(c.buckets), added+1)
	}
}

// A burst of one reason must not silence another reason on the same object
// (a rollout's creates, then a Warning).
func TestCorrelatorBucketPerReason(t *testing.T) {
	c := newCorrelator()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range SpamBurst + 5 {
		ev := eventFor(occ{obj: "web", msg: fmt.Sprintf("pod %d", i)}, start)
		d := c.observe(ev, start)
		if i < SpamBurst && d != decideCreate {
			t.Fatalf("event %d: %v, want create", i, d)
		}
		if i >= SpamBurst && d != decideDrop {
			t.Fatalf("event %d past the burst: %v, want drop", i, d)
		}
	}
	warn := eventFor(occ{obj: "web", reason: "DeploymentRollbackRevisionNotFound", msg: "w"}, start)
	if d := c.observe(warn, start); d != decideCreate {
		t.Fatalf("other reason after a burst: %v, want create", d)
	}
}
