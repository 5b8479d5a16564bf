package probe

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Checker runs one check; *Prober satisfies it.
type Checker interface {
	Probe(ctx context.Context, spec *api.Probe, t Target) (Result, string)
}

// Worker probes one container periodically and reports its thresholded
// result.
type Worker struct {
	kind      Kind
	spec      *api.Probe
	set       Settings
	target    Target
	startedAt time.Time
	check     Checker
	report    func(r Result, msg string)

	trigger chan struct{} // Trigger's, buffered 1
	checked atomic.Bool   // the first check has run

	result    Result // owned by Run's goroutine
	successes int
	failures  int
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
		check: check, report: report, result: Initial(kind), trigger: make(chan struct{}, 1)}
}

// Trigger asks for a check now, between the periodic ones, as the
// kubelet's manual trigger does (it runs a not yet successful readiness
// probe again whenever it computes the pod's status). It never blocks: a
// trigger already pending absorbs it. A check it causes counts toward the
// thresholds like any other. Before the first check (which is due at once,
// or after initialDelaySeconds, when the kubelet's worker skips the probe)
// it does nothing.
func (w *Worker) Trigger() {
	if !w.checked.Load() {
		return
	}
	select {
	case w.trigger <- struct{}{}:
	default:
	}
}

// SetInitial replaces the result the worker starts from (call it before
// Run): an agent that adopts a running container starts its readiness
// from what the API last said, so adoption does not flap Ready.
func (w *Worker) SetInitial(r Result) { w.result = r }

// Run probes until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	first := time.Until(w.startedAt.Add(w.set.InitialDelay))
	if first > 0 {
		t := time.NewTimer(first)
	wait:
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-w.trigger:
				// Within the initial delay: no check.
			case <-t.C:
				break wait
			}
		}
	}
	tick := time.NewTicker(w.set.Period)
	defer tick.Stop()
	for {
		if !w.once(ctx) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-w.trigger:
		}
	}
}

// once runs a check and applies the thresholds; false stops the worker.
func (w *Worker) once(ctx context.Context) bool {
	r, msg := w.probe(ctx)
	w.checked.Store(true)
	if ctx.Err() != nil {
		return false
	}
	switch r {
	case Success:
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

// probe runs one check on a goroutine of its own and waits for it. An
// httpGet check's call chain (net/http, the dialer, TLS) grows a stack to
// 16-32 KiB, and a goroutine keeps its grown stack while it waits: run on
// the worker's goroutine, each probe of the node would hold one between
// its checks (1.7 MB of stacks for 100 pods, measured). On a goroutine that
// ends with the check, only the checks in flight hold one.
func (w *Worker) probe(ctx context.Context) (Result, string) {
	type outcome struct {
		r   Result
		msg string
	}
	done := make(chan outcome, 1)
	go func() {
		r, msg := w.check.Probe(ctx, w.spec, w.target)
		done <- outcome{r, msg}
	}()
	o := <-done
	return o.r, o.msg
}
