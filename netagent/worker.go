package netagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/probe"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

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

// minForceGrace is the grace a pod removed from the API without a grace
// period (a force deletion) still gets, as the kubelet's minimum.
const minForceGrace = 2 * time.Second

// backoffReset: a container that ran this long before exiting restarts
// without back-off (its back-off starts over).
const backoffReset = 10 * time.Minute

// ctr is one container of a pod worker.
type ctr struct {
	spec api.Container
	// id is the runtime container of the current instance ("" = none).
	id string
	st runtime.ContainerStatus
	// restarts counts restarts; last is the previous instance's end.
	restarts int32
	last     *api.ContainerStateTerminated
	// backoff is the delay before the next restart; notBefore when the
	// next start may happen.
	backoff   time.Duration
	notBefore time.Time
	// everStarted: an instance has run (in this agent's life or before).
	everStarted bool
	// waiting reason/message while no instance runs.
	waitReason, waitMsg string
	// probes running for probeID.
	probeCancel context.CancelFunc
	probeID     string
	// killed: the current instance was killed for a failed liveness or
	// startup probe.
	killed bool
}

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

// podWorker runs one pod: its sandbox, its containers, their probes, its
// status and its termination. One goroutine (run) owns everything but the
// fields under mu.
type podWorker struct {
	m   *podManager
	uid string
	log *slog.Logger

	wake chan struct{}

	// mu protects pod, gone and probes.
	mu     sync.Mutex
	pod    *api.Pod // latest from the API
	gone   bool     // the pod left the API
	probes map[string]*probeState

	// Owned by run.
	net        *cni.PodNetwork
	netDown    bool // the pod network was torn down (terminal pod)
	ctrs       map[string]*ctr
	startTime  time.Time
	sandboxErr string
	sandboxAt  time.Time // next sandbox attempt
	sandboxBO  time.Duration
	terminal   string    // Succeeded or Failed once the pod finished
	deadline   time.Time // termination: when SIGKILL comes
	seeded     bool
}

func newPodWorker(m *podManager, pod *api.Pod) *podWorker {
	return &podWorker{
		m: m, uid: string(pod.UID), pod: pod,
		log:    m.log.With("pod", pod.Namespace+"/"+pod.Name, "uid", string(pod.UID)),
		wake:   make(chan struct{}, 1),
		probes: map[string]*probeState{},
		ctrs:   map[string]*ctr{},
	}
}

func (w *podWorker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *podWorker) setPod(p *api.Pod) {
	w.mu.Lock()
	w.pod = p
	w.mu.Unlock()
	w.poke()
}

// setGone marks the pod as removed from the API; final is its last state
// (its deletion grace period, if any, applies).
func (w *podWorker) setGone(final *api.Pod) {
	w.mu.Lock()
	w.gone = true
	if final != nil && string(final.UID) == w.uid {
		w.pod = final
	}
	w.mu.Unlock()
	w.poke()
}

func (w *podWorker) snapshot() (*api.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod, w.gone
}

