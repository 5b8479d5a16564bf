package netagent

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// A pod's termination: graceful stop of its containers within the grace
// period, then its network, its files, its final status and its deletion.

// minForceGrace is the grace a pod removed from the API without a grace
// period (a force deletion) still gets, as the kubelet's minimum.
const minForceGrace = 2 * time.Second

// terminationDelay is how long a deleted pod keeps running before SIGTERM
// (Config.TerminationDelay, at most half the grace period): only a pod
// that is Ready, so one that some proxy may still send connections to.
func (w *podWorker) terminationDelay(pod *api.Pod, grace time.Duration, gone bool) time.Duration {
	d := w.m.cfg.TerminationDelay
	if gone || d <= 0 || !api.IsPodReady(pod) {
		return 0
	}
	return min(d, grace/2)
}

// termination is a pod's termination in progress: the steps left, which
// the worker's loop drives (a wait, or a failed step's retry, ends at the
// time terminate returns).
type termination struct {
	pod  *api.Pod // as the termination began
	gone bool
	step terminationStep
	// netAttempts counts the failed network teardowns; retry is the
	// current API write's back-off, notBefore its next attempt.
	netAttempts int
	retry       time.Duration
	notBefore   time.Time
}

// terminationStep is what a termination does next.
type terminationStep int

const (
	// termStop: stop every container within the grace period (a Ready
	// pod waits for the termination delay first).
	termStop terminationStep = iota
	// termNetwork: tear the network down (the containers are dead), then
	// remove the containers and the pod's files.
	termNetwork
	// termStatus: write the final status.
	termStatus
	// termDelete: delete the pod from the API.
	termDelete
)

// Network teardown attempts of a terminated pod, and the back-off of its
// final API writes.
const (
	termNetAttempts  = 5
	termNetRetryStep = 200 * time.Millisecond
	termRetryBase    = 200 * time.Millisecond
	termRetryMax     = 10 * time.Second
)

// terminate ends the pod: a Ready pod first keeps running for the
// termination delay (see terminationDelay), then containers get SIGTERM
// and the rest of the grace period (deletionGracePeriodSeconds, counted
// from the deletion), then SIGKILL; readiness
// keeps being probed meanwhile (the endpoint turns serving/terminating,
// not unready). Then the network goes, the final status is written and
// the pod is deleted with gracePeriodSeconds=0 and a UID precondition.
// A pod that left the API (gone) gets the same treatment minus the API
// writes.
//
// The first call begins it (beginTermination) and each call goes as far
// as it can: terminate returns when to call it again (the termination
// delay, a retry), or done once the pod is finished with. An agent
// shutdown leaves what is left to the next agent.
func (w *podWorker) terminate(ctx context.Context, pod *api.Pod, gone bool) (time.Duration, bool) {
	if w.term == nil {
		w.term = &termination{pod: pod, gone: gone}
		if d := w.beginTermination(ctx, pod, gone); d > 0 {
			w.log.Info("delaying SIGTERM until the proxies dropped the endpoint", "delay", d)
			return w.term.retryIn(d), false
		}
	}
	t := w.term
	if d := time.Until(t.notBefore); d > 0 {
		return d, false // woken before the wait is over
	}
	switch t.step {
	case termStop:
		w.stopContainers(ctx, t.pod)
		t.step = termNetwork
		fallthrough
	case termNetwork:
		// The network goes only after every process is dead.
		if !w.netDown && w.m.net != nil {
			w.netDown = true
			w.setNetNSPath("")
			if err := w.m.netns.do(func() error { return w.m.net.DelPod(ctx, w.uid) }); err != nil {
				w.netDown = false
				w.log.Warn("pod network teardown failed", "err", err, "attempt", t.netAttempts)
				if t.netAttempts++; t.netAttempts < termNetAttempts && ctx.Err() == nil {
					return t.retryIn(time.Duration(t.netAttempts) * termNetRetryStep), false
				}
			}
		}
		w.cleanUp(ctx, t.gone)
		if t.gone {
			return w.terminated(), true
		}
		w.report(t.pod)
		t.step = termStatus
		fallthrough
	case termStatus:
		if err := w.m.status.sync(ctx, w.uid); err != nil {
			if ctx.Err() != nil {
				w.log.Warn("final pod status not written", "err", err)
				return w.terminated(), true
			}
			w.log.Debug("final pod status not written, retrying", "err", err)
			return t.backoff(), false
		}
		t.step, t.retry = termDelete, 0
		fallthrough
	default: // termDelete
		// DELETE with gracePeriodSeconds=0 and a UID precondition, retried
		// until it lands, the pod is gone, or it is another pod of that
		// name.
		zero := int64(0)
		opts := client.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &client.Preconditions{UID: w.uid}}
		err := w.m.api.Delete(ctx, w.m.podRes, t.pod.Namespace, t.pod.Name, opts)
		if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) && ctx.Err() == nil {
			w.log.Warn("deleting the pod failed, retrying", "err", err)
			return t.backoff(), false
		}
		return w.terminated(), true
	}
}

