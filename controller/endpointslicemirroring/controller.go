package endpointslicemirroring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// ControllerName is the controller's name for --disable-controller.
const ControllerName = "endpointslicemirroring"

// Retry back-off of a failed sync, and the failures in a row after which
// an Endpoints waits for its next change.
const (
	backoffBase = 50 * time.Millisecond
	backoffMax  = 30 * time.Second
	maxRetries  = 15
	// sliceIndex indexes the slices this controller manages by
	// "namespace/service-name".
	sliceIndex = "endpointslicemirroring.skiff.dev/service"
)

var errStaleCache = errors.New("endpointslicemirroring: EndpointSlice cache is older than the controller's writes")

// Client is what the controller writes through: EndpointSlices.
// *client.Client satisfies it.
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
	AddIndexer(name string, f func(api.Object) []string)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	ByIndex(name, value string) []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes EndpointSlices.
	Client Client
	// Services, Endpoints and EndpointSlices are informers over every
	// namespace (the caller runs them).
	Services, Endpoints, EndpointSlices Cache
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options configure the controller. The zero value is valid.
type Options struct {
	// Workers is how many Endpoints are synced at once; default 2.
	Workers int
}

// Controller mirrors user-written Endpoints into EndpointSlices. Build
// it with New, run it once with Run.
type Controller struct {
	client                Client
	services, eps, slices Cache
	info                  *api.ResourceInfo
	log                   *slog.Logger
	opts                  Options
	queue                 *workqueue.Queue[string]

	// writtenMu protects written: per key, the slices this controller
	// wrote by name and the resourceVersion it got ("" once deleted). A
	// cache that does not show them yet is stale.
	writtenMu sync.Mutex
	written   map[string]map[string]string
}

// New builds the controller, registers its handlers and a slice index.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.Services == nil || deps.Endpoints == nil || deps.EndpointSlices == nil {
		return nil, fmt.Errorf("endpointslicemirroring: Client, Services, Endpoints and EndpointSlices are required")
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("endpointslicemirroring: Workers %d < 0", opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		client: deps.Client, services: deps.Services, eps: deps.Endpoints, slices: deps.EndpointSlices,
		info: api.Lookup(api.Resources(), "discovery.k8s.io/v1", "endpointslices"),
		log:  log.With("controller", ControllerName), opts: opts,
		queue:   workqueue.New[string](backoffBase, backoffMax),
		written: map[string]map[string]string{},
	}
	c.slices.AddIndexer(sliceIndex, func(obj api.Object) []string {
		if k, ok := managedKey(obj); ok {
			return []string{k}
		}
		return nil
	})
	h := client.HandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj api.Object) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}
	c.services.AddEventHandler(h)
	c.eps.AddEventHandler(h)
	onSlice := func(obj api.Object) {
		if k, ok := managedKey(obj); ok {
			c.queue.Add(k)
		}
	}
	c.slices.AddEventHandler(client.HandlerFuncs{
		AddFunc:    onSlice,
		UpdateFunc: func(_, obj api.Object) { onSlice(obj) },
		DeleteFunc: onSlice,
	})
	return c, nil
}

// managedKey is the "namespace/service" of a slice this controller
// manages.
func managedKey(obj api.Object) (string, bool) {
	s, ok := obj.(*api.EndpointSlice)
	if !ok || s.Labels[api.LabelManagedBy] != ManagedBy || s.Labels[api.LabelServiceName] == "" {
		return "", false
	}
	return s.Namespace + "/" + s.Labels[api.LabelServiceName], true
}

func (c *Controller) enqueue(obj api.Object) {
	m := obj.GetObjectMeta()
	c.queue.Add(m.Namespace + "/" + m.Name)
}

// Run waits for the caches, then syncs until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.services.HasSynced, c.eps.HasSynced, c.slices.HasSynced) {
		return nil
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: c.opts.Workers, MaxRetries: maxRetries, Log: c.log, KeyName: "endpoints",
	})
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return nil
	}
	var in Input
	if obj, ok := c.eps.Get(ns, name); ok {
		in.Endpoints, _ = obj.(*api.Endpoints)
	}
	if obj, ok := c.services.Get(ns, name); ok {
		in.Service, _ = obj.(*api.Service)
	}
	for _, obj := range c.slices.ByIndex(sliceIndex, key) {
		if s, ok := obj.(*api.EndpointSlice); ok {
			in.Slices = append(in.Slices, s)
		}
	}
	if c.stale(key, in.Slices) {
		return errStaleCache
	}
	plan := Reconcile(in)
	if plan.Empty() {
		return nil
	}
	var errs []error
	for _, s := range plan.Delete {
		err := c.client.Delete(ctx, c.info, ns, s.Name, client.DeleteOptions{Preconditions: &client.Preconditions{UID: s.UID}})
		if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) {
			errs = append(errs, err)
			continue
		}
		c.note(key, s.Name, "")
	}
	for _, s := range plan.Update {
		if err := c.client.Update(ctx, c.info, ns, s); err != nil {
			errs = append(errs, err)
			continue
		}
		c.note(key, s.Name, s.ResourceVersion)
	}
	for _, s := range plan.Create {
		err := c.client.Create(ctx, c.info, ns, s)
		switch {
		case err == nil:
			c.note(key, s.Name, s.ResourceVersion)
		case client.IsForbidden(err) || client.IsNotFound(err):
			// The namespace is terminating or gone.
		default:
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("endpointslicemirroring: %s: %w", key, err)
	}
	return nil
}

// note records a write of the slice name of key (rv "" for a delete).
func (c *Controller) note(key, name, rv string) {
	c.writtenMu.Lock()
	defer c.writtenMu.Unlock()
	m := c.written[key]
	if m == nil {
		m = map[string]string{}
		c.written[key] = m
	}
	m[name] = rv
}

// stale reports whether the cache's slices of key are older than this
// controller's writes; writes the cache shows are forgotten.
func (c *Controller) stale(key string, have []*api.EndpointSlice) bool {
	c.writtenMu.Lock()
	defer c.writtenMu.Unlock()
	m := c.written[key]
	if len(m) == 0 {
		return false
	}
	cached := make(map[string]string, len(have))
	for _, s := range have {
		cached[s.Name] = s.ResourceVersion
	}
	stale := false
	for name, rv := range m {
		got, in := cached[name]
		switch {
		case rv == "" && in, rv != "" && !in, rv != "" && olderRV(got, rv):
			stale = true
		default:
			delete(m, name)
		}
	}
	if len(m) == 0 {
		delete(c.written, key)
	}
	return stale
}

// olderRV reports whether resourceVersion a is before b (both decimal
// revisions, as Skiff's store writes them).
func olderRV(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}
