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

// terminate ends the pod: a Ready pod first keeps running for the
// termination delay (see terminationDelay), then containers get SIGTERM
// and the rest of the grace period (deletionGracePeriodSeconds, counted
// from the deletion), then SIGKILL; readiness
// keeps being probed meanwhile (the endpoint turns serving/terminating,
// not unready). Then the network goes, the final status is written and
// the pod is deleted with gracePeriodSeconds=0 and a UID precondition.
// A pod that left the API (gone) gets the same treatment minus the API
// writes.
func (w *podWorker) terminate(ctx context.Context, pod *api.Pod, gone bool) {
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
	if d := w.terminationDelay(pod, grace, gone); d > 0 {
		w.log.Info("delaying SIGTERM until the proxies dropped the endpoint", "delay", d)
		waitOrDone(ctx, d) // an agent shutdown goes on with the stop

	}
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
	// The network goes only after every process is dead.
	for attempt := 0; !w.netDown && w.m.net != nil; attempt++ {
		w.netDown = true
		if err := w.m.netns.do(func() error { return w.m.net.DelPod(ctx, w.uid) }); err != nil {
			w.netDown = false
			w.log.Warn("pod network teardown failed", "err", err, "attempt", attempt)
			if attempt >= 4 || !waitOrDone(ctx, time.Duration(attempt+1)*200*time.Millisecond) {
				break
			}
		}
	}
	w.net = nil
	if !gone {
		if w.terminal == "" {
			w.terminal = api.PodSucceeded
			for _, c := range w.ctrs {
				if c.id != "" && c.st.ExitCode != 0 {
					w.terminal = api.PodFailed
				}
			}
		}
	}
	// The containers and the pod's directory are removed before the final
	// DELETE (as the kubelet reclaims a pod's resources first): once the
	// pod has left the API, nothing of it is left on the node.
	for _, c := range w.ctrs {
		if c.id != "" {
			w.m.removeContainer(ctx, c.id)
		}
	}
	_ = os.RemoveAll(w.m.podDir(w.uid))
	if !gone {
		w.report(pod)
		if err := w.m.status.flush(ctx, w.uid); err != nil {
			w.log.Warn("final pod status not written", "err", err)
		}
		w.deletePod(ctx, pod)
	}
	w.m.status.forget(w.uid)
	w.log.Info("pod terminated")
}

// deletePod finishes the graceful deletion: DELETE with
// gracePeriodSeconds=0 and a UID precondition, retried until it lands, the
// pod is gone, or it is another pod of that name.
func (w *podWorker) deletePod(ctx context.Context, pod *api.Pod) {
	zero := int64(0)
	opts := client.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &client.Preconditions{UID: w.uid}}
	delay := 200 * time.Millisecond
	for {
		err := w.m.api.Delete(ctx, w.m.podRes, pod.Namespace, pod.Name, opts)
		if err == nil || client.IsNotFound(err) || client.IsConflict(err) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("deleting the pod failed, retrying", "err", err)
		if !waitOrDone(ctx, delay) {
			return
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// teardownNetwork removes a finished pod's network (its IP is released).
func (w *podWorker) teardownNetwork(ctx context.Context) {
	if w.netDown || w.m.net == nil {
		return
	}
	err := w.m.netns.do(func() error { return w.m.net.DelPod(ctx, w.uid) })
	if err != nil {
		w.log.Warn("pod network teardown failed", "err", err)
		return
	}
	w.netDown = true
}

// waitOrDone waits d and reports true, or false once ctx is done first.
func waitOrDone(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
