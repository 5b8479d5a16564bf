package servicelb

import (
	"context"
	"errors"
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
	UpdateStatus(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the controller reads of the services informer.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	List() []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes Service status.
	Client Client
	// Services is the services informer (the caller runs it).
	Services Cache
	// Recorder receives IPAllocated and AllocationFailed events; nil = none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options configure the controller.
type Options struct {
	// Pool is the range load balancer addresses come from. Required.
	Pool netip.Prefix
}

// ErrPoolFull is returned (and retried) when no pool address is free.
var ErrPoolFull = errors.New("servicelb: no free address in the load balancer pool")

// Retry back-off of a failed sync.
const (
	backoffBase = 200 * time.Millisecond
	backoffMax  = 30 * time.Second
)

// Controller assigns load balancer addresses. Build it with New, run it
// once with Run.
type Controller struct {
	client   Client
	services Cache
	log      *slog.Logger
	rec      EventRecorder
	svcRes   *api.ResourceInfo
	queue    *workqueue.Queue[string]
	pool     netip.Prefix

	// mu protects byIP and bySvc.
	mu    sync.Mutex
	byIP  map[netip.Addr]string // address -> namespace/name
	bySvc map[string]netip.Addr
}

// New builds the controller over deps' services informer and registers
// its handlers. It fails for a pool that is not an IPv4 prefix of /30 or
// larger.
func New(deps Deps, opts Options) (*Controller, error) {
	c, services, logger := deps.Client, deps.Services, deps.Log
	if !opts.Pool.IsValid() || !opts.Pool.Addr().Is4() || opts.Pool.Bits() > 30 {
		return nil, fmt.Errorf("servicelb: pool %v: want an IPv4 prefix of /30 or larger", opts.Pool)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctl := &Controller{
		client: c, services: services, rec: deps.Recorder, pool: opts.Pool.Masked(),
		log:    logger.With("controller", "servicelb"),
		svcRes: api.Lookup(api.Resources(), "v1", "services"),
		queue:  workqueue.New[string](backoffBase, backoffMax),
		byIP:   map[netip.Addr]string{},
		bySvc:  map[string]netip.Addr{},
	}
	enqueue := func(obj api.Object) {
		m := obj.GetObjectMeta()
		ctl.queue.Add(m.Namespace + "/" + m.Name)
	}
	services.AddEventHandler(client.HandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj api.Object) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	return ctl, nil
}

// Run waits for the services cache, rebuilds the table from the Services'
// status, then assigns addresses with one worker until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.services.HasSynced) {
		return nil
	}
	c.rebuild()
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{Log: c.log, KeyName: "service"})
	return nil
}

func (c *Controller) rebuild() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, obj := range c.services.List() {
		svc := obj.(*api.Service)
		if svc.Spec.Type != api.ServiceTypeLoadBalancer {
			continue
		}
		if ip, ok := c.poolIngress(svc); ok {
			c.claimLocked(key(svc), ip)
		}
	}
	c.log.Info("load balancer pool rebuilt", "pool", c.pool, "assigned", len(c.bySvc))
}

func key(svc *api.Service) string { return svc.Namespace + "/" + svc.Name }

