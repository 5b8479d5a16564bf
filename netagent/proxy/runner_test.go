package proxy

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type runLog struct {
	mu   sync.Mutex
	runs []run
}

type run struct {
	at       time.Duration
	periodic bool
}

func (l *runLog) get() []run {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]run(nil), l.runs...)
}

func startRunner(t *testing.T, fail func(n int) bool) (*runner, *runLog, context.CancelFunc) {
	l := &runLog{}
	start := time.Now()
	r := newRunner(100*time.Millisecond, 30*time.Second, func(ctx context.Context, periodic bool) error {
		l.mu.Lock()
		n := len(l.runs)
		l.runs = append(l.runs, run{time.Since(start), periodic})
		l.mu.Unlock()
		if fail != nil && fail(n) {
			return errors.New("boom")
		}
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.loop(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r, l, cancel
}

func TestRunnerCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l, _ := startRunner(t, nil)
		synctest.Wait()
		if runs := l.get(); len(runs) != 1 || !runs[0].periodic || runs[0].at != 0 {
			t.Fatalf("first run = %+v, want one periodic run at once", runs)
		}
		time.Sleep(10 * time.Millisecond)
		for range 20 {
			r.request()
			time.Sleep(time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		runs := l.get()
		if len(runs) != 2 {
			t.Fatalf("runs = %+v, want the 20 requests coalesced into one", runs)
		}
		if runs[1].at != 100*time.Millisecond || runs[1].periodic {
			t.Errorf("second run = %+v, want a non-periodic run at the 100ms bound", runs[1])
		}
		// A request long after the last run runs at once.
		time.Sleep(time.Second)
		r.request()
		synctest.Wait()
		if runs := l.get(); len(runs) != 3 || runs[2].at != 1230*time.Millisecond {
			t.Errorf("runs = %+v, want a third run at once", runs)
		}
	})
}

func TestRunnerPeriodic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, l, _ := startRunner(t, nil)
		time.Sleep(65 * time.Second)
		runs := l.get()
		want := []run{{0, true}, {30 * time.Second, true}, {60 * time.Second, true}}
		if len(runs) != len(want) {
			t.Fatalf("runs = %+v, want %+v", runs, want)
		}
		for i := range want {
			if runs[i] != want[i] {
				t.Errorf("run %d = %+v, want %+v", i, runs[i], want[i])
			}
		}
	})
}

func TestRunnerRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Runs 0..3 fail, run 4 succeeds.
		_, l, _ := startRunner(t, func(n int) bool { return n < 4 })
		time.Sleep(2 * time.Second)
		runs := l.get()
		wantAt := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond, 1500 * time.Millisecond}
		if len(runs) != len(wantAt) {
			t.Fatalf("runs = %+v, want retries at %v and then quiet", runs, wantAt)
		}
		for i, at := range wantAt {
			if runs[i].at != at {
				t.Errorf("run %d at %v, want %v", i, runs[i].at, at)
			}
		}
	})
}
