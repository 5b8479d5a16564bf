package probe

import (
	"context"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Checker runs one check; *Prober satisfies it.
type Checker interface {
	Probe(ctx context.Context, spec *api.Probe, t Target) (Result, string)
}

// Worker probes one container periodically and reports its thresholded
// result. It holds no goroutine between checks: each check runs on the
// goroutine of a timer (time.AfterFunc), so a node's idle probes cost a
// timer each, not a goroutine stack each (see Start).
type Worker struct {
	kind      Kind
	spec      *api.Probe
	set       Settings
	target    Target
	startedAt time.Time
	check     Checker
	report    func(r Result, msg string)

	mu      sync.Mutex
	checked bool // the first check has run
	ctx     context.Context
	timer   *time.Timer
	next    time.Time // when the next periodic check is due
	running bool      // a check is in flight; its goroutine owns the fields below
	again   bool      // a Trigger came during a check: check again after it
	stopped bool      // no more checks: ctx ended, or a startup probe succeeded
	ended   bool      // done has been called
	done    func()

	result     Result // owned by the running check
	successes  int
	failures   int
	anySuccess bool // a check of this worker has succeeded
}

// Initial is the result a probe of kind has before its first report.
func Initial(kind Kind) Result {
	switch kind {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}

// NewWorker builds a worker for the probe spec of a container that started
// at startedAt; report receives every change of the thresholded result.
func NewWorker(kind Kind, spec *api.Probe, target Target, startedAt time.Time, check Checker, report func(Result, string)) *Worker {
	return &Worker{kind: kind, spec: spec, set: SettingsOf(spec), target: target, startedAt: startedAt,
		check: check, report: report, result: Initial(kind)}
}

// Trigger asks for a check now, between the periodic ones, as the
// kubelet's manual trigger does (it runs a not yet successful readiness
// probe again whenever it computes the pod's status). It never blocks: a
// trigger already pending absorbs it. A check it causes counts toward the
// thresholds like any other. Before the first check (which is due at once,
// or after initialDelaySeconds, when the kubelet's worker skips the probe)
// it does nothing.
func (w *Worker) Trigger() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.checked, w.stopped:
	case w.running:
		w.again = true
	default:
		w.timer.Reset(0)
	}
}

// SetInitial replaces the result the worker starts from (call it before
// Start): an agent that adopts a running container starts its readiness
// from what the API last said, so adoption does not flap Ready.
func (w *Worker) SetInitial(r Result) { w.result, w.anySuccess = r, r == Success }

// Start begins probing and returns at once; the worker stops when ctx
// ends, and calls done (once) when it has stopped and no check of it is
// running any more: nothing is reported after done. A startup worker also
// stops, and calls done, after its first reported success.
//
// The first check is due initialDelaySeconds after the container started,
// then one every periodSeconds on that schedule, as a time.Ticker would
// give them (a check that overruns its period skips the missed ones).
// Each check runs on a timer's goroutine, which ends with it: an httpGet
// check's call chain (net/http, the dialer, TLS) grows a stack to 16-32
// KiB, and a goroutine per worker would keep its stack between checks
// (100 probed pods held ~0.9 MB more stack, measured).
func (w *Worker) Start(ctx context.Context, done func()) {
	w.mu.Lock()
	w.ctx, w.done = ctx, done
	w.next = time.Now().Add(max(time.Until(w.startedAt.Add(w.set.InitialDelay)), 0))
	w.timer = time.AfterFunc(time.Until(w.next), w.tick)
	w.mu.Unlock()
	context.AfterFunc(ctx, w.stop)
}

// Run probes until ctx ends (Start, then wait for done).
func (w *Worker) Run(ctx context.Context) {
	stopped := make(chan struct{})
	w.Start(ctx, func() { close(stopped) })
	<-stopped
}

// stop ends the worker when its ctx ends.
func (w *Worker) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	end := w.endLocked()
	w.mu.Unlock()
	if end {
		w.done()
	}
}

// endLocked reports whether the caller is the one to call done: the worker
// has stopped, no check runs, and done was not called yet.
func (w *Worker) endLocked() bool {
	if w.stopped && !w.running && !w.ended {
		w.ended = true
		return true
	}
	return false
}

// tick runs a check (on the timer's goroutine) and arms the timer for the
// next: at once after a Trigger that came during the check, else at the
// next periodic time still ahead.
func (w *Worker) tick() {
	w.mu.Lock()
	if w.stopped || w.running {
		// A Trigger's Reset and the periodic timer fired together.
		w.again = w.again || w.running
		w.mu.Unlock()
		return
	}
	w.running = true
	ctx := w.ctx
	w.mu.Unlock()

	more := w.once(ctx)

	w.mu.Lock()
	w.running, w.checked = false, true
	if !more {
		w.stopped = true
	}
	if !w.stopped {
		now := time.Now()
		for !w.next.After(now) {
			w.next = w.next.Add(w.set.Period)
		}
		d := time.Until(w.next)
		if r := w.retryAfter(); r < d {
			d = r
		}
		if w.again {
			w.again, d = false, 0
		}
		w.timer.Reset(d)
	}
	end := w.endLocked()
	w.mu.Unlock()
	if end {
		w.done()
	}
}

// retryAfter is when a readiness check that failed before any check of
// the worker succeeded runs again, sooner than the period: every 100 ms
// for the first fastRetries failures (the first second), then 200, 400,
// 800 ms... (the period caps it), so a container that never listens costs
// a few checks more than the period's, not ten a second. A container
// that is not listening yet at its first check (started a moment ago)
// would else stay unready a whole period, unless a sync of its pod
// triggers a check; with 100 pods starting at once the syncs came too
// late for some of them (p99 to Ready 2.6 s instead of 1.7). Doubling
// from the first failure left the last pods' started -> Ready p99 at
// 0.25-0.49 s; 100 ms steps for the first second make it 0.16-0.19 s. Only
// readiness: liveness and startup failures count toward restarts, and
// after a first success the period paces every check (successThreshold
// counts checks a period apart).
func (w *Worker) retryAfter() time.Duration {
	const fastRetries = 10
	if w.kind != Readiness || w.anySuccess || w.failures == 0 {
		return w.set.Period
	}
	return min(100*time.Millisecond<<min(max(w.failures-fastRetries, 0), 16), w.set.Period)
}

// once runs a check and applies the thresholds; false stops the worker.
func (w *Worker) once(ctx context.Context) bool {
	r, msg := w.check.Probe(ctx, w.spec, w.target)
	if ctx.Err() != nil {
		return false
	}
	switch r {
	case Success:
		w.anySuccess = true
		w.successes++
		w.failures = 0
		if w.result != Success && w.successes >= w.set.SuccessThreshold {
			w.result = Success
			w.report(Success, msg)
		}
	default:
		w.failures++
		w.successes = 0
		if w.result != Failure && w.failures >= w.set.FailureThreshold {
			w.result = Failure
			w.report(Failure, msg)
		}
	}
	return !(w.kind == Startup && w.result == Success)
}