// retryIn sets the next attempt d from now and returns d.
func (t *termination) retryIn(d time.Duration) time.Duration {
	t.notBefore = time.Now().Add(d)
	return d
}

// backoff is the next API write's delay: termRetryBase doubling to
// termRetryMax.
func (t *termination) backoff() time.Duration {
	t.retry = min(max(2*t.retry, termRetryBase), termRetryMax)
	return t.retryIn(t.retry)
}

// terminated forgets the pod's status; the worker is done.
func (w *podWorker) terminated() time.Duration {
	w.m.status.forget(w.uid)
	w.log.Info("pod terminated")
	return 0
}

// beginTermination starts a termination: liveness and startup probes
// stop, readiness goes on; the status is reported. It returns the
// termination delay the pod keeps running for (see terminationDelay).
func (w *podWorker) beginTermination(ctx context.Context, pod *api.Pod, gone bool) time.Duration {
	grace := podGracePeriod(pod)
	if gone && grace < minForceGrace {
		grace = minForceGrace
	}
	w.deadline = time.Now().Add(grace)
	w.log.Info("terminating pod", "grace", grace, "gone", gone)
	// Liveness and startup stop (no restarts now); readiness goes on.
	for _, c := range w.ctrs {
		if c.id == "" || c.st.State != runtime.StateRunning {
			w.stopProbes(c)
			continue
		}
		if c.spec.LivenessProbe != nil || c.spec.StartupProbe != nil {
			w.stopProbes(c)
			if c.spec.ReadinessProbe != nil && w.net != nil {
				c.spec.LivenessProbe, c.spec.StartupProbe = nil, nil
				w.ensureProbes(ctx, pod, c)
			}
		}
	}
	if !gone {
		w.report(pod)
	}
	return w.terminationDelay(pod, grace, gone)
}

// stopContainers stops every container of the pod by the termination's
// deadline (SIGTERM, then SIGKILL), all at once, and ends the probes.
func (w *podWorker) stopContainers(ctx context.Context, pod *api.Pod) {
	var wg sync.WaitGroup
	for _, c := range w.ctrs {
		if c.id == "" {
			continue
		}
		id, name := c.id, c.spec.Name
		wg.Go(func() {
			w.m.event(pod, api.EventTypeNormal, "Killing", "Stopping container %s", name)
			// The stop outlives an agent shutdown: a pod being deleted is
			// not left half-stopped.
			if err := w.m.rt.Stop(context.WithoutCancel(ctx), id, time.Until(w.deadline)); err != nil && !errors.Is(err, runtime.ErrNotFound) {
				w.log.Warn("stopping container failed", "container", name, "err", err)
			}
		})
	}
	wg.Wait()
	w.stopAllProbes()
	for _, c := range w.ctrs {
		if c.id == "" {
			continue
		}
		if st, err := w.m.rt.Status(ctx, c.id); err == nil {
			c.st = st
		}
	}
}

// cleanUp follows the network teardown: the pod's final phase is set
// (unless gone), and its containers and directory are removed before the
// final DELETE (as the kubelet reclaims a pod's resources first): once
// the pod has left the API, nothing of it is left on the node.
func (w *podWorker) cleanUp(ctx context.Context, gone bool) {
	w.net = nil
	w.setNetNSPath("")
	if !gone && w.terminal == "" {
		w.terminal = api.PodSucceeded
		for _, c := range w.ctrs {
			if c.id != "" && c.st.ExitCode != 0 {
				w.terminal = api.PodFailed
			}
		}
	}
	for _, c := range w.ctrs {
		if c.id != "" {
			w.m.removeContainer(ctx, c.id)
		}
	}
	w.removePodCgroup()
	_ = os.RemoveAll(w.m.podDir(w.uid))
}

// teardownNetwork removes a finished pod's network (its IP is released).
func (w *podWorker) teardownNetwork(ctx context.Context) {
	if w.netDown || w.m.net == nil {
		return
	}
	w.setNetNSPath("")
	err := w.m.netns.do(func() error { return w.m.net.DelPod(ctx, w.uid) })
	if err != nil {
		w.log.Warn("pod network teardown failed", "err", err)
		return
	}
	w.netDown = true
}
