package netagent

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// harness runs a podManager (the agent's pod half) over the fakes, inside
// a synctest bubble: time is virtual, so back-offs and grace periods run
// exactly and instantly.
type harness struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelFunc
	log    *callLog
	rt     *fakeRuntime
	net    *fakeNet
	api    *fakeAPI
	rec    *fakeRecorder
	m      *podManager
	cfg    *Config
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newHarness builds the fakes; prepare may plant leftovers of an earlier
// agent before the manager starts over the pods already in the API.
func newHarness(t *testing.T, prepare func(h *harness)) *harness {
	t.Helper()
	log := &callLog{start: time.Now()}
	h := &harness{t: t, log: log, rt: newFakeRuntime(log), net: newFakeNet(log), api: newFakeAPI(log), rec: &fakeRecorder{}}
	dir := t.TempDir()
	rc := filepath.Join(dir, "host-resolv.conf")
	if err := os.WriteFile(rc, []byte("nameserver 192.0.2.53\nsearch example.org\noptions edns0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.cfg = &Config{Server: "https://127.0.0.1:1", DataDir: dir, NodeName: "node-1",
		NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")}, HostResolvConf: rc, Logger: testLogger(t)}
	if err := h.cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(h)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.m = newPodManager(h.cfg, h.rt, h.net, nil, fakeAPIClient{h.api}, h.api, h.rec, fakeGateway)
	h.api.notify = func(obj api.Object, deleted bool) {
		if deleted {
			h.m.onPodDelete(obj)
		} else {
			h.m.onPod(obj)
		}
	}
	var list []api.Object
	h.api.mu.Lock()
	for _, p := range h.api.pods {
		list = append(list, api.DeepCopy(p))
	}
	h.api.mu.Unlock()
	h.m.start(h.ctx, list)
	h.m.wg.Go(func() { h.m.run(h.ctx) })
	h.m.wg.Go(func() { h.m.relist(h.ctx) })
	h.m.wg.Go(func() { h.m.status.run(h.ctx, 2) })
	return h
}

// stop ends the manager and waits for every goroutine (the bubble needs
// them gone).
func (h *harness) stop() {
	h.cancel()
	h.m.wg.Wait()
}

// waitFor advances virtual time in small steps until cond holds.
func (h *harness) waitFor(what string, limit time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: not true after %v; calls:\n%s", what, limit, strings.Join(h.log.all(), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *harness) containerStatus(pod, name string) api.ContainerStatus {
	p := h.api.pod(pod)
	if p == nil {
		return api.ContainerStatus{}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == name {
			return cs
		}
	}
	return api.ContainerStatus{}
}

func execProbe(cmd string, period, failures int32) *api.Probe {
	return &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{cmd}}},
		PeriodSeconds: period, FailureThreshold: failures}
}

func testPod(name string, containers ...api.Container) *api.Pod {
	if len(containers) == 0 {
		containers = []api.Container{{Name: "app", Image: "netexec", Command: []string{"netexec"}}}
	}
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + name},
		Spec:       api.PodSpec{NodeName: "node-1", Containers: containers},
		Status: api.PodStatus{Phase: api.PodPending, Conditions: []api.PodCondition{
			{Type: api.PodScheduled, Status: api.ConditionTrue}}},
	}
}

func TestPodLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		defer h.stop()
		grace := int64(5)
		pod := testPod("web", api.Container{Name: "app", Image: "netexec", Command: []string{"netexec"},
			ReadinessProbe: execProbe("ready", 1, 2), LivenessProbe: execProbe("live", 1, 2)})
		pod.Spec.TerminationGracePeriodSeconds = &grace
		h.rt.ignoreTerm["app"] = true
		h.api.put(pod)

		// create -> running -> ready (the readiness probe passes at once).
		h.waitFor("pod Ready", 5*time.Second, func() bool { p := h.api.pod("web"); return p != nil && readyOf(p) })
		p := h.api.pod("web")
		if p.Status.Phase != api.PodRunning || p.Status.PodIP != "10.244.1.2" || p.Status.HostIP != "192.0.2.10" ||
			len(p.Status.PodIPs) != 1 || p.Status.StartTime == nil {
			t.Fatalf("running status: %+v", p.Status)
		}
		cs := h.containerStatus("web", "app")
		if cs.State.Running == nil || !cs.Ready || cs.RestartCount != 0 || cs.Started == nil || !*cs.Started ||
			!strings.HasPrefix(cs.ContainerID, "fake://") {
			t.Fatalf("container status: %+v", cs)
		}
		for _, typ := range []string{api.PodInitialized, api.ContainersReady, api.PodReady, api.PodScheduled} {
			found := false
			for _, c := range p.Status.Conditions {
				found = found || (c.Type == typ && c.Status == api.ConditionTrue)
			}
			if !found {
				t.Fatalf("condition %s not True: %+v", typ, p.Status.Conditions)
			}
		}
		// The pod's files.
		dir := h.m.podDir("uid-web")
		rc, _ := os.ReadFile(filepath.Join(dir, "resolv.conf"))
		if string(rc) != "nameserver 10.244.1.1\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n" {
			t.Fatalf("resolv.conf:\n%s", rc)
		}
		hosts, _ := os.ReadFile(filepath.Join(dir, "hosts"))
		if !strings.Contains(string(hosts), "10.244.1.2\tweb\n") {
			t.Fatalf("hosts:\n%s", hosts)
		}
		// Written only on change: no status write while nothing changes.
		n := len(h.api.writes())
		time.Sleep(30 * time.Second)
		if m := len(h.api.writes()); m != n {
			t.Fatalf("%d status writes while nothing changed", m-n)
		}

		// Readiness flips both ways.
		h.rt.setHealth("web", "app", "ready", false)
		h.waitFor("pod not Ready", 5*time.Second, func() bool { return !readyOf(h.api.pod("web")) })
		h.rt.setHealth("web", "app", "ready", true)
		h.waitFor("pod Ready again", 3*time.Second, func() bool { return readyOf(h.api.pod("web")) })

		// A liveness failure restarts the container (restartPolicy Always).
		first := h.containerStatus("web", "app").ContainerID
		h.rt.ignoreTerm["app"] = false
		h.rt.mu.Lock()
		for _, c := range h.rt.containers {
			c.ignoreTerm = false
		}
		h.rt.mu.Unlock()
		h.rt.setHealth("web", "app", "live", false)
		h.waitFor("restart after liveness failure", 10*time.Second, func() bool {
			return h.containerStatus("web", "app").RestartCount == 1 && h.containerStatus("web", "app").State.Running != nil
		})
		cs = h.containerStatus("web", "app")
		if cs.ContainerID == first || cs.LastState.Terminated == nil || cs.LastState.Terminated.ExitCode != 143 ||
			cs.LastState.Terminated.ContainerID != first {
			t.Fatalf("after the liveness restart: %+v (last %+v)", cs, cs.LastState.Terminated)
		}
		if !h.rec.has("Unhealthy: Liveness probe failed") || !h.rec.has("failed liveness probe, will be restarted") {
			t.Fatalf("events: %v", h.rec.events)
		}
		h.rt.setHealth("web", "app", "live", true)

		// Crashes back off 10s, 20s, 40s (the first restart was immediate).
		var crashAt []time.Time
		var startAt []time.Time
		for i := range 3 {
			h.waitFor("running", 2*time.Minute, func() bool { return len(h.rt.running("web")) == 1 })
			time.Sleep(time.Second)
			crashAt = append(crashAt, time.Now())
			if !h.rt.crash("web", "app", 2) {
				t.Fatal("nothing to crash")
			}
			want := int32(2 + i)
			h.waitFor("restart", 2*time.Minute, func() bool {
				return h.containerStatus("web", "app").RestartCount == want && len(h.rt.running("web")) == 1
			})
			startAt = append(startAt, time.Now())
		}
		for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
			got := startAt[i].Sub(crashAt[i])
			if got < want || got > want+1500*time.Millisecond {
				t.Fatalf("restart %d after %v, want %v back-off", i+2, got, want)
			}
		}
		h.waitFor("Ready after the crash loop", 5*time.Second, func() bool { return readyOf(h.api.pod("web")) })

		// Graceful deletion: SIGTERM is ignored, SIGKILL after the grace;
		// Ready stays as is meanwhile; the network goes after the kill;
		// the status is reported, then the pod is deleted with grace 0
		// and a UID precondition.
		for _, c := range h.rt.containers {
			c.ignoreTerm = true
		}
		writesBefore := len(h.api.writes())
		from := len(h.log.all())
		deletedAt := time.Since(h.log.start).Round(100 * time.Millisecond)
		h.api.markDeleted("web", 7)
		h.waitFor("pod gone from the API", 15*time.Second, func() bool { return h.api.pod("web") == nil })
		h.waitFor("worker gone", time.Second, func() bool { return h.m.workerCount() == 0 })
		term := h.log.find("sigterm web/app", from)
		kill := h.log.find("sigkill web/app", from)
		del := h.log.find("delpod uid-web", from)
		final := h.log.find("status web phase=Failed ready=false", from)
		gone := h.log.find("delete web grace=0 uid=true", from)
		if term < 0 || kill < 0 || del < 0 || final < 0 || gone < 0 || !(term < kill && kill < del && del < final && final < gone) {
			t.Fatalf("termination order wrong (term %d kill %d delpod %d status %d delete %d):\n%s",
				term, kill, del, final, gone, strings.Join(h.log.all()[from:], "\n"))
		}
		if !strings.Contains(h.log.all()[term], "grace=7s") || !strings.HasPrefix(h.log.all()[kill], h.log.all()[term][:2]) {
			// The SIGKILL lands 7s after SIGTERM: compare the timestamps.
			t.Logf("term %q kill %q", h.log.all()[term], h.log.all()[kill])
		}
		// The Ready pod keeps running for the termination delay (2s, so
		// that proxies drop it first), then SIGTERM; SIGKILL comes at the
		// end of the 7s grace counted from the deletion.
		tTerm, tKill := stamp(t, h.log.all()[term]), stamp(t, h.log.all()[kill])
		if d := tTerm - deletedAt; d < DefaultTerminationDelay || d > DefaultTerminationDelay+500*time.Millisecond {
			t.Fatalf("SIGTERM %v after the deletion, want the %v termination delay", d, DefaultTerminationDelay)
		}
		if d := tKill - deletedAt; d < 7*time.Second || d > 7500*time.Millisecond {
			t.Fatalf("SIGKILL %v after the deletion, want the 7s grace", d)
		}
		for _, st := range h.api.writes()[writesBefore:] {
			p := &api.Pod{Status: st}
			if st.Phase == api.PodRunning && !readyOf(p) {
				t.Fatalf("a running pod turned unready during its grace period: %+v", st)
			}
		}
		if h.net.has("uid-web") {
			t.Fatal("the pod network is still there")
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("the pod dir is still there: %v", err)
		}
		h.waitFor("worker gone", time.Second, func() bool { return h.m.workerCount() == 0 })
	})
}

