package netagent

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// The pod loop: one worker per pod, woken by its pod's changes, probe
// results, the relist and its own timer; each sync observes the pod's
// containers, plans (computePodActions, podactions.go) and applies the
// plan (containers.go, probes.go, termination.go), then reports the
// status (podstatus.go).

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
	// configBO is the retry delay of a container whose env or volumes
	// could not be built (kept apart from the restart back-off).
	configBO time.Duration
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

// podWorker runs one pod: its sandbox, its containers, their probes, its
// status and its termination. One goroutine (run) owns everything but the
// fields under mu.
type podWorker struct {
	m   *podManager
	uid string
	log *slog.Logger

	wake chan struct{}

	// mu protects pod, gone, probes and netnsPath.
	mu     sync.Mutex
	pod    *api.Pod // latest from the API
	gone   bool     // the pod left the API
	probes map[string]*probeState
	// netnsPath is net.NetNSPath for other goroutines (port-forward):
	// "" while the pod has no network.
	netnsPath string

	// Owned by run.
	net        *cni.PodNetwork
	netDown    bool // the pod network was torn down (terminal pod)
	ctrs       map[string]*ctr
	startTime  time.Time
	sandboxErr string
	sandboxAt  time.Time // next sandbox attempt
	sandboxBO  time.Duration
	terminal   string       // Succeeded or Failed once the pod finished
	deadline   time.Time    // termination: when SIGKILL comes
	term       *termination // the termination in progress (termination.go)
	seeded     bool
	volumes    map[string]objVolume // configMap and secret volumes written (volumes.go)
	volumesAt  time.Time            // next refresh of volumes
	tokens     map[string]*podToken // ServiceAccount tokens (projected.go)
	cgroup     string               // the pod's cgroup ("" none; cgroups.go)
	// rejected is why the node refused the pod (admission: a forbidden
	// sysctl); the pod is Failed with ReasonSysctlForbidden.
	rejected string
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
	finished := false
	defer func() { w.m.workerDone(w, finished) }()
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
			finished = true
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
func (w *podWorker) syncOnOwnStack(ctx context.Context) (next time.Duration, done bool) {
	var wg sync.WaitGroup
	wg.Go(func() { next, done = w.sync(ctx) })
	wg.Wait()
	return next, done
}

// sync moves the pod one step toward its spec and reports its status: it
// observes the containers (observe), plans (computePodActions, pure) and
// applies the plan. It returns when to look again, or done once the pod
// is finished with.
func (w *podWorker) sync(ctx context.Context) (time.Duration, bool) {
	pod, gone := w.snapshot()
	if !w.seeded {
		w.seed(ctx, pod)
	}
	now := time.Now()
	deleting := gone || pod.DeletionTimestamp != nil
	if !deleting && w.startTime.IsZero() {
		w.startTime = now
	}
	if !deleting && w.terminal == "" && w.net == nil && len(w.ctrs) == 0 {
		// Admission, before anything of the pod exists on the node.
		if msg := admitSysctls(pod, w.m.cfg.AllowedUnsafeSysctls); msg != "" {
			w.terminal, w.rejected = api.PodFailed, msg
			w.log.Warn("pod refused", "reason", ReasonSysctlForbidden, "message", msg)
			w.m.event(pod, api.EventTypeWarning, ReasonSysctlForbidden, "%s", msg)
		}
	}
	observed := map[string]containerState{}
	// The containers are looked at only when the plan may act on them:
	// the pod runs, and has (or is about to get) its sandbox. One the
	// worker has no entry for yet has no instance.
	if !deleting && w.terminal == "" && (w.net != nil || !now.Before(w.sandboxAt)) {
		for _, s := range pod.Spec.Containers {
			var cs containerState
			if c := w.ctrs[s.Name]; c != nil {
				cs = w.observe(ctx, c)
			}
			observed[s.Name] = cs
		}
	}
	plan := computePodActions(podState{
		pod: pod, gone: gone, now: now, terminal: w.terminal,
		hasSandbox: w.net != nil, sandboxAt: w.sandboxAt,
		backoffBase: w.m.cfg.BackoffBase, backoffMax: w.m.cfg.BackoffMax,
		containers: observed,
	})
	w.log.Debug("pod sync", "plan", plan)
	return w.apply(ctx, pod, gone, now, plan)
}

// apply does what plan says (see sync).
func (w *podWorker) apply(ctx context.Context, pod *api.Pod, gone bool, now time.Time, plan podActions) (time.Duration, bool) {
	if plan.KillPod {
		return w.terminate(ctx, pod, gone)
	}
	next := w.m.cfg.ResyncPeriod
	soon := func(at time.Time) {
		if d := at.Sub(now); d < next {
			next = max(d, 10*time.Millisecond)
		}
	}
	if plan.Finished {
		w.teardownNetwork(ctx)
		w.report(pod)
		return next, false
	}
	if !plan.SandboxWait.IsZero() {
		soon(plan.SandboxWait)
	}
	if plan.CreateSandbox {
		if err := w.ensureSandbox(ctx, pod); err != nil {
			w.sandboxErr = err.Error()
			w.sandboxBO = min(max(2*w.sandboxBO, time.Second), 30*time.Second)
			w.sandboxAt = now.Add(w.sandboxBO)
			w.log.Warn("pod sandbox failed", "err", err, "retryIn", w.sandboxBO)
			w.m.event(pod, api.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
			soon(w.sandboxAt)
		}
	}
	if w.net != nil {
		w.refreshVolumes(ctx, pod, now)
		if !w.volumesAt.IsZero() {
			soon(w.volumesAt)
		}
		for i, c := range w.specContainers(pod) {
			if i >= len(plan.Containers) {
				break // the plan always has them with a sandbox
			}
			if at := w.applyContainer(ctx, pod, c, now, plan.Containers[i]); !at.IsZero() {
				soon(at)
			}
			w.triggerReadiness(c)
		}
		if plan.Phase != "" {
			w.terminal = plan.Phase
			w.log.Info("pod finished", "phase", plan.Phase)
			w.stopAllProbes()
			w.teardownNetwork(ctx)
		}
	}
	w.report(pod)
	return next, false
}

// observe reads c's instance from the runtime and its probe results, and
// records an instance that vanished from the runtime (a container
// nothing can stop or restart any more).
func (w *podWorker) observe(ctx context.Context, c *ctr) containerState {
	var s containerState
	if c.id != "" {
		st, err := w.m.rt.Status(ctx, c.id)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			w.log.Warn("container vanished from the runtime", "container", c.spec.Name, "id", c.id)
			w.stopProbes(c)
			c.last = &api.ContainerStateTerminated{ExitCode: 137, Reason: reasonUnknownState,
				Message: "The container could not be located when the pod was terminated", ContainerID: w.m.containerID(c.id)}
			c.id, c.st = "", runtime.ContainerStatus{}
			c.waitReason = ""
			s.vanished = true
		case err != nil:
			w.log.Warn("container status failed", "container", c.spec.Name, "err", err)
			s.statusErr = true
		default:
			c.st = st
		}
	}
	s.id, s.status, s.killed = c.id, c.st, c.killed
	s.notBefore, s.backoff = c.notBefore, c.backoff
	if c.id != "" {
		ps := w.probeSnapshot(c.id)
		s.liveFailed, s.startFailed = ps.liveFailed, ps.startFailed
	}
	return s
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
func (w *podWorker) seed(ctx context.Context, pod *api.Pod) {
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
			w.m.wg.Go(func() { w.m.removeContainer(ctx, st.ID) })
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
