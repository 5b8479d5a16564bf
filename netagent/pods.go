package netagent

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/probe"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// maxParallelSandboxes bounds concurrent AddPod calls.
const maxParallelSandboxes = 4

// orphanGrace is the grace period of containers whose pod no longer
// exists when the agent starts (it was deleted while the agent was away).
const orphanGrace = 5 * time.Second

// podManager runs one worker per pod bound to the node, keyed by UID (a
// pod recreated under the same name is another pod). It owns the relist
// loop that notices container exits, and the adoption and cleanup of what
// an earlier agent left.
type podManager struct {
	cfg     *Config
	rt      runtime.Runtime
	cg      PodCgroups // nil: no cgroups
	net     PodNetwork
	netns   NetNS
	api     API
	podRes  *api.ResourceInfo
	pods    podCache
	status  *statusManager
	prober  *probe.Prober
	rec     EventRecorder
	log     *slog.Logger
	nodeDNS netip.Addr
	hostRC  resolvConf
	podsDir string
	objects objectSource
	tokens  tokenSource   // ServiceAccount tokens (projected.go)
	storage storageSource // claims and volumes (claims.go); nil: none
	// services is the Services informer (the kubernetes Service's env);
	// nil: no such variables.
	services podCache
	now      func() time.Time // the token manager's clock

	// wg tracks run, the workers, their probes and the stops they start.
	wg sync.WaitGroup
	// firstAdd serialises the agent's first AddPod (see ensureSandbox).
	firstAdd sync.Once
	// sandboxes bounds the pod networks being built at once, so a burst
	// of new pods is pipelined (network, then containers) rather than
	// every pod's network first.
	sandboxes chan struct{}

	// spawn (capacity 1) tells run that pending has workers to start.
	spawn chan struct{}

	// mu protects everything below.
	mu       sync.Mutex
	ready    bool
	stopped  bool         // run has returned: no worker starts any more
	pending  []*podWorker // created by onPod, started by run
	workers  map[string]*podWorker
	finished map[string]bool // worker done, pod still in the cache
	adopted  map[string][]runtime.ContainerStatus
	lastSeen map[string]string // container ID -> state at the last relist
}

// podDir holds a pod's resolv.conf, hosts and logs.
func (m *podManager) podDir(uid string) string { return filepath.Join(m.podsDir, uid) }

// containerID is the API form of a runtime container ID.
func (m *podManager) containerID(id string) string { return m.rt.Name() + "://" + id }

func (m *podManager) event(obj api.Object, typ, reason, format string, args ...any) {
	if m.rec != nil {
		m.rec.Eventf(obj, typ, reason, format, args...)
	}
}

// removeContainer removes a container; the removal outlives ctx (an
// agent shutdown does not leave it half done).
func (m *podManager) removeContainer(ctx context.Context, id string) {
	if err := m.rt.Remove(context.WithoutCancel(ctx), id); err != nil {
		m.log.Debug("removing container failed", "id", id, "err", err)
	}
}

// takeAdopted hands a worker the containers of its pod found at start.
func (m *podManager) takeAdopted(uid string) []runtime.ContainerStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.adopted[uid]
	delete(m.adopted, uid)
	return out
}

// onPod is the informer's add and update handler.
func (m *podManager) onPod(obj api.Object) {
	pod, ok := obj.(*api.Pod)
	if !ok || pod.Spec.NodeName != m.cfg.NodeName {
		return
	}
	uid := string(pod.UID)
	m.mu.Lock()
	if !m.ready || m.finished[uid] || m.stopped {
		m.mu.Unlock()
		return
	}
	w := m.workers[uid]
	if w == nil {
		w = newPodWorker(m, pod)
		m.workers[uid] = w
		m.pending = append(m.pending, w)
		select {
		case m.spawn <- struct{}{}:
		default:
		}
	}
	m.mu.Unlock()
	w.setPod(pod)
}

// onPodDelete is the informer's delete handler: the pod left the API.
func (m *podManager) onPodDelete(obj api.Object) {
	uid := string(obj.GetObjectMeta().UID)
	m.mu.Lock()
	delete(m.finished, uid)
	w := m.workers[uid]
	m.mu.Unlock()
	if w != nil {
		p, _ := obj.(*api.Pod)
		w.setGone(p)
	}
}

// run starts the workers onPod creates, each running with ctx, until ctx
// ends; then no worker starts any more (the running ones end with ctx).
func (m *podManager) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			m.mu.Lock()
			m.stopped = true
			for _, w := range m.pending {
				delete(m.workers, w.uid)
			}
			m.pending = nil
			m.mu.Unlock()
			return
		case <-m.spawn:
		}
		m.mu.Lock()
		pending := m.pending
		m.pending = nil
		m.mu.Unlock()
		for _, w := range pending {
			m.wg.Go(func() { w.run(ctx) })
		}
	}
}

// workerDone unregisters a worker; finished: its pod was terminated (not
// an agent shutdown). A finished pod still in the cache (its deletion not
// yet seen) must not get a new worker.
func (m *podManager) workerDone(w *podWorker, finished bool) {
	pod, _ := w.snapshot()
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.workers, w.uid)
	if !finished {
		return
	}
	if obj, ok := m.pods.Get(pod.Namespace, pod.Name); ok && string(obj.GetObjectMeta().UID) == w.uid {
		m.finished[w.uid] = true
	}
}

// start adopts and cleans up after an earlier agent, then creates a
// worker for every pod in the (synced) cache, for run to start. list is
// the cache's content.
func (m *podManager) start(ctx context.Context, list []api.Object) {
	live := map[string]bool{}
	for _, o := range list {
		if p, ok := o.(*api.Pod); ok && p.Spec.NodeName == m.cfg.NodeName {
			live[string(p.UID)] = true
		}
	}
	m.cleanup(ctx, live)
	m.mu.Lock()
	m.ready = true
	m.mu.Unlock()
	for _, o := range list {
		m.onPod(o)
	}
}

