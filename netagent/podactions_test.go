package netagent

import (
	"reflect"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestComputePodActions(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	base, maxBO := 10*time.Second, 5*time.Minute
	grace := func(s int64) *int64 { return &s }
	app := api.Container{Name: "app"}
	side := api.Container{Name: "side"}
	pod := func(policy string, cs ...api.Container) *api.Pod {
		if len(cs) == 0 {
			cs = []api.Container{app}
		}
		return &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "default", UID: "u"},
			Spec: api.PodSpec{RestartPolicy: policy, Containers: cs}}
	}
	deleted := pod("")
	deleted.DeletionTimestamp = &api.Time{Time: now}
	running := func(id string) containerState {
		return containerState{id: id, status: runtime.ContainerStatus{ID: id, State: runtime.StateRunning, StartedAt: now.Add(-time.Minute)}}
	}
	exited := func(id string, code int, ran time.Duration) containerState {
		return containerState{id: id, status: runtime.ContainerStatus{ID: id, State: runtime.StateExited, ExitCode: code,
			StartedAt: now.Add(-ran - time.Second), FinishedAt: now.Add(-time.Second)}}
	}
	with := func(c containerState, f func(*containerState)) containerState { f(&c); return c }
	liveness := api.Container{Name: "app", LivenessProbe: execProbe("live", 1, 1)}
	startup := api.Container{Name: "app", StartupProbe: &api.Probe{TerminationGracePeriodSeconds: grace(3)}}

	for _, tc := range []struct {
		name string
		in   podState
		want podActions
	}{
		{
			name: "deleted pod is killed",
			in:   podState{pod: deleted, hasSandbox: true, containers: map[string]containerState{"app": running("c1")}},
			want: podActions{KillPod: true},
		},
		{
			name: "pod gone from the API is killed",
			in:   podState{pod: pod(""), gone: true, hasSandbox: true},
			want: podActions{KillPod: true},
		},
		{
			name: "finished pod only tears down and reports",
			in:   podState{pod: pod(""), terminal: api.PodSucceeded, hasSandbox: true},
			want: podActions{Finished: true},
		},
		{
			name: "new pod: sandbox, then every container starts",
			in:   podState{pod: pod("", app, side)},
			want: podActions{CreateSandbox: true, Containers: []containerActions{
				{Name: "app", Action: actStart, Reason: "no instance"},
				{Name: "side", Action: actStart, Reason: "no instance"},
			}},
		},
		{
			name: "sandbox back-off: nothing until it is due",
			in:   podState{pod: pod(""), sandboxAt: now.Add(4 * time.Second)},
			want: podActions{SandboxWait: now.Add(4 * time.Second)},
		},
		{
			name: "running container: nothing to do",
			in:   podState{pod: pod(""), hasSandbox: true, containers: map[string]containerState{"app": running("c1")}},
			want: podActions{Containers: []containerActions{{Name: "app"}}},
		},
		{
			name: "created container is looked at again",
			in: podState{pod: pod(""), hasSandbox: true, containers: map[string]containerState{
				"app": {id: "c1", status: runtime.ContainerStatus{State: runtime.StateCreated}}}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRecheck, Reason: "the container is created", At: now.Add(time.Second)}}},
		},
		{
			name: "runtime status error is looked at again",
			in:   podState{pod: pod(""), hasSandbox: true, containers: map[string]containerState{"app": with(running("c1"), func(c *containerState) { c.statusErr = true })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRecheck, Reason: "the runtime did not report the container", At: now.Add(time.Second)}}},
		},
		{
			name: "liveness failure kills with the pod's grace",
			in: podState{pod: pod("", liveness), hasSandbox: true, containers: map[string]containerState{
				"app": with(running("c1"), func(c *containerState) { c.liveFailed = true })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actKill, Probe: "Liveness", Reason: "Liveness probe failed", Grace: DefaultGracePeriod}}},
		},
		{
			name: "startup failure kills with the probe's grace",
			in: podState{pod: pod("", startup), hasSandbox: true, containers: map[string]containerState{
				"app": with(running("c1"), func(c *containerState) { c.startFailed, c.liveFailed = true, true })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actKill, Probe: "Startup", Reason: "Startup probe failed", Grace: 3 * time.Second}}},
		},
		{
			name: "a container already killed is not killed again",
			in: podState{pod: pod("", liveness), hasSandbox: true, containers: map[string]containerState{
				"app": with(running("c1"), func(c *containerState) { c.liveFailed, c.killed = true, true })}},
			want: podActions{Containers: []containerActions{{Name: "app"}}},
		},
		{
			name: "first exit restarts at once and schedules the base back-off",
			in: podState{pod: pod(""), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": exited("c1", 1, time.Minute)}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRestart, Reason: "exited with 1; restartPolicy Always",
				Schedule: &restartSchedule{NotBefore: now, Backoff: base}}}},
		},
		{
			name: "next exit backs off and doubles",
			in: podState{pod: pod(""), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": with(exited("c2", 1, time.Minute), func(c *containerState) { c.backoff = 20 * time.Second })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actBackOff, Reason: reasonCrashLoop, At: now.Add(20 * time.Second),
				Schedule: &restartSchedule{NotBefore: now.Add(20 * time.Second), Backoff: 40 * time.Second}}}},
		},
		{
			name: "back-off is capped",
			in: podState{pod: pod(""), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": with(exited("c2", 1, time.Minute), func(c *containerState) { c.backoff = 4 * time.Minute })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actBackOff, Reason: reasonCrashLoop, At: now.Add(4 * time.Minute),
				Schedule: &restartSchedule{NotBefore: now.Add(4 * time.Minute), Backoff: maxBO}}}},
		},
		{
			name: "a container that ran ten minutes starts its back-off over",
			in: podState{pod: pod(""), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": with(exited("c2", 1, backoffReset), func(c *containerState) { c.backoff = 4 * time.Minute })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRestart, Reason: "exited with 1; restartPolicy Always",
				Schedule: &restartSchedule{NotBefore: now, Backoff: base}}}},
		},
		{
			name: "scheduled restart still waiting",
			in: podState{pod: pod(""), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": with(exited("c2", 1, time.Minute), func(c *containerState) { c.notBefore = now.Add(5 * time.Second) })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actBackOff, Reason: reasonCrashLoop, At: now.Add(5 * time.Second)}}},
		},
		{
			name: "scheduled restart due",
			in: podState{pod: pod(""), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": with(exited("c2", 1, time.Minute), func(c *containerState) { c.notBefore = now })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRestart, Reason: "exited with 1; restartPolicy Always"}}},
		},
		{
			name: "OnFailure: success is final and the pod Succeeded",
			in: podState{pod: pod(api.RestartPolicyOnFailure), hasSandbox: true,
				containers: map[string]containerState{"app": exited("c1", 0, time.Minute)}},
			want: podActions{Containers: []containerActions{{Name: "app", Reason: "exited for good under restartPolicy OnFailure"}}, Phase: api.PodSucceeded},
		},
		{
			name: "OnFailure: failure restarts",
			in: podState{pod: pod(api.RestartPolicyOnFailure), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": exited("c1", 2, time.Minute)}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRestart, Reason: "exited with 2; restartPolicy OnFailure",
				Schedule: &restartSchedule{NotBefore: now, Backoff: base}}}},
		},
		{
			name: "OnFailure: a probe kill restarts even with exit code 0",
			in: podState{pod: pod(api.RestartPolicyOnFailure), hasSandbox: true, backoffBase: base, backoffMax: maxBO,
				containers: map[string]containerState{"app": with(exited("c1", 0, time.Minute), func(c *containerState) { c.killed = true })}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actRestart, Reason: "exited with 0; restartPolicy OnFailure",
				Schedule: &restartSchedule{NotBefore: now, Backoff: base}}}},
		},
		{
			name: "Never: one failure fails the pod once all have exited",
			in: podState{pod: pod(api.RestartPolicyNever, app, side), hasSandbox: true,
				containers: map[string]containerState{"app": exited("c1", 0, time.Minute), "side": exited("c2", 3, time.Minute)}},
			want: podActions{Containers: []containerActions{
				{Name: "app", Reason: "exited for good under restartPolicy Never"},
				{Name: "side", Reason: "exited for good under restartPolicy Never"},
			}, Phase: api.PodFailed},
		},
		{
			name: "Never: a running container keeps the pod going",
			in: podState{pod: pod(api.RestartPolicyNever, app, side), hasSandbox: true,
				containers: map[string]containerState{"app": exited("c1", 0, time.Minute), "side": running("c2")}},
			want: podActions{Containers: []containerActions{
				{Name: "app", Reason: "exited for good under restartPolicy Never"},
				{Name: "side"},
			}},
		},
		{
			name: "vanished container restarts under Always",
			in: podState{pod: pod(""), hasSandbox: true,
				containers: map[string]containerState{"app": {vanished: true}}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actStart, Reason: "the container vanished from the runtime"}}},
		},
		{
			name: "vanished container stays down under Never",
			in: podState{pod: pod(api.RestartPolicyNever), hasSandbox: true,
				containers: map[string]containerState{"app": {vanished: true}}},
			want: podActions{Containers: []containerActions{{Name: "app", Reason: "the container vanished from the runtime; the restart policy keeps it down"}}},
		},
		{
			name: "failed start waits for its back-off",
			in: podState{pod: pod(""), hasSandbox: true,
				containers: map[string]containerState{"app": {notBefore: now.Add(10 * time.Second), backoff: 20 * time.Second}}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actBackOff, Reason: "start back-off", At: now.Add(10 * time.Second)}}},
		},
		{
			name: "failed start retried once due",
			in: podState{pod: pod(""), hasSandbox: true,
				containers: map[string]containerState{"app": {notBefore: now.Add(-time.Millisecond), backoff: 20 * time.Second}}},
			want: podActions{Containers: []containerActions{{Name: "app", Action: actStart, Reason: "no instance"}}},
		},
		{
			name: "pod without containers never finishes",
			in:   podState{pod: &api.Pod{}, hasSandbox: true},
			want: podActions{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.now = now
			if tc.in.containers == nil {
				tc.in.containers = map[string]containerState{}
			}
			got := computePodActions(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan:\n got %v\n%#v\nwant %v\n%#v", got, got, tc.want, tc.want)
			}
		})
	}
}
