package client_test

// Timer-driven behaviour (back-off, resync), run under testing/synctest
// with an in-process ListWatcher so that fake time advances whenever every
// goroutine is blocked. synctest.Test also fails if Run leaves a goroutine
// behind.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// watchMode is how scriptLW answers a watch.
type watchMode int

const (
	watchBlock    watchMode = iota // an open stream with no events
	watchCloseNow                  // a stream the server ends at once
	watchGone                      // refused with 410 Gone
)

// scriptLW serves a fixed set of widgets at revision 10, failing the first
// listFails lists, and answers watches per mode.
type scriptLW struct {
	start     time.Time
	listFails int
	mode      watchMode
	objects   []string // names in namespace "a"

	mu       sync.Mutex
	lists    []time.Duration
	watches  []time.Duration
	watchRVs []string
}

func (s *scriptLW) List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error {
	s.mu.Lock()
	s.lists = append(s.lists, time.Since(s.start))
	fail := s.listFails > 0
	s.listFails--
	s.mu.Unlock()
	if fail {
		return client.NewAPIError(500, api.StatusReasonInternalError, "boom")
	}
	l := into.(*client.RawList)
	l.Metadata.ResourceVersion = "10"
	for k, name := range s.objects {
		raw, _ := json.Marshal(&widget{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "a", ResourceVersion: fmt.Sprint(k + 1)}})
		l.Items = append(l.Items, raw)
	}
	return nil
}

func (s *scriptLW) Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions) (*client.Watcher, error) {
	s.mu.Lock()
	s.watches = append(s.watches, time.Since(s.start))
	s.watchRVs = append(s.watchRVs, opts.ResourceVersion)
	s.mu.Unlock()
	switch s.mode {
	case watchGone:
		return nil, client.NewAPIError(410, api.StatusReasonGone, "too old resource version")
	case watchCloseNow:
		return client.NewWatcher(ctx, func(context.Context, func(client.Event) bool) error { return nil }), nil
	default:
		return client.NewWatcher(ctx, func(ctx context.Context, _ func(client.Event) bool) error {
			<-ctx.Done()
			return nil
		}), nil
	}
}

func (s *scriptLW) times() (lists, watches []time.Duration, rvs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.lists...), append([]time.Duration(nil), s.watches...), append([]string(nil), s.watchRVs...)
}

// runBubbled runs inf until fn returns, then cancels it and waits for Run.
func runBubbled(t *testing.T, inf *client.Informer, fn func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	fn()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

func TestInformerListBackoffWithJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptLW{start: time.Now(), listFails: 10, objects: []string{"w1"}}
		inf := client.NewInformerFor(lw, typedWidgets, client.InformerOptions{}) // default tunables
		runBubbled(t, inf, func() {
			synctest.Wait()
			if inf.HasSynced() {
				t.Fatal("synced while every list fails")
			}
			for !inf.HasSynced() {
				time.Sleep(time.Second)
			}
		})
		lists, _, _ := lw.times()
		if len(lists) != 11 {
			t.Fatalf("%d lists, want 11", len(lists))
		}
		// The k-th retry waits a random time in [d/2, d), d = 200ms·2^k
		// capped at 30s.
		d := 200 * time.Millisecond
		for k := 1; k < len(lists); k++ {
			gap := lists[k] - lists[k-1]
			if gap < d/2 || gap >= d {
				t.Errorf("retry %d after %v, want in [%v, %v)", k, gap, d/2, d)
			}
			d = min(2*d, 30*time.Second)
		}
	})
}

func TestInformerRepeatedGoneBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptLW{start: time.Now(), mode: watchGone, objects: []string{"w1"}}
		inf := client.NewInformerFor(lw, typedWidgets, client.InformerOptions{})
		runBubbled(t, inf, func() { time.Sleep(10 * time.Second) })
		lists, watches, _ := lw.times()
		if len(lists) < 3 || lists[1] != 0 {
			t.Fatalf("lists at %v: want the first relist at once", lists)
		}
		if lists[2] < 200*time.Millisecond {
			t.Errorf("second relist at %v, want after a back-off of at least 200ms", lists[2])
		}
		// Back-off doubles: 10s hold at most a handful of relists.
		if len(lists) > 8 {
			t.Errorf("%d lists and %d watches in 10s: not backing off", len(lists), len(watches))
		}
	})
}

func TestInformerShortWatchesBackOffWithoutRelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptLW{start: time.Now(), mode: watchCloseNow, objects: []string{"w1"}}
		inf := client.NewInformerFor(lw, typedWidgets, client.InformerOptions{})
		runBubbled(t, inf, func() { time.Sleep(time.Minute) })
		lists, watches, rvs := lw.times()
		if len(lists) != 1 {
			t.Errorf("%d lists, want 1: a closed stream resumes, never relists", len(lists))
		}
		if len(watches) < 4 || len(watches) > 12 {
			t.Errorf("%d watches in a minute, want a backed-off handful: %v", len(watches), watches)
		}
		for _, rv := range rvs {
			if rv != "10" {
				t.Fatalf("watch from %q, want every watch from the list's 10", rv)
			}
		}
	})
}

func TestInformerResyncPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptLW{start: time.Now(), objects: []string{"w1", "w2"}}
		inf := client.NewInformerFor(lw, typedWidgets, client.InformerOptions{ResyncPeriod: time.Minute})
		var mu sync.Mutex
		var adds, resyncs int
		inf.AddEventHandler(client.HandlerFuncs{
			AddFunc: func(api.Object) { mu.Lock(); adds++; mu.Unlock() },
			UpdateFunc: func(o, n api.Object) {
				mu.Lock()
				defer mu.Unlock()
				if o != n {
					t.Errorf("resync OnUpdate with different objects")
				}
				resyncs++
			},
		})
		runBubbled(t, inf, func() {
			time.Sleep(3*time.Minute + time.Second)
			synctest.Wait()
		})
		mu.Lock()
		defer mu.Unlock()
		if adds != 2 || resyncs != 6 {
			t.Fatalf("adds=%d resyncs=%d, want 2 adds and 3 resyncs of 2 objects", adds, resyncs)
		}
	})
}
