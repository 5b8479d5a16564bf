package endpoints

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// ControllerName is the controller's name for --disable-controller.
const ControllerName = "endpoints"

// Retry back-off of a failed sync, and the failures in a row after which
// a Service waits for its next change.
const (
	backoffBase = 50 * time.Millisecond
	backoffMax  = 30 * time.Second
	maxRetries  = 15
)

// errStaleCache: the Endpoints cache is older than the controller's own
// last write of that Endpoints.
var errStaleCache = errors.New("endpoints: Endpoints cache is older than the controller's writes")

// Client is what the controller writes through: Endpoints, and a live
// read of a Service the cache does not show. *client.Client satisfies it.
type Client interface {
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, out api.Object) error
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
	ByIndex(name, value string) []api.Object
	List() []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes Endpoints.
	Client Client
	// Services, Pods and Endpoints are informers over every namespace
	// (the caller runs them).
	Services, Pods, Endpoints Cache
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options configure the controller. The zero value is valid.
type Options struct {
	// Workers is how many Services are synced at once; default 2.
	Workers int
}

// Controller keeps one Endpoints per Service with a selector. Build it
// with New, run it once with Run.
type Controller struct {
	client   Client
	services Cache
	pods     Cache
	eps      Cache
	info     *api.ResourceInfo
	svcInfo  *api.ResourceInfo
	log      *slog.Logger
	opts     Options
	queue    *workqueue.Queue[string]

	// staleMu protects stale: per Service key, the resourceVersion of the
	// Endpoints this controller last replaced ("" after a create). A
	// cache still showing it (or, after a create, nothing) is stale.
	staleMu sync.Mutex
	stale   map[string]string
}

