package netagent

import (
	"context"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/probe"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// The probe workers of a pod's container instances, and what they
// report (the worker plans with the results: podactions.go).

// probeState is what the probe workers of one container instance report;
// guarded by podWorker.mu.
type probeState struct {
	ready, started, liveFailed, startFailed bool
	msg                                     string
	// onStarted starts the liveness and readiness workers once the
	// startup probe succeeds.
	onStarted func()
	// readiness is the instance's readiness worker, once it runs.
	readiness *probe.Worker
}

// probeFor returns the probe state of a container instance, creating it.
func (w *podWorker) probeFor(id string) *probeState {
	w.mu.Lock()
	defer w.mu.Unlock()
	ps := w.probes[id]
	if ps == nil {
		ps = &probeState{}
		w.probes[id] = ps
	}
	return ps
}

func (w *podWorker) probeSnapshot(id string) probeState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ps := w.probes[id]; ps != nil {
		return *ps
	}
	return probeState{}
}

// ensureProbes starts the probe workers of c's current instance.
func (w *podWorker) ensureProbes(ctx context.Context, pod *api.Pod, c *ctr) {
	if c.probeID == c.id {
		return
	}
	w.stopProbes(c)
	id := c.id
	ps := w.probeFor(id)
	w.mu.Lock()
	if c.spec.StartupProbe == nil {
		ps.started = true
	}
	if c.spec.ReadinessProbe == nil {
		ps.ready = true // ready once started
	}
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	c.probeCancel, c.probeID = cancel, id
	target := probe.Target{PodIP: w.net.IP, ContainerID: id, Ports: c.spec.Ports}
	startedAt := c.st.StartedAt
	if startedAt.IsZero() {
		startedAt = time.Now()
	}
	startWorker := func(kind probe.Kind, spec *api.Probe, initial probe.Result) {
		pw := probe.NewWorker(kind, spec, target, startedAt, w.m.prober, func(r probe.Result, msg string) {
			w.probeResult(id, kind, r, msg)
		})
		pw.SetInitial(initial)
		if kind == probe.Readiness {
			w.mu.Lock()
			ps.readiness = pw
			w.mu.Unlock()
		}
		w.m.wg.Add(1)
		pw.Start(ctx, w.m.wg.Done)
	}
	snap := w.probeSnapshot(id)
	// The closure may run on a probe goroutine: it captures the specs.
	readiness, liveness := c.spec.ReadinessProbe, c.spec.LivenessProbe
	liveAndReady := func() {
		if readiness != nil {
			init := probe.Failure
			if snap.ready {
				init = probe.Success
			}
			startWorker(probe.Readiness, readiness, init)
		}
		if liveness != nil {
			startWorker(probe.Liveness, liveness, probe.Success)
		}
	}
	if p := c.spec.StartupProbe; p != nil && !snap.started {
		// Liveness and readiness wait for the startup probe's success.
		startWorker(probe.Startup, p, probe.Unknown)
		w.mu.Lock()
		ps.onStarted = liveAndReady
		w.mu.Unlock()
		return
	}
	liveAndReady()
}

// triggerReadiness runs the readiness probe of c's current instance now
// if it has not succeeded yet, as the kubelet does each time it computes
// a pod's status (a sync: the relist saw the container start, the pod
// changed in the API, a probe reported). The probe's period stays what
// paces it once the container is ready or keeps failing.
func (w *podWorker) triggerReadiness(c *ctr) {
	if c.id == "" || c.st.State != runtime.StateRunning || c.probeID != c.id {
		return
	}
	w.mu.Lock()
	var pw *probe.Worker
	if ps := w.probes[c.id]; ps != nil && !ps.ready {
		pw = ps.readiness
	}
	w.mu.Unlock()
	if pw != nil {
		pw.Trigger()
	}
}

// probeResult records a probe worker's report for instance id.
func (w *podWorker) probeResult(id string, kind probe.Kind, r probe.Result, msg string) {
	var then func()
	w.mu.Lock()
	ps := w.probes[id]
	if ps == nil {
		w.mu.Unlock()
		return
	}
	switch kind {
	case probe.Readiness:
		ps.ready = r == probe.Success
	case probe.Liveness:
		ps.liveFailed = r == probe.Failure
	case probe.Startup:
		if r == probe.Success {
			ps.started = true
			then, ps.onStarted = ps.onStarted, nil
		} else {
			ps.startFailed = true
		}
	}
	if r == probe.Failure {
		ps.msg = msg
	}
	w.mu.Unlock()
	if then != nil {
		then()
	}
	w.log.Debug("probe result", "id", id, "probe", kind, "result", r, "msg", msg)
	w.poke()
}

func (w *podWorker) stopProbes(c *ctr) {
	if c.probeCancel != nil {
		c.probeCancel()
		c.probeCancel, c.probeID = nil, ""
	}
}

// stopAllProbes stops the probe workers of every container.
func (w *podWorker) stopAllProbes() {
	for _, c := range w.ctrs {
		w.stopProbes(c)
	}
}

func (w *podWorker) forgetProbes(id string) {
	w.mu.Lock()
	delete(w.probes, id)
	w.mu.Unlock()
}