// run syncs the pod whenever something changes, until the pod is
// terminated or ctx ends (an agent shutdown: the containers keep running).
func (w *podWorker) run(ctx context.Context) {
	defer w.m.workerDone(w)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			w.stopAllProbes()
			return
		case <-w.wake:
		case <-timer.C:
		}
		next, done := w.syncOnOwnStack(ctx)
		if done {
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// syncOnOwnStack runs sync on a goroutine that ends with it and waits for
// it. A sync's call chains (libcni and its plugin processes, the runtime's
// start, JSON, HTTP) grow a goroutine's stack to tens of KiB, and the pod's
// worker goroutine, which lives as long as the pod and mostly waits,
// would keep that stack between syncs: with 100 pods the agent's
// anonymous memory was 0.3 MB higher (BenchmarkPodsReady100, 4 runs
// each). Syncs of one pod stay serial: run waits for each.
func (w *podWorker) syncOnOwnStack(ctx context.Context) (time.Duration, bool) {
	type result struct {
		next time.Duration
		done bool
	}
	ch := make(chan result, 1)
	go func() {
		next, done := w.sync(ctx)
		ch <- result{next, done}
	}()
	r := <-ch
	return r.next, r.done
}

// sync moves the pod one step toward its spec and reports its status. It
// returns when to look again, or done once the pod is finished with.
func (w *podWorker) sync(ctx context.Context) (time.Duration, bool) {
	pod, gone := w.snapshot()
	if !w.seeded {
		w.seed(pod)
	}
	if gone || pod.DeletionTimestamp != nil {
		w.terminate(ctx, pod, gone)
		return 0, true
	}
	now := time.Now()
	next := w.m.cfg.ResyncPeriod
	soon := func(at time.Time) {
		if d := at.Sub(now); d < next {
			next = max(d, 10*time.Millisecond)
		}
	}
	if w.startTime.IsZero() {
		w.startTime = now
	}
	if w.terminal != "" {
		w.teardownNetwork(ctx)
		w.report(pod)
		return next, false
	}
	if w.net == nil {
		if now.Before(w.sandboxAt) {
			soon(w.sandboxAt)
		} else if err := w.ensureSandbox(ctx, pod); err != nil {
			w.sandboxErr = err.Error()
			w.sandboxBO = min(max(2*w.sandboxBO, time.Second), 30*time.Second)
			w.sandboxAt = now.Add(w.sandboxBO)
			w.log.Warn("pod sandbox failed", "err", err, "retryIn", w.sandboxBO)
			w.m.event(pod, api.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
			soon(w.sandboxAt)
		}
	}
	if w.net != nil {
		for _, c := range w.specContainers(pod) {
			if at := w.syncContainer(ctx, pod, c); !at.IsZero() {
				soon(at)
			}
			w.triggerReadiness(c)
		}
		if ph := w.finishedPhase(pod); ph != "" {
			w.terminal = ph
			w.log.Info("pod finished", "phase", ph)
			w.stopAllProbes()
			w.teardownNetwork(ctx)
		}
	}
	w.report(pod)
	return next, false
}

// specContainers returns the worker's containers in spec order, creating
// entries for new ones.
func (w *podWorker) specContainers(pod *api.Pod) []*ctr {
	out := make([]*ctr, 0, len(pod.Spec.Containers))
	for _, s := range pod.Spec.Containers {
		c := w.ctrs[s.Name]
		if c == nil {
			c = &ctr{spec: s}
			w.ctrs[s.Name] = c
		}
		c.spec = s
		out = append(out, c)
	}
	return out
}

// seed adopts what survives an agent restart: the runtime's containers of
// this pod (the newest per name is the current instance, older ones are
// removed) and, for containers whose ID matches, the restart counts,
// readiness and started flags the API holds. The network is adopted by
// ensureSandbox (AddPod returns a live pod's existing network).
func (w *podWorker) seed(pod *api.Pod) {
	w.seeded = true
	if p := pod.Status.Phase; p == api.PodSucceeded || p == api.PodFailed {
		w.terminal = p
	}
	found := w.m.takeAdopted(w.uid)
	if len(found) == 0 {
		return
	}
	sort.Slice(found, func(i, j int) bool { return found[i].StartedAt.After(found[j].StartedAt) })
	prevStatus := map[string]api.ContainerStatus{}
	for _, cs := range pod.Status.ContainerStatuses {
		prevStatus[cs.Name] = cs
	}
	for _, st := range found {
		if c := w.ctrs[st.Name]; c != nil {
			// An older instance: only its removal is left to do.
			go w.m.removeContainer(st.ID)
			continue
		}
		c := &ctr{id: st.ID, st: st, everStarted: true}
		for _, s := range pod.Spec.Containers {
			if s.Name == st.Name {
				c.spec = s
			}
		}
		w.ctrs[st.Name] = c
		if prev, ok := prevStatus[st.Name]; ok {
			c.restarts = prev.RestartCount
			c.last = prev.LastState.Terminated
			if prev.ContainerID == w.m.containerID(st.ID) && st.State == runtime.StateRunning {
				ps := w.probeFor(st.ID)
				ps.ready = prev.Ready
				ps.started = prev.Started != nil && *prev.Started
			}
		}
		w.log.Info("adopted container", "container", st.Name, "id", st.ID, "state", st.State, "restarts", c.restarts)
	}
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

// ensureSandbox gives the pod its network (or adopts it) and writes its
// resolv.conf and hosts.
func (w *podWorker) ensureSandbox(ctx context.Context, pod *api.Pod) error {
	if pod.Spec.HostNetwork {
		w.m.event(pod, api.EventTypeWarning, "HostNetworkUnsupported", "hostNetwork is not supported by skiff: the pod gets its own network namespace")
	}
	dir := w.m.podDir(w.uid)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return fmt.Errorf("pod dir: %w", err)
	}
	rc, err := podResolvConf(pod, w.m.nodeDNS, w.m.cfg.ClusterDomain, w.m.hostRC)
	if err != nil {
		return err
	}
	var ports []cni.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, cni.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: string(p.Protocol), HostIP: p.HostIP})
			}
		}
	}
	var pn cni.PodNetwork
	add := func() error {
		return w.m.netns.do(func() error {
			var err error
			pn, err = w.m.net.AddPod(ctx, w.uid, pod.Namespace, pod.Name, ports)
			return err
		})
	}
	// The first AddPod of the agent runs alone: libcni (v1.3.1) sets up
	// its plugin executor lazily on first use, unsynchronised, and
	// concurrent first calls race on it. Later calls find it set.
	first := false
	w.m.firstAdd.Do(func() { first, err = true, add() })
	if !first {
		select {
		case w.m.sandboxes <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		err = add()
		<-w.m.sandboxes
	}
	if err != nil {
		return fmt.Errorf("pod network: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, "resolv.conf"), []byte(rc.String()), 0o644); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, "hosts"), []byte(podHosts(pod, pn.IP, w.m.cfg.ClusterDomain)), 0o644); err != nil {
		return fmt.Errorf("hosts: %w", err)
	}
	w.net = &pn
	w.sandboxErr = ""
	w.sandboxBO = 0
	return nil
}

func (w *podWorker) sandbox(pod *api.Pod) runtime.Sandbox {
	dir := w.m.podDir(w.uid)
	return runtime.Sandbox{
		PodUID: w.uid, Namespace: pod.Namespace, Name: pod.Name,
		NetNSPath:  w.net.NetNSPath,
		ResolvConf: filepath.Join(dir, "resolv.conf"),
		Hosts:      filepath.Join(dir, "hosts"),
		LogDir:     filepath.Join(dir, "logs"),
	}
}

// syncContainer starts, watches, kills and restarts one container. It
// returns when it next needs a look (zero: only on events).
func (w *podWorker) syncContainer(ctx context.Context, pod *api.Pod, c *ctr) time.Time {
	now := time.Now()
	if c.id != "" {
		st, err := w.m.rt.Status(ctx, c.id)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			w.log.Warn("container vanished from the runtime", "container", c.spec.Name, "id", c.id)
			w.stopProbes(c)
			c.last = &api.ContainerStateTerminated{ExitCode: 137, Reason: reasonUnknownState,
				Message: "The container could not be located when the pod was terminated", ContainerID: w.m.containerID(c.id)}
			c.id, c.st = "", runtime.ContainerStatus{}
			if !w.restartAllowed(pod, 137) {
				c.waitReason = ""
				return time.Time{}
			}
		case err != nil:
			w.log.Warn("container status failed", "container", c.spec.Name, "err", err)
			return now.Add(time.Second)
		default:
			c.st = st
		}
	}
	if c.id != "" && c.st.State == runtime.StateRunning {
		c.everStarted = true
		w.ensureProbes(pod, c)
		ps := w.probeSnapshot(c.id)
		if (ps.liveFailed || ps.startFailed) && !c.killed {
			kind := "Liveness"
			p := c.spec.LivenessProbe
			if ps.startFailed {
				kind, p = "Startup", c.spec.StartupProbe
			}
			w.m.event(pod, api.EventTypeWarning, "Unhealthy", "%s probe failed: %s", kind, ps.msg)
			w.m.event(pod, api.EventTypeNormal, "Killing", "Container %s failed %s probe, will be restarted", c.spec.Name, strings.ToLower(kind))
			w.log.Info("killing container for a failed probe", "container", c.spec.Name, "probe", kind)
			c.killed = true
			grace := w.gracePeriod(pod)
			if p != nil && p.TerminationGracePeriodSeconds != nil {
				grace = time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
			}
			w.stopProbes(c)
			id := c.id
			// Stop blocks for up to grace: run it aside and look again
			// when the relist sees the exit.
			go func() {
				if err := w.m.rt.Stop(context.WithoutCancel(ctx), id, grace); err != nil {
					w.log.Warn("stopping the container failed", "id", id, "err", err)
				}
				w.poke()
			}()
		}
		return time.Time{}
	}
	if c.id != "" && c.st.State != runtime.StateExited {
		// Created or unknown: look again soon.
		return now.Add(time.Second)
	}
	if c.id != "" {
		// Exited.
		w.stopProbes(c)
		if !w.restartAllowed(pod, c.st.ExitCode) && !(c.killed && w.restartPolicy(pod) != api.RestartPolicyNever) {
			return time.Time{}
		}
		if c.notBefore.IsZero() {
			ran := c.st.FinishedAt.Sub(c.st.StartedAt)
			if ran >= backoffReset {
				c.backoff = 0
			}
			c.notBefore = now.Add(c.backoff)
			if c.backoff == 0 {
				c.backoff = w.m.cfg.BackoffBase
			} else {
				c.backoff = min(2*c.backoff, w.m.cfg.BackoffMax)
			}
		}
		if now.Before(c.notBefore) {
			c.waitReason = reasonCrashLoop
			c.waitMsg = fmt.Sprintf("back-off %v restarting failed container=%s pod=%s_%s(%s)",
				c.notBefore.Sub(now).Round(time.Second), c.spec.Name, pod.Name, pod.Namespace, w.uid)
			return c.notBefore
		}
		c.last = w.terminatedState(c)
		old := c.id
		c.id, c.st, c.killed = "", runtime.ContainerStatus{}, false
		c.restarts++
		w.m.removeContainer(old)
		w.forgetProbes(old)
	}
	// No instance: start one (first start, or a due restart).
	if !c.notBefore.IsZero() && now.Before(c.notBefore) {
		w.pullBackOff(pod, c)
		return c.notBefore
	}
	if err := w.startContainer(ctx, pod, c); err != nil {
		if c.backoff == 0 {
			c.backoff = w.m.cfg.BackoffBase
		}
		c.notBefore = now.Add(c.backoff)
		c.backoff = min(2*c.backoff, w.m.cfg.BackoffMax)
		return c.notBefore
	}
	c.notBefore = time.Time{}
	return time.Time{}
}