// cleanup takes the runtime's containers of live pods for adoption and
// removes the containers, networks and pod dirs of pods that are gone.
func (m *podManager) cleanup(ctx context.Context, live map[string]bool) {
	all, err := m.rt.List(ctx)
	if err != nil {
		m.log.Warn("listing the runtime's containers failed; nothing adopted", "err", err)
	}
	adopted := map[string][]runtime.ContainerStatus{}
	var orphans []runtime.ContainerStatus
	for _, c := range all {
		if live[c.PodUID] {
			adopted[c.PodUID] = append(adopted[c.PodUID], c)
		} else {
			orphans = append(orphans, c)
		}
	}
	m.mu.Lock()
	m.adopted = adopted
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range orphans {
		wg.Go(func() {
			m.log.Info("removing an orphaned container", "pod", c.PodUID, "container", c.Name, "id", c.ID)
			if c.State == runtime.StateRunning {
				if err := m.rt.Stop(ctx, c.ID, orphanGrace); err != nil {
					m.log.Warn("stopping an orphaned container failed", "id", c.ID, "err", err)
				}
			}
			m.removeContainer(ctx, c.ID)
		})
	}
	wg.Wait()
	var uids []string
	if err := m.netns.do(func() error {
		var err error
		uids, err = m.net.Pods(ctx)
		return err
	}); err != nil {
		m.log.Warn("listing the pod networks failed", "err", err)
	}
	for _, uid := range uids {
		if live[uid] {
			continue
		}
		m.log.Info("removing an orphaned pod network", "pod", uid)
		if err := m.netns.do(func() error { return m.net.DelPod(ctx, uid) }); err != nil {
			m.log.Warn("removing an orphaned pod network failed", "pod", uid, "err", err)
		}
	}
	ents, _ := os.ReadDir(m.podsDir)
	for _, e := range ents {
		if e.IsDir() && !live[e.Name()] {
			if m.cg != nil {
				// Only pods this agent ran (in its pods dir): agents of
				// simulated nodes can share one cgroup tree.
				(&podWorker{m: m, uid: e.Name(), log: m.log}).removePodCgroup()
			}
			_ = os.RemoveAll(filepath.Join(m.podsDir, e.Name()))
		}
	}
}

// relist lists the runtime's containers every period and wakes the
// workers of pods whose containers changed state (the kubelet's PLEG).
func (m *podManager) relist(ctx context.Context) {
	t := time.NewTicker(m.cfg.RelistPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		all, err := m.rt.List(ctx)
		if err != nil {
			m.log.Debug("relist failed", "err", err)
			continue
		}
		seen := make(map[string]string, len(all))
		changed := map[string]bool{}
		m.mu.Lock()
		for _, c := range all {
			seen[c.ID] = string(c.State)
			if m.lastSeen[c.ID] != string(c.State) {
				changed[c.PodUID] = true
			}
		}
		m.lastSeen = seen
		var wake []*podWorker
		for uid := range changed {
			if w := m.workers[uid]; w != nil {
				wake = append(wake, w)
			}
		}
		m.mu.Unlock()
		for _, w := range wake {
			w.poke()
		}
	}
}

// workerCount is the number of pods with a worker.
func (m *podManager) workerCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workers)
}

// newPodManager wires a manager; start, run and relist run it.
func newPodManager(cfg *Config, rt runtime.Runtime, net PodNetwork, netns NetNS, a API,
	pods podCache, rec EventRecorder, nodeDNS netip.Addr) *podManager {
	hostRC := resolvConf{}
	if b, err := os.ReadFile(cfg.HostResolvConf); err == nil {
		hostRC = parseResolvConf(b)
	}
	m := &podManager{
		cfg: cfg, rt: rt, net: net, netns: netns, api: a,
		podRes:    api.Lookup(api.Resources(), "v1", "pods"),
		pods:      pods,
		rec:       rec,
		log:       cfg.Logger,
		nodeDNS:   nodeDNS,
		hostRC:    hostRC,
		podsDir:   filepath.Join(cfg.DataDir, "pods"),
		spawn:     make(chan struct{}, 1),
		sandboxes: make(chan struct{}, maxParallelSandboxes),
		workers:   map[string]*podWorker{}, finished: map[string]bool{},
		adopted: map[string][]runtime.ContainerStatus{}, lastSeen: map[string]string{},
	}
	m.status = newStatusManager(a, pods, cfg.Logger)
	objs := newAPIObjects(a)
	m.objects, m.tokens, m.now = objs, objs, time.Now
	m.storage = objs
	m.prober = &probe.Prober{Exec: rt, Dial: dialIn(netns)}
	return m
}

// kubernetesServiceEnv is the env of default/kubernetes, which the
// kubelet gives every container (also with enableServiceLinks false).
func (m *podManager) kubernetesServiceEnv() []string {
	if m.services == nil {
		return nil
	}
	obj, ok := m.services.Get("default", "kubernetes")
	if !ok {
		return nil
	}
	svc, _ := obj.(*api.Service)
	if svc == nil {
		return nil
	}
	return serviceEnvVars(svc)
}

// dialIn dials from inside the node's network namespace.
func dialIn(ns NetNS) probe.DialFunc {
	return func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = ns.do(func() error {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// handlers is the pods informer's event handler.
func (m *podManager) handlers() client.EventHandler {
	return client.HandlerFuncs{
		AddFunc:    m.onPod,
		UpdateFunc: func(_, obj api.Object) { m.onPod(obj) },
		DeleteFunc: m.onPodDelete,
	}
}
