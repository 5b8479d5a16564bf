package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// LeaseNamespace holds the nodes' heartbeat Leases (name = node name).
const LeaseNamespace = "kube-node-lease"

// PodNodeIndex is the pods informer index this controller adds:
// spec.nodeName.
const PodNodeIndex = "spec.nodeName"

// EventRecorder records Events about objects (client/record satisfies
// it). A nil Deps.Recorder records nothing.
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Client is what the controller needs of the API; *client.Client
// satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the controller reads of an informer; *client.Informer
// satisfies it.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	List() []api.Object
}

// PodCache is the pods informer, which also gets the node index.
type PodCache interface {
	Cache
	AddIndexer(name string, f func(api.Object) []string)
	ByIndex(name, value string) []api.Object
}

var _ PodCache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes node status and taints, pod status, pod deletions
	// and the lease namespace.
	Client Client
	// Nodes, Pods and Leases are informers (the caller runs them; Leases
	// should watch LeaseNamespace).
	Nodes  Cache
	Pods   PodCache
	Leases Cache
	// Recorder receives NodeNotReady and eviction events; nil = none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options tune the controller; zero values take the defaults.
type Options struct {
	// NodeMonitorGracePeriod: a node with no heartbeat for this long is
	// marked Ready=Unknown. Default 40s.
	NodeMonitorGracePeriod time.Duration
	// PodEvictionTimeout: the controller-owned pods of a node not Ready
	// for this long are deleted. Default 5m.
	PodEvictionTimeout time.Duration
	// MonitorPeriod is how often every node is checked besides the checks
	// that changes and deadlines trigger. Default 5s.
	MonitorPeriod time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Workers is how many nodes are synced at once. Default 2.
	Workers int
	// MaxRetries bounds the retries of a failing sync of one node before
	// it waits for the next change or monitor pass. Default 15.
	MaxRetries int
}

func (o *Options) defaults() {
	if o.NodeMonitorGracePeriod <= 0 {
		o.NodeMonitorGracePeriod = 40 * time.Second
	}
	if o.PodEvictionTimeout <= 0 {
		o.PodEvictionTimeout = 5 * time.Minute
	}
	if o.MonitorPeriod <= 0 {
		o.MonitorPeriod = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 15
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
}

// Retry back-off of a failed sync.
const (
	backoffBase = 50 * time.Millisecond
	backoffMax  = 30 * time.Second
)

// Controller watches node heartbeats. Create it with New and start it once
// with Run.
type Controller struct {
	client Client
	nodes  Cache
	pods   PodCache
	leases Cache
	opts   Options
	rec    EventRecorder
	log    *slog.Logger

	nodeRes, podRes, nsRes *api.ResourceInfo

	queue *workqueue.Queue[string]

	// mu protects health.
	mu     sync.Mutex
	health map[string]health
}

// New builds the controller over deps' nodes, pods and leases informers
// and registers its handlers and the pods' PodNodeIndex.
func New(deps Deps, opts Options) *Controller {
	opts.defaults()
	logger := deps.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	nodes, pods, leases := deps.Nodes, deps.Pods, deps.Leases
	res := api.Resources()
	ctl := &Controller{
		client:  deps.Client,
		nodes:   nodes,
		pods:    pods,
		leases:  leases,
		opts:    opts,
		rec:     deps.Recorder,
		log:     logger.With("controller", "nodelifecycle"),
		nodeRes: api.Lookup(res, "v1", "nodes"),
		podRes:  api.Lookup(res, "v1", "pods"),
		nsRes:   api.Lookup(res, "v1", "namespaces"),
		queue:   workqueue.New[string](backoffBase, backoffMax),
		health:  map[string]health{},
	}
	pods.AddIndexer(PodNodeIndex, func(obj api.Object) []string {
		if p, ok := obj.(*api.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}
		}
		return nil
	})
	nodes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { ctl.queue.Add(obj.GetObjectMeta().Name) },
		UpdateFunc: func(_, obj api.Object) { ctl.queue.Add(obj.GetObjectMeta().Name) },
		DeleteFunc: func(obj api.Object) {
			ctl.mu.Lock()
			delete(ctl.health, obj.GetObjectMeta().Name)
			ctl.mu.Unlock()
		},
	})
	onLease := func(obj api.Object) {
		if m := obj.GetObjectMeta(); m.Namespace == LeaseNamespace {
			ctl.queue.Add(m.Name)
		}
	}
	leases.AddEventHandler(client.HandlerFuncs{
		AddFunc:    onLease,
		UpdateFunc: func(_, obj api.Object) { onLease(obj) },
	})
	// A pod landing on (or changing on) a node already not Ready must be
	// marked too; pods of healthy nodes cost nothing.
	onPod := func(obj api.Object) {
		if p, ok := obj.(*api.Pod); ok && p.Spec.NodeName != "" && ctl.notReady(p.Spec.NodeName) {
			ctl.queue.Add(p.Spec.NodeName)
		}
	}
	pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, obj api.Object) { onPod(obj) },
	})
	return ctl
}

func (c *Controller) notReady(node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.health[node].notReadySince.IsZero()
}

// Run creates the kube-node-lease namespace when absent, waits for the
// informers' caches, then syncs nodes with Options.Workers workers until
// ctx ends. It returns nil once ctx has ended and every goroutine it
// started has exited.
func (c *Controller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	wg.Go(func() { c.ensureLeaseNamespace(ctx) })
	if !client.WaitForCacheSync(ctx, c.nodes.HasSynced, c.pods.HasSynced, c.leases.HasSynced) {
		return nil
	}
	c.log.Info("caches synced", "grace", c.opts.NodeMonitorGracePeriod, "evictionTimeout", c.opts.PodEvictionTimeout)
	wg.Go(func() { c.monitor(ctx) })
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers: c.opts.Workers, MaxRetries: c.opts.MaxRetries, Log: c.log, KeyName: "node",
	})
	return nil
}

