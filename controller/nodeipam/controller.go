package nodeipam

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// EventRecorder records Events about objects (client/record satisfies it).
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Client is what the controller needs of the API; *client.Client
// satisfies it.
type Client interface {
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the controller reads of the nodes informer.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	List() []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes Node specs.
	Client Client
	// Nodes is the nodes informer (the caller runs it).
	Nodes Cache
	// Recorder receives CIDRNotAvailable and conflict events; nil = none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options configure the controller.
type Options struct {
	// ClusterCIDR is the range node subnets come from. Required.
	ClusterCIDR netip.Prefix
	// NodeMaskSize is the prefix length of each node's subnet; 0 means 24
	// for an IPv4 cluster CIDR and 64 for IPv6.
	NodeMaskSize int
	// Workers is how many nodes are synced at once; 0 means 2.
	Workers int
}

// Retry back-off of a failed sync.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 30 * time.Second
)

// Controller assigns podCIDRs. Build it with New, run it once with Run.
type Controller struct {
	client  Client
	nodes   Cache
	log     *slog.Logger
	rec     EventRecorder
	nodeRes *api.ResourceInfo
	queue   *workqueue.Queue[string]
	workers int

	// mu protects alloc, byNode and owner.
	mu     sync.Mutex
	alloc  *Allocator
	byNode map[string]netip.Prefix // node -> subnet it holds (assigned or being assigned)
	owner  map[netip.Prefix]string // subnet -> node holding it
}

// New builds the controller over deps' nodes informer and registers its
// handlers. It fails for a cluster CIDR and mask that give no subnet.
func New(deps Deps, opts Options) (*Controller, error) {
	c, nodes, logger := deps.Client, deps.Nodes, deps.Log
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mask := opts.NodeMaskSize
	if mask == 0 {
		mask = 24
		if opts.ClusterCIDR.Addr().Is6() {
			mask = 64
		}
	}
	alloc, err := NewAllocator(opts.ClusterCIDR, mask)
	if err != nil {
		return nil, err
	}
	ctl := &Controller{
		client:  c,
		nodes:   nodes,
		log:     logger.With("controller", "nodeipam"),
		rec:     deps.Recorder,
		workers: opts.Workers,
		nodeRes: api.Lookup(api.Resources(), "v1", "nodes"),
		queue:   workqueue.New[string](backoffBase, backoffMax),
		alloc:   alloc,
		byNode:  map[string]netip.Prefix{},
		owner:   map[netip.Prefix]string{},
	}
	enqueue := func(obj api.Object) { ctl.queue.Add(obj.GetObjectMeta().Name) }
	nodes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj api.Object) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	return ctl, nil
}

// Run waits for the nodes cache, rebuilds the allocations from the nodes'
// podCIDRs, then assigns subnets with Options.Workers workers until ctx
// ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.nodes.HasSynced) {
		return nil
	}
	c.rebuild()
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{Workers: c.workers, Log: c.log, KeyName: "node"})
	return nil
}

// rebuild occupies every subnet a node already has, before any new one is
// handed out.
func (c *Controller) rebuild() {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, obj := range c.nodes.List() {
		node := obj.(*api.Node)
		if p, ok := nodeCIDR(node); ok {
			if c.claimLocked(node, p) {
				n++
			}
		}
	}
	c.log.Info("allocations rebuilt", "assigned", n, "free", c.alloc.Free(), "subnets", c.alloc.Size())
}

// claimLocked records that node holds p; it reports whether the claim was
// new and clean.
func (c *Controller) claimLocked(node *api.Node, p netip.Prefix) bool {
	name := node.Name
	if have, ok := c.byNode[name]; ok {
		if have == p {
			return false
		}
		c.releaseLocked(name) // the node got another subnet elsewhere (admin, another server)
	}
	if !c.alloc.Contains(p) {
		c.log.Warn("node podCIDR is outside the cluster CIDR; leaving it alone", "node", name, "podCIDR", p)
		return false
	}
	if other, ok := c.owner[p]; ok && other != name {
		c.log.Error("two nodes hold the same podCIDR", "podCIDR", p, "node", name, "other", other)
		c.event(node, api.EventTypeWarning, "CIDRAssignmentFailed", "podCIDR %s is also held by node %s", p, other)
		return false
	}
	if err := c.alloc.Occupy(p); err != nil {
		return false
	}
	c.byNode[name] = p
	c.owner[p] = name
	return true
}

func (c *Controller) releaseLocked(name string) {
	p, ok := c.byNode[name]
	if !ok {
		return
	}
	delete(c.byNode, name)
	if c.owner[p] == name {
		delete(c.owner, p)
		c.alloc.Release(p)
	}
}

// sync gives one node a subnet, or releases the subnet of a node that is
// gone.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok := c.nodes.Get("", name)
	if !ok {
		c.mu.Lock()
		if p, had := c.byNode[name]; had {
			c.log.Info("node deleted: podCIDR released", "node", name, "podCIDR", p)
		}
		c.releaseLocked(name)
		c.mu.Unlock()
		return nil
	}
	node := obj.(*api.Node)
	if p, ok := nodeCIDR(node); ok {
		c.mu.Lock()
		c.claimLocked(node, p)
		c.mu.Unlock()
		return nil
	}
	if node.Spec.PodCIDR != "" || len(node.Spec.PodCIDRs) > 0 {
		return nil // unparsable: validation should have refused it; nothing to do
	}
	c.mu.Lock()
	p, held := c.byNode[name]
	if !held {
		var err error
		p, err = c.alloc.Allocate()
		if err != nil {
			c.mu.Unlock()
			c.event(node, api.EventTypeWarning, "CIDRNotAvailable", "Node %s status is now: CIDRNotAvailable", name)
			return err
		}
		c.byNode[name] = p
		c.owner[p] = name
	}
	c.mu.Unlock()

	n := api.DeepCopy(node)
	n.Spec.PodCIDR = p.String()
	n.Spec.PodCIDRs = []string{p.String()}
	err := c.client.Update(ctx, c.nodeRes, "", n)
	switch {
	case err == nil:
		c.log.Info("podCIDR assigned", "node", name, "podCIDR", p)
		return nil
	case client.IsNotFound(err):
		c.mu.Lock()
		c.releaseLocked(name)
		c.mu.Unlock()
		return nil
	case client.IsConflict(err):
		// A stale cache: the next version of the node re-queues it, and
		// the subnet stays reserved for it meanwhile.
		return fmt.Errorf("nodeipam: node %s: %w", name, err)
	}
	return fmt.Errorf("nodeipam: assign %s to node %s: %w", p, name, err)
}

func (c *Controller) event(obj api.Object, typ, reason, format string, args ...any) {
	if c.rec != nil {
		c.rec.Eventf(obj, typ, reason, format, args...)
	}
}

// nodeCIDR is the node's first podCIDR, parsed.
func nodeCIDR(n *api.Node) (netip.Prefix, bool) {
	s := n.Spec.PodCIDR
	if s == "" && len(n.Spec.PodCIDRs) > 0 {
		s = n.Spec.PodCIDRs[0]
	}
	if s == "" {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	return p, true
}

// Assigned returns the node -> subnet table (for tests and debugging).
func (c *Controller) Assigned() map[string]netip.Prefix {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]netip.Prefix, len(c.byNode))
	for k, v := range c.byNode {
		out[k] = v
	}
	return out
}
