package probe

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// scripted answers checks from a script of results, then repeats the last.
type scripted struct {
	mu     sync.Mutex
	script []Result
	times  []time.Duration // when each check ran, since start
	start  time.Time
}

func (s *scripted) Probe(ctx context.Context, spec *api.Probe, t Target) (Result, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times = append(s.times, time.Since(s.start))
	r := s.script[min(len(s.times)-1, len(s.script)-1)]
	return r, fmt.Sprintf("check %d", len(s.times))
}

type reportLog struct {
	mu  sync.Mutex
	got []string
}

func (l *reportLog) add(r Result, at time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf("%v@%v", r, at))
}

func TestWorkerThresholds(t *testing.T) {
	S, F := Success, Failure
	cases := []struct {
		name    string
		kind    Kind
		probe   api.Probe
		started time.Duration // container start relative to the worker (negative: earlier)
		script  []Result
		run     time.Duration
		want    []string
	}{
		{"readiness: one success flips at once", Readiness, api.Probe{PeriodSeconds: 1}, 0,
			[]Result{S}, 3500 * time.Millisecond, []string{"Success@0s"}},
		{"readiness: initial delay", Readiness, api.Probe{PeriodSeconds: 1, InitialDelaySeconds: 5}, 0,
			[]Result{S}, 6 * time.Second, []string{"Success@5s"}},
		{"readiness: initial delay counts from the container start", Readiness, api.Probe{PeriodSeconds: 1, InitialDelaySeconds: 5}, -3 * time.Second,
			[]Result{S}, 6 * time.Second, []string{"Success@2s"}},
		{"readiness: success threshold 3", Readiness, api.Probe{PeriodSeconds: 2, SuccessThreshold: 3}, 0,
			[]Result{S, F, S, S, S}, 20 * time.Second, []string{"Success@8s"}},
		{"readiness: up, then down after 2 failures, then up", Readiness, api.Probe{PeriodSeconds: 1, FailureThreshold: 2}, 0,
			[]Result{S, F, S, F, F, F, S}, 10 * time.Second, []string{"Success@0s", "Failure@4s", "Success@6s"}},
		{"readiness: failures before any success retry sooner", Readiness, api.Probe{PeriodSeconds: 10}, 0,
			[]Result{F, F, F, S}, 5 * time.Second, []string{"Success@300ms"}},
		// Every 100 ms for the first 10 failures (0 .1 ... 1), then 200,
		// 400, 800 ms ... capped by the period: 1.2 1.6 2.4 4 7.2 10.
		{"readiness: sooner retries back off after the first second", Readiness, api.Probe{PeriodSeconds: 10}, 0,
			[]Result{F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, S}, 15 * time.Second, []string{"Success@10s"}},
		// With a period of 1 s the periodic checks (1, 2, 3 ...) run too:
		// 0 .1 ... 1, 1.2 1.6 2 3 4.
		{"readiness: sooner retries give way to the period", Readiness, api.Probe{PeriodSeconds: 1}, 0,
			[]Result{F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, S}, 5 * time.Second, []string{"Success@4s"}},
		{"readiness: no sooner retries after a first success", Readiness, api.Probe{PeriodSeconds: 10, SuccessThreshold: 2}, 0,
			[]Result{S, F, S, S}, 35 * time.Second, []string{"Success@30s"}},
		{"liveness: failures never retry sooner", Liveness, api.Probe{PeriodSeconds: 10, FailureThreshold: 2}, 0,
			[]Result{F, F}, 15 * time.Second, []string{"Failure@10s"}},
		{"liveness: failure threshold 3 (default)", Liveness, api.Probe{PeriodSeconds: 1}, 0,
			[]Result{S, F, F, F}, 10 * time.Second, []string{"Failure@3s"}},
		{"liveness: period 10s default", Liveness, api.Probe{}, 0,
			[]Result{F}, 25 * time.Second, []string{"Failure@20s"}},
		{"startup: success stops the worker", Startup, api.Probe{PeriodSeconds: 1, FailureThreshold: 30}, 0,
			[]Result{F, F, S, F}, 10 * time.Second, []string{"Success@2s"}},
		{"startup: failure threshold", Startup, api.Probe{PeriodSeconds: 2, FailureThreshold: 2}, 0,
			[]Result{F}, 10 * time.Second, []string{"Failure@2s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				chk := &scripted{script: tc.script, start: start}
				log := &reportLog{}
				p := tc.probe
				w := NewWorker(tc.kind, &p, Target{}, start.Add(tc.started), chk, func(r Result, _ string) { log.add(r, time.Since(start)) })
				ctx, cancel := context.WithTimeout(context.Background(), tc.run)
				defer cancel()
				w.Run(ctx)
				if fmt.Sprint(log.got) != fmt.Sprint(tc.want) {
					t.Fatalf("reports %v, want %v (checks at %v)", log.got, tc.want, chk.times)
				}
			})
		})
	}
}

func TestWorkerStopsReportingAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chk := &scripted{script: []Result{Success}, start: time.Now()}
		reports := 0
		w := NewWorker(Readiness, &api.Probe{PeriodSeconds: 1, InitialDelaySeconds: 10}, Target{}, time.Now(), chk, func(Result, string) { reports++ })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		time.Sleep(5 * time.Second)
		cancel()
		<-done
		if reports != 0 || len(chk.times) != 0 {
			t.Fatalf("after cancel during the initial delay: %d reports, %d checks", reports, len(chk.times))
		}
	})
}

// TestWorkerTrigger: Trigger runs a check at once between the periodic
// ones, counted toward the thresholds; before the first check (within the
// initial delay) it does nothing.
func TestWorkerTrigger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &scripted{script: []Result{Success, Failure}, start: time.Now()}
		var log reportLog
		spec := &api.Probe{PeriodSeconds: 10, InitialDelaySeconds: 2, FailureThreshold: 2}
		w := NewWorker(Readiness, spec, Target{}, time.Now(), s, func(r Result, _ string) { log.add(r, time.Since(s.start)) })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		time.Sleep(time.Second)
		w.Trigger() // within the initial delay: nothing
		time.Sleep(1500 * time.Millisecond)
		w.Trigger() // after the first check (at 2s): a check now (a failure)
		time.Sleep(10 * time.Second)
		cancel()
		<-done
		s.mu.Lock()
		defer s.mu.Unlock()
		// The periodic checks stay on their schedule (2s, 12s); the
		// triggered failure counts: the one at 12s is the second.
		want := []time.Duration{2 * time.Second, 2500 * time.Millisecond, 12 * time.Second}
		if fmt.Sprint(s.times) != fmt.Sprint(want) {
			t.Fatalf("checks at %v, want %v", s.times, want)
		}
		if fmt.Sprint(log.got) != "[Success@2s Failure@12s]" {
			t.Fatalf("reports %v, want [Success@2s Failure@12s]", log.got)
		}
	})
}

// blocking is a checker whose checks wait for release.
type blocking struct {
	scripted
	entered chan struct{}
	release chan struct{}
}

func (b *blocking) Probe(ctx context.Context, spec *api.Probe, t Target) (Result, string) {
	b.entered <- struct{}{}
	<-b.release
	return b.scripted.Probe(ctx, spec, t)
}

// TestWorkerHoldsNoGoroutine: between checks a started worker runs no
// goroutine; a Trigger during a check runs one more right after it; a
// periodic time missed during a long check is skipped, not made up; and
// done comes once, after the check that was running when ctx ended.
func TestWorkerHoldsNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &blocking{scripted: scripted{script: []Result{Success}, start: time.Now()}, entered: make(chan struct{}), release: make(chan struct{})}
		w := NewWorker(Readiness, &api.Probe{PeriodSeconds: 10}, Target{}, time.Now(), b, func(Result, string) {})
		ctx, cancel := context.WithCancel(context.Background())
		dones := 0
		before := runtime.NumGoroutine()
		w.Start(ctx, func() { dones++ })
		<-b.entered // the first check, at 0s
		b.release <- struct{}{}
		<-b.entered // the second, at 10s, on a goroutine of its own
		if n := runtime.NumGoroutine(); n != before+1 {
			t.Fatalf("%d goroutines during a check, want %d", n, before+1)
		}
		time.Sleep(25 * time.Second) // the check overruns two periods
		w.Trigger()                  // during the check: one more after it
		b.release <- struct{}{}
		<-b.entered // the triggered check, at once (35s)
		b.release <- struct{}{}
		synctest.Wait()
		if n := runtime.NumGoroutine(); n != before {
			t.Fatalf("%d goroutines between checks, want %d", n, before)
		}
		<-b.entered // the next periodic one: 40s (20s and 30s were missed)
		cancel()
		synctest.Wait()
		if dones != 0 {
			t.Fatal("done before the running check returned")
		}
		b.release <- struct{}{}
		synctest.Wait()
		if dones != 1 {
			t.Fatalf("done called %d times, want 1", dones)
		}
		want := []time.Duration{0, 35 * time.Second, 35 * time.Second, 40 * time.Second}
		if fmt.Sprint(b.times) != fmt.Sprint(want) {
			t.Fatalf("checks at %v, want %v", b.times, want)
		}
	})
}