// poolIngress is the first ingress address of svc inside the pool.
func (c *Controller) poolIngress(svc *api.Service) (netip.Addr, bool) {
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(ing.IP); err == nil && c.pool.Contains(ip) {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// claimLocked records that k holds ip; false if another Service has it.
func (c *Controller) claimLocked(k string, ip netip.Addr) bool {
	if other, ok := c.byIP[ip]; ok && other != k {
		return false
	}
	if old, ok := c.bySvc[k]; ok && old != ip {
		delete(c.byIP, old)
	}
	c.byIP[ip] = k
	c.bySvc[k] = ip
	return true
}

func (c *Controller) releaseLocked(k string) {
	if ip, ok := c.bySvc[k]; ok {
		delete(c.bySvc, k)
		if c.byIP[ip] == k {
			delete(c.byIP, ip)
		}
	}
}

// allocateLocked picks want when it is in the pool and free, else the
// lowest free address (the pool's network and broadcast addresses are
// skipped).
func (c *Controller) allocateLocked(want string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(want); err == nil && c.pool.Contains(ip) {
		if _, taken := c.byIP[ip]; !taken {
			return ip, nil
		}
	}
	for ip := c.pool.Addr().Next(); c.pool.Contains(ip); ip = ip.Next() {
		if !c.pool.Contains(ip.Next()) {
			break // the broadcast address
		}
		if _, taken := c.byIP[ip]; !taken {
			return ip, nil
		}
	}
	return netip.Addr{}, ErrPoolFull
}

// sync gives one LoadBalancer Service its address, or takes back the
// address of a Service that is gone or no longer a LoadBalancer.
func (c *Controller) sync(ctx context.Context, k string) error {
	ns, name := splitKey(k)
	obj, ok := c.services.Get(ns, name)
	if !ok {
		c.mu.Lock()
		c.releaseLocked(k)
		c.mu.Unlock()
		return nil
	}
	svc := obj.(*api.Service)
	c.mu.Lock()
	if svc.Spec.Type != api.ServiceTypeLoadBalancer {
		c.releaseLocked(k)
		c.mu.Unlock()
		if _, has := c.poolIngress(svc); !has {
			return nil
		}
		s := api.DeepCopy(svc)
		s.Status.LoadBalancer.Ingress = nil
		return c.write(ctx, s, "clear")
	}
	if ip, has := c.poolIngress(svc); has {
		if c.claimLocked(k, ip) {
			c.mu.Unlock()
			return nil
		}
		c.log.Error("two Services hold the same load balancer address", "address", ip, "service", k, "other", c.byIP[ip])
	}
	ip, held := c.bySvc[k]
	if !held {
		var err error
		if ip, err = c.allocateLocked(svc.Spec.LoadBalancerIP); err != nil {
			c.mu.Unlock()
			c.event(svc, api.EventTypeWarning, "AllocationFailed", "Failed to allocate a load balancer address from %s: pool exhausted", c.pool)
			return fmt.Errorf("servicelb: %s: %w", k, err)
		}
		c.claimLocked(k, ip)
	}
	c.mu.Unlock()
	s := api.DeepCopy(svc)
	s.Status.LoadBalancer.Ingress = []api.LoadBalancerIngress{{IP: ip.String()}}
	if err := c.write(ctx, s, "assign"); err != nil {
		return err
	}
	c.event(svc, api.EventTypeNormal, "IPAllocated", "Assigned load balancer address %s", ip)
	return nil
}

func (c *Controller) write(ctx context.Context, s *api.Service, what string) error {
	err := c.client.UpdateStatus(ctx, c.svcRes, s.Namespace, s)
	switch {
	case err == nil:
		c.log.Info("load balancer status written", "service", key(s), "action", what, "ingress", s.Status.LoadBalancer.Ingress)
		return nil
	case client.IsNotFound(err):
		c.mu.Lock()
		c.releaseLocked(key(s))
		c.mu.Unlock()
		return nil
	}
	// A conflict means a stale cache: the next version re-queues it, and
	// the address stays reserved meanwhile.
	return fmt.Errorf("servicelb: %s %s: %w", what, key(s), err)
}

func (c *Controller) event(obj api.Object, typ, reason, format string, args ...any) {
	if c.rec != nil {
		c.rec.Eventf(obj, typ, reason, format, args...)
	}
}

func splitKey(k string) (ns, name string) {
	for i := range len(k) {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// Assigned returns the Service -> address table (tests, debugging).
func (c *Controller) Assigned() map[string]netip.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]netip.Addr, len(c.bySvc))
	for k, v := range c.bySvc {
		out[k] = v
	}
	return out
}