// stamp reads the virtual time a call was logged at.
func stamp(t *testing.T, call string) time.Duration {
	t.Helper()
	f := strings.Fields(call)
	d, err := time.ParseDuration(f[0])
	if err != nil {
		t.Fatalf("call %q: %v", call, err)
	}
	return d
}

func TestRestartPolicies(t *testing.T) {
	cases := []struct {
		name      string
		policy    string
		exit      int
		wantPhase string
		restarts  int32
	}{
		{"Never, exit 0", api.RestartPolicyNever, 0, api.PodSucceeded, 0},
		{"Never, exit 1", api.RestartPolicyNever, 1, api.PodFailed, 0},
		{"OnFailure, exit 0", api.RestartPolicyOnFailure, 0, api.PodSucceeded, 0},
		{"OnFailure, exit 3 restarts", api.RestartPolicyOnFailure, 3, api.PodRunning, 1},
		{"Always, exit 0 restarts", api.RestartPolicyAlways, 0, api.PodRunning, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, nil)
				defer h.stop()
				pod := testPod("job")
				pod.Spec.RestartPolicy = tc.policy
				h.api.put(pod)
				h.waitFor("running", 5*time.Second, func() bool { return len(h.rt.running("job")) == 1 })
				time.Sleep(2 * time.Second)
				h.rt.crash("job", "app", tc.exit)
				time.Sleep(5 * time.Second)
				p := h.api.pod("job")
				cs := h.containerStatus("job", "app")
				if p.Status.Phase != tc.wantPhase || cs.RestartCount != tc.restarts {
					t.Fatalf("phase %s restarts %d, want %s %d (state %+v)", p.Status.Phase, cs.RestartCount, tc.wantPhase, tc.restarts, cs.State)
				}
				finished := tc.wantPhase != api.PodRunning
				if finished {
					if cs.State.Terminated == nil || int(cs.State.Terminated.ExitCode) != tc.exit || readyOf(p) {
						t.Fatalf("finished container: %+v ready %v", cs, readyOf(p))
					}
					if h.net.has("uid-job") {
						t.Fatal("a finished pod keeps its network")
					}
					if p.Status.PodIP == "" {
						t.Fatal("a finished pod lost its podIP in the status")
					}
				} else if !h.net.has("uid-job") || !readyOf(p) {
					t.Fatalf("restarted pod: network %v ready %v", h.net.has("uid-job"), readyOf(p))
				}
			})
		})
	}
}

func TestAdoptionAfterRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var oldID string
		started := time.Now().Add(-time.Hour)
		h := newHarness(t, func(h *harness) {
			pod := testPod("kept", api.Container{Name: "app", Image: "netexec", Command: []string{"netexec"},
				ReadinessProbe: execProbe("ready", 10, 3)})
			// What the earlier agent left: a running container, the pod's
			// network, and the status it reported.
			pn, _ := h.net.AddPod(context.Background(), "uid-kept", "default", "kept", nil)
			oldID = h.rt.adopt(runtime.Sandbox{PodUID: "uid-kept", Namespace: "default", Name: "kept"}, "app", started, runtime.StateRunning)
			yes := true
			now := api.NewTime(started)
			pod.Status = api.PodStatus{Phase: api.PodRunning, PodIP: pn.IP.String(), PodIPs: []api.PodIP{{IP: pn.IP.String()}},
				HostIP: "192.0.2.10", HostIPs: []api.HostIP{{IP: "192.0.2.10"}}, StartTime: &now,
				Conditions: []api.PodCondition{
					{Type: api.PodInitialized, Status: api.ConditionTrue, LastTransitionTime: now},
					{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: now},
					{Type: api.ContainersReady, Status: api.ConditionTrue, LastTransitionTime: now},
					{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: now}},
				ContainerStatuses: []api.ContainerStatus{{Name: "app", Image: "netexec", Ready: true, RestartCount: 3, Started: &yes,
					ContainerID: "fake://" + oldID, State: api.ContainerState{Running: &api.ContainerStateRunning{StartedAt: now}}}}}
			h.api.put(pod)
			// A pod deleted while the agent was away left a container and
			// a network behind.
			h.rt.adopt(runtime.Sandbox{PodUID: "uid-gone", Namespace: "default", Name: "gone"}, "app", started, runtime.StateRunning)
			h.net.AddPod(context.Background(), "uid-gone", "default", "gone", nil)
			if err := os.MkdirAll(filepath.Join(h.cfg.DataDir, "pods", "uid-gone"), 0o755); err != nil {
				t.Fatal(err)
			}
			h.log.calls = nil
		})
		defer h.stop()
		time.Sleep(20 * time.Second)
		for _, c := range h.log.all() {
			if strings.Contains(c, "start kept/") || strings.Contains(c, "sigterm kept/") {
				t.Fatalf("the adopted pod was restarted: %s", c)
			}
		}
		running := h.rt.running("kept")
		if len(running) != 1 || running[0].ID != oldID {
			t.Fatalf("running after adoption: %+v, want %s", running, oldID)
		}
		p := h.api.pod("kept")
		if p.Status.PodIP != "10.244.1.2" || !readyOf(p) || h.containerStatus("kept", "app").RestartCount != 3 {
			t.Fatalf("adopted pod status: ip %s ready %v restarts %d", p.Status.PodIP, readyOf(p), h.containerStatus("kept", "app").RestartCount)
		}
		for _, st := range h.api.writes() {
			if !readyOf(&api.Pod{Status: st}) {
				t.Fatalf("adoption wrote a not-ready status: %+v", st)
			}
		}
		if h.log.find("addpod-adopt kept 10.244.1.2", 0) < 0 {
			t.Fatalf("the pod network was not adopted:\n%s", strings.Join(h.log.all(), "\n"))
		}
		// The leftovers of the gone pod are cleaned up.
		if h.log.find("sigterm gone/app", 0) < 0 || h.net.has("uid-gone") {
			t.Fatalf("orphans not cleaned:\n%s", strings.Join(h.log.all(), "\n"))
		}
		if _, err := os.Stat(filepath.Join(h.cfg.DataDir, "pods", "uid-gone")); !os.IsNotExist(err) {
			t.Fatal("the orphan's pod dir is still there")
		}
		// The adopted pod still works: a crash restarts it with count 4.
		h.rt.crash("kept", "app", 1)
		h.waitFor("restart of the adopted pod", 5*time.Second, func() bool { return h.containerStatus("kept", "app").RestartCount == 4 })
	})
}

func TestServerOutageStopsNoPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		defer h.stop()
		h.api.put(testPod("web"))
		h.waitFor("Ready", 5*time.Second, func() bool { p := h.api.pod("web"); return p != nil && readyOf(p) })
		h.api.outage(true)
		h.rt.crash("web", "app", 1)
		// The worker restarts the container while every write fails.
		h.waitFor("restart during the outage", 5*time.Second, func() bool { return len(h.rt.running("web")) == 1 })
		time.Sleep(time.Minute)
		if n := len(h.rt.running("web")); n != 1 {
			t.Fatalf("%d containers running during the outage", n)
		}
		if h.containerStatus("web", "app").RestartCount != 0 {
			t.Fatal("a status write got through the outage")
		}
		h.api.outage(false)
		// The retried write lands once the server is back.
		h.waitFor("status after the outage", 15*time.Second, func() bool {
			return h.containerStatus("web", "app").RestartCount == 1 && readyOf(h.api.pod("web"))
		})
	})
}

// TestTerminationRetriesFailedSteps: the steps of a termination after the
// containers' stop fail and are retried by the worker's loop: a failed
// network teardown, then the final status and the DELETE through a
// server outage; the pod leaves the API once the server is back.
func TestTerminationRetriesFailedSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		defer h.stop()
		h.api.put(testPod("web"))
		h.waitFor("Ready", 5*time.Second, func() bool { p := h.api.pod("web"); return p != nil && readyOf(p) })
		h.net.mu.Lock()
		h.net.delFail = 2
		h.net.mu.Unlock()
		from := len(h.log.all())
		h.api.markDeleted("web", 5)
		h.api.outage(true)
		time.Sleep(time.Minute)
		if h.m.workerCount() != 1 || h.api.pod("web") == nil {
			t.Fatalf("during the outage: %d workers, pod in the API %v", h.m.workerCount(), h.api.pod("web") != nil)
		}
		if h.net.has("uid-web") {
			t.Fatal("the pod network is still there after the retries")
		}
		calls := h.log.all()[from:]
		failed := 0
		for _, c := range calls {
			if strings.Contains(c, "delpod-failed uid-web") {
				failed++
			}
		}
		if failed != 2 || h.log.find("delpod uid-web", from) < 0 {
			t.Fatalf("network teardown: %d failures, want 2, then a teardown:\n%s", failed, strings.Join(calls, "\n"))
		}
		if len(h.rt.running("web")) != 0 {
			t.Fatal("a container still runs")
		}
		h.api.outage(false)
		// The retries back off to 10s; a conflict with the status
		// manager's own write of the same status may cost one more.
		h.waitFor("pod gone from the API", 25*time.Second, func() bool { return h.api.pod("web") == nil })
		h.waitFor("worker gone", time.Second, func() bool { return h.m.workerCount() == 0 })
		final := h.log.find("status web phase=Failed ready=false", from) // SIGTERM: exit 143
		gone := h.log.find("delete web grace=0 uid=true", from)
		if final < 0 || gone < 0 || final > gone {
			t.Fatalf("final status %d, delete %d:\n%s", final, gone, strings.Join(h.log.all()[from:], "\n"))
		}
	})
}