// ensureLeaseNamespace creates LeaseNamespace, retrying with back-off
// until it exists or ctx ends.
func (c *Controller) ensureLeaseNamespace(ctx context.Context) {
	delay := backoffBase
	for {
		ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: LeaseNamespace}}
		err := c.client.Create(ctx, c.nsRes, "", ns)
		if err == nil || client.IsAlreadyExists(err) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("creating the lease namespace failed, retrying", "namespace", LeaseNamespace, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, backoffMax)
	}
}

// monitor queues every node each MonitorPeriod.
func (c *Controller) monitor(ctx context.Context) {
	t := time.NewTicker(c.opts.MonitorPeriod)
	defer t.Stop()
	for {
		for _, n := range c.nodes.List() {
			c.queue.Add(n.GetObjectMeta().Name)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// syncKey is sync in workqueue.Run's terms: the node's next deadline is a
// RequeueAfter; a failing node is retried with back-off and, after
// MaxRetries, waits for its next change or monitor pass.
func (c *Controller) syncKey(ctx context.Context, name string) error {
	after, err := c.sync(ctx, name)
	if err == nil && after > 0 {
		return workqueue.RequeueAfter(after)
	}
	return err
}

// sync decides about one node from the caches and applies the plan. It
// returns when the node next needs a look.
func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	obj, ok := c.nodes.Get("", name)
	if !ok {
		c.mu.Lock()
		delete(c.health, name)
		c.mu.Unlock()
		return 0, nil
	}
	node := obj.(*api.Node)
	in := input{node: node, now: c.opts.Now(), grace: c.opts.NodeMonitorGracePeriod, evict: c.opts.PodEvictionTimeout}
	if l, ok := c.leases.Get(LeaseNamespace, name); ok {
		in.lease = l.(*api.Lease)
	}
	for _, o := range c.pods.ByIndex(PodNodeIndex, name) {
		in.pods = append(in.pods, o.(*api.Pod))
	}
	c.mu.Lock()
	in.prev = c.health[name]
	c.mu.Unlock()

	p := decide(in)

	c.mu.Lock()
	c.health[name] = p.health
	c.mu.Unlock()
	return p.requeueAfter, c.apply(ctx, node, p, in.now)
}

// apply carries out a plan: the node's status and taints first (so the
// scheduler stops placing pods there), then its pods. Pod failures are
// collected; the sync is retried as a whole, and retries are idempotent.
func (c *Controller) apply(ctx context.Context, node *api.Node, p plan, now time.Time) error {
	if p.ready != nil || p.updateTaints {
		n := api.DeepCopy(node)
		if p.ready != nil {
			setNodeCondition(&n.Status, *p.ready)
			if err := c.client.Update(ctx, c.nodeRes, "", n, "status"); err != nil {
				return fmt.Errorf("nodelifecycle: node %s: set Ready %s: %w", node.Name, p.ready.Status, err)
			}
			c.log.Info("node stopped posting status", "node", node.Name, "reason", p.ready.Reason)
			if p.becameNotReady {
				c.event(n, api.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", node.Name)
			}
		}
		if p.updateTaints {
			// n is the node as the status write left it: recompute on it
			// so a concurrent spec change is not undone.
			if taints, changed := desiredTaints(n.Spec.Taints, p.taintStatus, now); changed {
				n.Spec.Taints = taints
				if err := c.client.Update(ctx, c.nodeRes, "", n); err != nil {
					return fmt.Errorf("nodelifecycle: node %s: taints: %w", node.Name, err)
				}
			}
		}
	}
	return c.applyPods(ctx, node, p, now)
}

// applyPods marks the plan's pods not ready and evicts the others.
func (c *Controller) applyPods(ctx context.Context, node *api.Node, p plan, now time.Time) error {
	var errs []error
	for _, pod := range p.markNotReady {
		cp := api.DeepCopy(pod)
		markPodNotReady(&cp.Status, now)
		err := c.client.Update(ctx, c.podRes, cp.Namespace, cp, "status")
		switch {
		case err == nil:
			c.event(pod, api.EventTypeWarning, "NodeNotReady", "Node is not ready")
		case client.IsNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("nodelifecycle: pod %s/%s: mark not ready: %w", pod.Namespace, pod.Name, err))
		}
	}
	zero := int64(0)
	for _, pod := range p.evict {
		err := c.client.Delete(ctx, c.podRes, pod.Namespace, pod.Name, client.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &client.Preconditions{UID: pod.UID},
		})
		switch {
		case err == nil:
			c.log.Info("evicted pod from unreachable node", "node", node.Name, "pod", pod.Namespace+"/"+pod.Name)
			c.event(pod, api.EventTypeNormal, "NodeControllerEviction", "Marking for deletion Pod %s from Node %s", pod.Name, node.Name)
		case client.IsNotFound(err), client.IsConflict(err):
			// Gone already, or replaced by a pod with the same name.
		default:
			errs = append(errs, fmt.Errorf("nodelifecycle: pod %s/%s: evict: %w", pod.Namespace, pod.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) event(obj api.Object, eventType, reason, format string, args ...any) {
	if c.rec != nil {
		c.rec.Eventf(obj, eventType, reason, format, args...)
	}
}

// setNodeCondition replaces the condition of the same type, or appends it.
func setNodeCondition(st *api.NodeStatus, c api.NodeCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