// restartPolicy of the pod (default Always).
func (w *podWorker) restartPolicy(pod *api.Pod) string {
	if pod.Spec.RestartPolicy == "" {
		return api.RestartPolicyAlways
	}
	return pod.Spec.RestartPolicy
}

func (w *podWorker) restartAllowed(pod *api.Pod, exitCode int) bool {
	switch w.restartPolicy(pod) {
	case api.RestartPolicyNever:
		return false
	case api.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

func (w *podWorker) startContainer(ctx context.Context, pod *api.Pod, c *ctr) error {
	ec := envContext{podIP: w.net.IP, hostIPs: w.m.cfg.NodeIPs, nodeName: w.m.cfg.NodeName}
	env, err := containerEnv(pod, &c.spec, ec)
	if err != nil {
		c.waitReason, c.waitMsg = reasonConfigError, err.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Error: %v", err)
		return err
	}
	if err := w.ensureImage(ctx, pod, c); err != nil {
		return err
	}
	spec := runtime.ContainerSpec{
		Name: c.spec.Name, Image: c.spec.Image,
		Command: expandArgs(c.spec.Command, env), Args: expandArgs(c.spec.Args, env),
		Env: env, WorkingDir: c.spec.WorkingDir,
	}
	st, err := w.m.rt.Start(ctx, w.sandbox(pod), spec)
	if err != nil {
		c.waitReason, c.waitMsg = reasonRunError, err.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Error: %v", err)
		w.log.Warn("container start failed", "container", c.spec.Name, "err", err)
		return err
	}
	c.id, c.st, c.everStarted, c.killed = st.ID, st, true, false
	c.waitReason, c.waitMsg = "", ""
	w.m.event(pod, api.EventTypeNormal, "Started", "Started container %s", c.spec.Name)
	w.log.Debug("container started", "container", c.spec.Name, "id", st.ID)
	w.ensureProbes(pod, c)
	return nil
}

// ensureProbes starts the probe workers of c's current instance.
func (w *podWorker) ensureProbes(pod *api.Pod, c *ctr) {
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
	ctx, cancel := context.WithCancel(w.m.ctx)
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

// terminatedState is the API form of an exited instance.
func (w *podWorker) terminatedState(c *ctr) *api.ContainerStateTerminated {
	st := c.st
	reason := reasonCompleted
	if st.ExitCode != 0 {
		reason = reasonError
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

// finishedPhase is Succeeded or Failed once every container has exited
// for good under the restart policy; "" otherwise.
func (w *podWorker) finishedPhase(pod *api.Pod) string {
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	failed := false
	for _, s := range pod.Spec.Containers {
		c := w.ctrs[s.Name]
		if c == nil || c.id == "" || c.st.State != runtime.StateExited {
			return ""
		}
		if w.restartAllowed(pod, c.st.ExitCode) || (c.killed && w.restartPolicy(pod) != api.RestartPolicyNever) {
			return ""
		}
		if c.st.ExitCode != 0 {
			failed = true
		}
	}
	if failed {
		return api.PodFailed
	}
	return api.PodSucceeded
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

// gracePeriod is the pod's termination grace period.
func (w *podWorker) gracePeriod(pod *api.Pod) time.Duration {
	if pod.DeletionGracePeriodSeconds != nil {
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return DefaultGracePeriod
}

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
	grace := w.gracePeriod(pod)
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
				w.ensureProbes(pod, c)
			}
		}
	}
	if !gone {
		w.report(pod)
	}
	if d := w.terminationDelay(pod, grace, gone); d > 0 {
		w.log.Info("delaying SIGTERM until the proxies dropped the endpoint", "delay", d)
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
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
			if attempt >= 4 || ctx.Err() != nil {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
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
			w.m.removeContainer(c.id)
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
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

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