// New builds the controller and registers its handlers on deps'
// informers.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.Services == nil || deps.Pods == nil || deps.Endpoints == nil {
		return nil, fmt.Errorf("endpoints: Client, Services, Pods and Endpoints are required")
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("endpoints: Workers %d < 0", opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		client: deps.Client, services: deps.Services, pods: deps.Pods, eps: deps.Endpoints,
		info:    api.Lookup(api.Resources(), "v1", "endpoints"),
		svcInfo: api.Lookup(api.Resources(), "v1", "services"),
		log:     log.With("controller", ControllerName), opts: opts,
		queue: workqueue.New[string](backoffBase, backoffMax),
		stale: map[string]string{},
	}
	c.services.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj api.Object) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	})
	c.pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { c.onPod(nil, obj) },
		UpdateFunc: c.onPod,
		DeleteFunc: func(obj api.Object) { c.onPod(nil, obj) },
	})
	// An Endpoints deleted by someone else is written again; one changed
	// by someone else is repaired at the next change of its Service or
	// pods, as in Kubernetes.
	c.eps.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.wake,
		UpdateFunc: func(_, obj api.Object) { c.wake(obj) },
		DeleteFunc: func(obj api.Object) {
			c.setStale(keyOf(obj.GetObjectMeta()), "", false)
			c.enqueue(obj)
		},
	})
	return c, nil
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueue(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

// wake requeues a Service whose last sync found the cache stale, now that
// its Endpoints changed in the cache.
func (c *Controller) wake(obj api.Object) {
	key := keyOf(obj.GetObjectMeta())
	c.staleMu.Lock()
	_, waiting := c.stale[key]
	c.staleMu.Unlock()
	if waiting {
		c.queue.Add(key)
	}
}

// onPod queues every Service of the pod's namespace whose selector
// matched the pod before or after the change; resyncs are ignored.
func (c *Controller) onPod(oldObj, newObj api.Object) {
	pod, ok := newObj.(*api.Pod)
	if !ok {
		return
	}
	var old *api.Pod
	if oldObj != nil {
		if old, ok = oldObj.(*api.Pod); !ok {
			return
		}
		if old.ResourceVersion == pod.ResourceVersion && old.ResourceVersion != "" {
			return
		}
	}
	for _, obj := range c.services.ByIndex(client.NamespaceIndex, pod.Namespace) {
		svc, ok := obj.(*api.Service)
		if !ok || len(svc.Spec.Selector) == 0 {
			continue
		}
		if selects(svc.Spec.Selector, pod.Labels) || (old != nil && selects(svc.Spec.Selector, old.Labels)) {
			c.queue.Add(keyOf(&svc.ObjectMeta))
		}
	}
}

// selects reports whether a Service selector (ANDed key=value pairs)
// matches labels; an empty selector selects nothing.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Run waits for the caches, queues every existing Endpoints (so that the
// Endpoints of a Service deleted while the controller was down go), then
// syncs Services until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.services.HasSynced, c.pods.HasSynced, c.eps.HasSynced) {
		return nil
	}
	for _, obj := range c.eps.List() {
		c.enqueue(obj)
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: c.opts.Workers, MaxRetries: maxRetries, Log: c.log, KeyName: "service",
	})
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return nil
	}
	obj, found := c.services.Get(ns, name)
	if !found {
		// The Service is gone: so is its Endpoints, whoever wrote it. The
		// Services cache may lag the Endpoints cache (a user's Endpoints
		// created right after its Service), so only a live read decides
		// the Service is gone; when it is there, its event in the cache
		// queues the key again.
		err := c.client.Get(ctx, c.svcInfo, ns, name, &api.Service{})
		switch {
		case err == nil:
			return nil
		case !client.IsNotFound(err):
			return fmt.Errorf("endpoints: get service %s: %w", key, err)
		}
		c.setStale(key, "", false)
		err = c.client.Delete(ctx, c.info, ns, name, client.DeleteOptions{})
		if err != nil && !client.IsNotFound(err) {
			return fmt.Errorf("endpoints: delete %s: %w", key, err)
		}
		return nil
	}
	svc, ok := obj.(*api.Service)
	if !ok {
		return fmt.Errorf("endpoints: service %s: unexpected type %T in the cache", key, obj)
	}
	if svc.Spec.Type == api.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
		// Services without a selector have user-written Endpoints.
		c.setStale(key, "", false)
		return nil
	}
	var cur *api.Endpoints
	if obj, ok := c.eps.Get(ns, name); ok {
		if cur, ok = obj.(*api.Endpoints); !ok {
			return fmt.Errorf("endpoints: %s: unexpected type %T in the cache", key, obj)
		}
	}
	if c.isStale(key, cur) {
		return errStaleCache
	}
	plan := Reconcile(Input{Service: svc, Pods: c.podsFor(svc), Current: cur})
	switch {
	case plan.Create != nil:
		err := c.client.Create(ctx, c.info, ns, plan.Create)
		switch {
		case err == nil:
			c.setStale(key, "", true)
			return nil
		case client.IsForbidden(err) || client.IsNotFound(err):
			return nil // the namespace is terminating or gone
		}
		return fmt.Errorf("endpoints: create %s: %w", key, err)
	case plan.Update != nil:
		if err := c.client.Update(ctx, c.info, ns, plan.Update); err != nil {
			return fmt.Errorf("endpoints: update %s: %w", key, err)
		}
		if plan.Update.ResourceVersion != cur.ResourceVersion {
			c.setStale(key, cur.ResourceVersion, true)
		}
	}
	return nil
}

// isStale reports whether the cache has not yet shown this controller's
// last write of key, and forgets the write once it has.
func (c *Controller) isStale(key string, cur *api.Endpoints) bool {
	c.staleMu.Lock()
	defer c.staleMu.Unlock()
	rv, wrote := c.stale[key]
	if !wrote {
		return false
	}
	if (rv == "" && cur == nil) || (cur != nil && rv != "" && cur.ResourceVersion == rv) {
		return true
	}
	delete(c.stale, key)
	return false
}

func (c *Controller) setStale(key, rv string, on bool) {
	c.staleMu.Lock()
	defer c.staleMu.Unlock()
	if on {
		c.stale[key] = rv
	} else {
		delete(c.stale, key)
	}
}

// podsFor lists the pods of svc's namespace its selector matches, by name.
func (c *Controller) podsFor(svc *api.Service) []*api.Pod {
	var out []*api.Pod
	for _, obj := range c.pods.ByIndex(client.NamespaceIndex, svc.Namespace) {
		if pod, ok := obj.(*api.Pod); ok && selects(svc.Spec.Selector, pod.Labels) {
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b *api.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}
