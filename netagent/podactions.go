package netagent

import (
	"fmt"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// The plan step of a pod worker's sync, in the shape of the kubelet's
// computePodActions: what the worker holds of a pod and what it has just
// observed go in (podState), what to do comes out (podActions), and
// nothing is done here. The worker (worker.go) observes, plans, then
// applies the plan.

// podState is what a sync plans from.
type podState struct {
	pod *api.Pod
	// gone: the pod left the API.
	gone bool
	now  time.Time
	// terminal is Succeeded or Failed once the pod finished.
	terminal string
	// hasSandbox: the pod has its network; otherwise sandboxAt is when
	// the next attempt may be made.
	hasSandbox bool
	sandboxAt  time.Time
	// backoffBase and backoffMax bound the restart back-off.
	backoffBase, backoffMax time.Duration
	// containers by name, for the spec's containers (observed only when
	// the plan can act on them: see podWorker.sync).
	containers map[string]containerState
}

// containerState is what the worker holds of one container of the spec,
// as it has just observed it.
type containerState struct {
	// id is the current instance ("": none) and status its runtime status.
	id     string
	status runtime.ContainerStatus
	// statusErr: the runtime could not report the instance this time.
	statusErr bool
	// vanished: the instance disappeared from the runtime at this look
	// (its id is "" now).
	vanished bool
	// killed: the instance was killed for a failed probe.
	killed bool
	// notBefore is when the next start may happen; backoff the delay
	// before the restart after that.
	notBefore time.Time
	backoff   time.Duration
	// liveFailed and startFailed are the instance's probe results.
	liveFailed, startFailed bool
}

// podActions is a sync's plan.
type podActions struct {
	// KillPod: the pod is being deleted or left the API: terminate it
	// (termination.go) and nothing else.
	KillPod bool
	// Finished: the pod finished earlier: make sure its network is gone
	// and report, nothing else.
	Finished bool
	// CreateSandbox: give the pod its network now. SandboxWait, when set,
	// is the next attempt after a failure (the containers wait for it).
	CreateSandbox bool
	SandboxWait   time.Time
	// Containers are the plans of the spec's containers, in spec order;
	// empty while there is no sandbox to run them in.
	Containers []containerActions
	// Phase is Succeeded or Failed when every container has exited for
	// good under the restart policy: the pod finishes.
	Phase string
}

// containerAction is what to do with one container.
type containerAction int

const (
	// actNone: nothing (it runs, or it exited for good).
	actNone containerAction = iota
	// actRecheck: its state is in flux or unknown: look again at At.
	actRecheck
	// actKill: its instance failed a liveness or startup probe: stop it
	// (Probe, Grace); it restarts per the policy once it has exited.
	actKill
	// actBackOff: it waits until At for its next start (Reason).
	actBackOff
	// actRestart: its exited instance is replaced: recorded as the last
	// state, removed, and a new one started.
	actRestart
	// actStart: it has no instance: start one (first start, or a retry of
	// a failed start).
	actStart
)

func (a containerAction) String() string {
	switch a {
	case actNone:
		return "none"
	case actRecheck:
		return "recheck"
	case actKill:
		return "kill"
	case actBackOff:
		return "back-off"
	case actRestart:
		return "restart"
	case actStart:
		return "start"
	}
	return fmt.Sprintf("containerAction(%d)", int(a))
}

// containerActions is the plan of one container.
type containerActions struct {
	Name   string
	Action containerAction
	// Reason says why, for logs and tests (a waiting reason for
	// actBackOff after an exit).
	Reason string
	// Probe ("Liveness" or "Startup") and Grace of an actKill.
	Probe string
	Grace time.Duration
	// Schedule, when set, is the back-off this sync sets after an exit:
	// the next start at NotBefore, then Backoff for the one after.
	Schedule *restartSchedule
	// At is when to look again (zero: only on events).
	At time.Time
}

// restartSchedule is a container's back-off state after an exit.
type restartSchedule struct {
	NotBefore time.Time
	Backoff   time.Duration
}

// backoffReset: a container that ran this long before exiting restarts
// without back-off (its back-off starts over).
const backoffReset = 10 * time.Minute

// recheckAfter is how soon a container whose state is in flux is looked
// at again.
const recheckAfter = time.Second

// computePodActions plans one sync of the pod (see podActions).
func computePodActions(s podState) podActions {
	var pa podActions
	switch {
	case s.gone || s.pod.DeletionTimestamp != nil:
		pa.KillPod = true
		return pa
	case s.terminal != "":
		pa.Finished = true
		return pa
	case !s.hasSandbox && s.now.Before(s.sandboxAt):
		pa.SandboxWait = s.sandboxAt
		return pa
	case !s.hasSandbox:
		pa.CreateSandbox = true
	}
	policy := restartPolicy(s.pod)
	for _, spec := range s.pod.Spec.Containers {
		pa.Containers = append(pa.Containers, computeContainerActions(s, policy, spec, s.containers[spec.Name]))
	}
	pa.Phase = finishedPhase(s.pod, s.containers)
	return pa
}

// computeContainerActions plans one container (see computePodActions).
func computeContainerActions(s podState, policy string, spec api.Container, c containerState) containerActions {
	ca := containerActions{Name: spec.Name}
	now := s.now
	switch {
	case c.statusErr:
		ca.Action, ca.Reason, ca.At = actRecheck, "the runtime did not report the container", now.Add(recheckAfter)
		return ca
	case c.vanished && !restartAllowed(policy, 137):
		ca.Reason = "the container vanished from the runtime; the restart policy keeps it down"
		return ca
	case c.id != "" && c.status.State == runtime.StateRunning:
		if (c.liveFailed || c.startFailed) && !c.killed {
			ca.Action, ca.Probe = actKill, "Liveness"
			p := spec.LivenessProbe
			if c.startFailed {
				ca.Probe, p = "Startup", spec.StartupProbe
			}
			ca.Reason = ca.Probe + " probe failed"
			ca.Grace = podGracePeriod(s.pod)
			if p != nil && p.TerminationGracePeriodSeconds != nil {
				ca.Grace = time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
			}
		}
		return ca
	case c.id != "" && c.status.State != runtime.StateExited:
		ca.Action, ca.Reason, ca.At = actRecheck, "the container is "+string(c.status.State), now.Add(recheckAfter)
		return ca
	case c.id != "":
		// Exited.
		if !restartable(policy, c) {
			ca.Reason = "exited for good under restartPolicy " + policy
			return ca
		}
		notBefore := c.notBefore
		if notBefore.IsZero() {
			backoff := c.backoff
			if c.status.FinishedAt.Sub(c.status.StartedAt) >= backoffReset {
				backoff = 0
			}
			next := s.backoffBase
			if backoff != 0 {
				next = min(2*backoff, s.backoffMax)
			}
			notBefore = now.Add(backoff)
			ca.Schedule = &restartSchedule{NotBefore: notBefore, Backoff: next}
		}
		if now.Before(notBefore) {
			ca.Action, ca.Reason, ca.At = actBackOff, reasonCrashLoop, notBefore
			return ca
		}
		ca.Action, ca.Reason = actRestart, fmt.Sprintf("exited with %d; restartPolicy %s", c.status.ExitCode, policy)
		return ca
	}
	// No instance.
	if !c.notBefore.IsZero() && now.Before(c.notBefore) {
		ca.Action, ca.Reason, ca.At = actBackOff, "start back-off", c.notBefore
		return ca
	}
	ca.Action, ca.Reason = actStart, "no instance"
	if c.vanished {
		ca.Reason = "the container vanished from the runtime"
	}
	return ca
}

// restartable: an exited instance is restarted under policy (one killed
// for a failed probe restarts unless the policy is Never).
func restartable(policy string, c containerState) bool {
	return restartAllowed(policy, c.status.ExitCode) || (c.killed && policy != api.RestartPolicyNever)
}

// finishedPhase is Succeeded or Failed once every container has exited
// for good under the restart policy; "" otherwise.
func finishedPhase(pod *api.Pod, ctrs map[string]containerState) string {
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	policy := restartPolicy(pod)
	failed := false
	for _, s := range pod.Spec.Containers {
		c, ok := ctrs[s.Name]
		if !ok || c.id == "" || c.status.State != runtime.StateExited || restartable(policy, c) {
			return ""
		}
		if c.status.ExitCode != 0 {
			failed = true
		}
	}
	if failed {
		return api.PodFailed
	}
	return api.PodSucceeded
}

// restartPolicy of the pod (default Always).
func restartPolicy(pod *api.Pod) string {
	if pod.Spec.RestartPolicy == "" {
		return api.RestartPolicyAlways
	}
	return pod.Spec.RestartPolicy
}

// restartAllowed: policy restarts a container that exited with exitCode.
func restartAllowed(policy string, exitCode int) bool {
	switch policy {
	case api.RestartPolicyNever:
		return false
	case api.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// podGracePeriod is the pod's termination grace period.
func podGracePeriod(pod *api.Pod) time.Duration {
	if pod.DeletionGracePeriodSeconds != nil {
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return DefaultGracePeriod
}

// String is the plan in one line, for logs and test failures.
func (pa podActions) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kill=%v finished=%v sandbox=%v", pa.KillPod, pa.Finished, pa.CreateSandbox)
	if !pa.SandboxWait.IsZero() {
		fmt.Fprintf(&b, " sandboxWait=%v", pa.SandboxWait.Format(time.RFC3339Nano))
	}
	for _, c := range pa.Containers {
		fmt.Fprintf(&b, " %s:%v", c.Name, c.Action)
	}
	if pa.Phase != "" {
		fmt.Fprintf(&b, " phase=%s", pa.Phase)
	}
	return b.String()
}
