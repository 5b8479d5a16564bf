package netagent

import (
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Building a pod's status from its worker's state; the status manager
// (status.go) writes it.

// Waiting reasons, as the kubelet reports them.
const (
	reasonCreating     = "ContainerCreating"
	reasonCrashLoop    = "CrashLoopBackOff"
	reasonConfigError  = "CreateContainerConfigError"
	reasonRunError     = "RunContainerError"
	reasonCompleted    = "Completed"
	reasonError        = "Error"
	reasonUnknownState = "ContainerStatusUnknown"
)

// report computes the pod's status and hands it to the status manager.
func (w *podWorker) report(pod *api.Pod) {
	w.m.status.set(pod, w.buildStatus(pod))
}

// buildStatus is the pod's status from the worker's state. Transition
// times are carried over from the API's conditions when the status of a
// condition did not change.
func (w *podWorker) buildStatus(pod *api.Pod) api.PodStatus {
	now := api.NewTime(time.Now())
	prev := pod.Status
	st := api.PodStatus{
		Phase:    api.PodPending,
		QOSClass: prev.QOSClass,
	}
	if len(w.m.cfg.NodeIPs) > 0 {
		st.HostIP = w.m.cfg.NodeIPs[0].String()
		for _, a := range w.m.cfg.NodeIPs {
			st.HostIPs = append(st.HostIPs, api.HostIP{IP: a.String()})
		}
	}
	if prev.StartTime != nil {
		st.StartTime = prev.StartTime
	} else if !w.startTime.IsZero() {
		t := api.NewTime(w.startTime)
		st.StartTime = &t
	}
	switch {
	case w.net != nil && w.net.IP.IsValid():
		st.PodIP = w.net.IP.String()
		st.PodIPs = []api.PodIP{{IP: st.PodIP}}
	case w.netDown || w.terminal != "":
		// A finished pod keeps the IP it had, as the kubelet reports it.
		st.PodIP, st.PodIPs = prev.PodIP, prev.PodIPs
	}
	allReady, allStarted, anyRunning := true, true, false
	for _, s := range pod.Spec.Containers {
		c := w.ctrs[s.Name]
		cs := api.ContainerStatus{Name: s.Name, Image: s.Image, ImageID: ""}
		started := false
		if c == nil {
			cs.State.Waiting = &api.ContainerStateWaiting{Reason: reasonCreating}
			allReady, allStarted = false, false
			cs.Started = &started
			st.ContainerStatuses = append(st.ContainerStatuses, cs)
			continue
		}
		cs.RestartCount = c.restarts
		if c.last != nil {
			cs.LastState.Terminated = c.last
		}
		switch {
		case c.id != "" && c.st.State == runtime.StateRunning:
			anyRunning = true
			cs.ContainerID = w.m.containerID(c.id)
			cs.State.Running = &api.ContainerStateRunning{StartedAt: api.NewTime(c.st.StartedAt)}
			ps := w.probeSnapshot(c.id)
			started = ps.started
			cs.Ready = ps.started && ps.ready
		case c.id != "" && c.st.State == runtime.StateExited && c.waitReason != reasonCrashLoop:
			cs.ContainerID = w.m.containerID(c.id)
			cs.State.Terminated = w.terminatedState(c)
		default:
			reason, msg := c.waitReason, c.waitMsg
			if reason == "" {
				reason = reasonCreating
				if w.sandboxErr != "" {
					msg = w.sandboxErr
				}
			}
			if c.id != "" && c.waitReason == reasonCrashLoop {
				cs.LastState.Terminated = w.terminatedState(c)
			}
			cs.State.Waiting = &api.ContainerStateWaiting{Reason: reason, Message: msg}
		}
		cs.Started = &started
		if !cs.Ready {
			allReady = false
		}
		if !c.everStarted {
			allStarted = false
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	if w.rejected != "" {
		// Refused at admission: nothing ran, as the kubelet reports it.
		st.Reason, st.Message, st.ContainerStatuses = ReasonSysctlForbidden, w.rejected, nil
	}
	switch {
	case w.terminal != "":
		st.Phase = w.terminal
	case allStarted && len(pod.Spec.Containers) > 0 && (anyRunning || w.net != nil):
		st.Phase = api.PodRunning
	}
	ready := allReady && len(pod.Spec.Containers) > 0 && w.terminal == ""
	cond := func(typ string, ok bool, reason string) api.PodCondition {
		s := api.ConditionFalse
		if ok {
			s = api.ConditionTrue
		}
		c := api.PodCondition{Type: typ, Status: s, LastTransitionTime: now}
		if !ok {
			c.Reason = reason
		}
		for _, pc := range prev.Conditions {
			if pc.Type == typ && pc.Status == s {
				c.LastTransitionTime = pc.LastTransitionTime
			}
		}
		return c
	}
	notReadyReason := "ContainersNotReady"
	if w.terminal != "" {
		notReadyReason = "PodCompleted"
	}
	st.Conditions = []api.PodCondition{
		cond(api.PodInitialized, true, ""),
		cond(api.PodReady, ready, notReadyReason),
		cond(api.ContainersReady, ready, notReadyReason),
		cond(api.PodScheduled, true, ""),
	}
	if !ready && len(pod.Spec.Containers) > 0 {
		var names []string
		for _, cs := range st.ContainerStatuses {
			if !cs.Ready {
				names = append(names, cs.Name)
			}
		}
		if w.terminal == "" {
			msg := "containers with unready status: [" + strings.Join(names, " ") + "]"
			st.Conditions[1].Message, st.Conditions[2].Message = msg, msg
		}
	}
	return st
}

// terminatedState is the API form of an exited instance.
func (w *podWorker) terminatedState(c *ctr) *api.ContainerStateTerminated {
	st := c.st
	reason := reasonCompleted
	if st.ExitCode != 0 {
		reason = reasonError
	}
	if st.Reason != "" {
		reason = st.Reason // OOMKilled
	}
	t := &api.ContainerStateTerminated{
		ExitCode: int32(st.ExitCode), Reason: reason, ContainerID: w.m.containerID(c.id),
		StartedAt: api.NewTime(st.StartedAt), FinishedAt: api.NewTime(st.FinishedAt),
	}
	if st.ExitCode > 128 && st.ExitCode < 160 {
		t.Signal = int32(st.ExitCode - 128)
	}
	return t
}