func TestStartupProbeGatesLiveness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		defer h.stop()
		h.rt.setHealth("slow", "app", "started", false)
		h.rt.setHealth("slow", "app", "live", false) // would kill it if it ran
		pod := testPod("slow", api.Container{Name: "app", Image: "x", Command: []string{"x"},
			StartupProbe: execProbe("started", 1, 30), LivenessProbe: execProbe("live", 1, 1)})
		h.api.put(pod)
		time.Sleep(10 * time.Second)
		cs := h.containerStatus("slow", "app")
		if cs.RestartCount != 0 || cs.Ready || cs.Started == nil || *cs.Started {
			t.Fatalf("before startup: %+v", cs)
		}
		h.rt.setHealth("slow", "app", "live", true)
		h.rt.setHealth("slow", "app", "started", true)
		h.waitFor("started and ready", 5*time.Second, func() bool {
			cs := h.containerStatus("slow", "app")
			return cs.Started != nil && *cs.Started && cs.Ready
		})
		// Now liveness runs: failing it restarts.
		h.rt.setHealth("slow", "app", "live", false)
		h.waitFor("liveness restart", 10*time.Second, func() bool { return h.containerStatus("slow", "app").RestartCount == 1 })

		// A startup probe that never passes restarts the container after
		// failureThreshold periods.
		h.rt.setHealth("never", "app", "started", false)
		h.api.put(testPod("never", api.Container{Name: "app", Image: "x", Command: []string{"x"}, StartupProbe: execProbe("started", 2, 3)}))
		h.waitFor("startup failure restart", 20*time.Second, func() bool { return h.containerStatus("never", "app").RestartCount == 1 })
		if !h.rec.has("Startup probe failed") {
			t.Fatalf("events: %v", h.rec.events)
		}
	})
}

func TestSandboxAndStartFailuresRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		defer h.stop()
		h.net.fail = 2
		h.rt.failStart["app"] = 1
		h.api.put(testPod("flaky"))
		h.waitFor("Ready despite failures", 30*time.Second, func() bool { p := h.api.pod("flaky"); return p != nil && readyOf(p) })
		if !h.rec.has("FailedCreatePodSandBox") || !h.rec.has("Failed: Error: exec: no such file") {
			t.Fatalf("events: %v", h.rec.events)
		}
		if h.containerStatus("flaky", "app").RestartCount != 0 {
			t.Fatal("a failed start counted as a restart")
		}
	})
}

func TestEnvAndForceDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		defer h.stop()
		pod := testPod("envy", api.Container{Name: "app", Image: "x", Command: []string{"x", "$(POD_NAME)"},
			Env: []api.EnvVar{
				{Name: "POD_NAME", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "POD_NAMESPACE", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				{Name: "POD_IP", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "GREETING", Value: "hi $(POD_NAME)"},
			}})
		h.api.put(pod)
		h.waitFor("running", 5*time.Second, func() bool { return len(h.rt.running("envy")) == 1 })
		h.rt.mu.Lock()
		spec := h.rt.starts[0]
		h.rt.mu.Unlock()
		want := []string{"POD_NAME=envy", "POD_NAMESPACE=default", "POD_IP=10.244.1.2", "GREETING=hi envy"}
		if strings.Join(spec.Env, " ") != strings.Join(want, " ") || strings.Join(spec.Args, " ")+strings.Join(spec.Command, " ") != "x envy" {
			t.Fatalf("env %v command %v", spec.Env, spec.Command)
		}
		// Removed from the API without grace (force deletion): the agent
		// still stops it (with the minimum grace) and cleans up, without
		// API writes.
		h.rt.ignoreTerm["app"] = true
		h.rt.mu.Lock()
		for _, c := range h.rt.containers {
			c.ignoreTerm = true
		}
		h.rt.mu.Unlock()
		from := len(h.log.all())
		p := h.api.pod("envy")
		zero := int64(0)
		now := api.NewTime(time.Now())
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &zero
		h.api.mu.Lock()
		delete(h.api.pods, "default/envy")
		h.api.mu.Unlock()
		h.m.onPodDelete(p)
		h.waitFor("stopped", 5*time.Second, func() bool { return len(h.rt.running("envy")) == 0 && !h.net.has("uid-envy") })
		if h.log.find("sigterm envy/app", from) < 0 || h.log.find("delete envy", from) >= 0 {
			t.Fatalf("force deletion:\n%s", strings.Join(h.log.all()[from:], "\n"))
		}
		if d := stamp(t, h.log.all()[h.log.find("sigkill envy/app", from)]) - stamp(t, h.log.all()[h.log.find("sigterm envy/app", from)]); d < minForceGrace {
			t.Fatalf("force-deleted pod killed after %v, want the minimum grace %v", d, minForceGrace)
		}
	})
}

// TestTerminationDelayOnlyForReadyPods: a pod that is not Ready has no
// endpoint any proxy sends to, so it gets SIGTERM at once; a negative
// TerminationDelay turns the delay off for Ready pods too.
func TestTerminationDelayOnlyForReadyPods(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ready bool
		delay time.Duration
	}{
		{"not ready", false, 0},
		{"ready, delay off", true, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, func(h *harness) {
					if tc.delay != 0 {
						h.cfg.TerminationDelay = tc.delay
					}
				})
				defer h.stop()
				grace := int64(10)
				pod := testPod("web", api.Container{Name: "app", Image: "netexec", Command: []string{"netexec"},
					ReadinessProbe: execProbe("ready", 1, 1)})
				pod.Spec.TerminationGracePeriodSeconds = &grace
				h.api.put(pod)
				h.waitFor("pod Ready", 5*time.Second, func() bool { p := h.api.pod("web"); return p != nil && readyOf(p) })
				if !tc.ready {
					h.rt.setHealth("web", "app", "ready", false)
					h.waitFor("pod not Ready", 5*time.Second, func() bool { return !readyOf(h.api.pod("web")) })
				}
				from := len(h.log.all())
				deletedAt := time.Since(h.log.start).Round(100 * time.Millisecond)
				h.api.markDeleted("web", 10)
				h.waitFor("pod gone from the API", 15*time.Second, func() bool { return h.api.pod("web") == nil })
				term := h.log.find("sigterm web/app", from)
				if term < 0 {
					t.Fatalf("no SIGTERM:\n%s", strings.Join(h.log.all()[from:], "\n"))
				}
				if d := stamp(t, h.log.all()[term]) - deletedAt; d > 300*time.Millisecond {
					t.Fatalf("SIGTERM %v after the deletion, want at once", d)
				}
			})
		})
	}
}
