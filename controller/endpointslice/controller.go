package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// Tunables.
const (
	// sliceChangeDelay delays the repair sync after someone else changed
	// or deleted one of the controller's slices, so that a burst of such
	// changes costs one sync (Kubernetes' endpointSliceChangeMinSyncDelay).
	sliceChangeDelay = time.Second
	// serviceIndex is the index of the slice informer by the Service a
	// slice of this controller belongs to ("namespace/name").
	serviceIndex = "endpointslice.skiff.dev/service"
)

// errStaleCache: the slice cache is older than the controller's own writes.
var errStaleCache = errors.New("endpointslice: EndpointSlice cache is older than the controller's writes")

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
	// Services, Pods and EndpointSlices are informers of every namespace
	// the controller serves (the caller runs them).
	Services, Pods, EndpointSlices Cache
	// Recorder receives Warning events when a Service's slices cannot be
	// written; nil records nothing.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Controller keeps the EndpointSlices of every Service with a selector in
// step with the Service's pods. Create it with New and start it once with
// Run.
type Controller struct {
	client    Client
	sliceInfo *api.ResourceInfo
	services  Cache
	pods      Cache
	slices    Cache
	recorder  EventRecorder
	opts      Options
	optsErr   error
	log       *slog.Logger
	queue     *workqueue.Queue[string]
	tracker   *sliceTracker
	triggers  *triggerTracker

	// waitingMu protects waiting: the Services whose last sync found the
	// slice cache stale; the next slice event of such a Service requeues
	// it at once.
	waitingMu sync.Mutex
	waiting   map[string]bool

	// memoMu protects memos: per Service, what Reconcile derived from its
	// pods (a Memo itself is used by one sync at a time: the queue never
	// hands one key to two workers).
	memoMu sync.Mutex
	memos  map[string]*Memo
}

// New returns a controller that reads Services, Pods and EndpointSlices
// from deps' informers and writes EndpointSlices through deps.Client. It
// registers its event handlers and a slice index; it may be called before
// or after the informers start. Invalid options are reported by Run.
func New(deps Deps, opts Options) *Controller {
	logger := deps.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	services, pods, endpointSlices := deps.Services, deps.Pods, deps.EndpointSlices
	ctl := &Controller{
		client:    deps.Client,
		sliceInfo: api.Lookup(api.Resources(), "discovery.k8s.io/v1", "endpointslices"),
		services:  services,
		pods:      pods,
		slices:    endpointSlices,
		recorder:  deps.Recorder,
		opts:      opts.withDefaults(),
		optsErr:   opts.Validate(),
		log:       logger.With("controller", "endpointslice"),
		queue:     workqueue.New[string](backoffBase, backoffMax),
		tracker:   newSliceTracker(),
		triggers:  newTriggerTracker(),
		waiting:   map[string]bool{},
		memos:     map[string]*Memo{},
	}
	endpointSlices.AddIndexer(serviceIndex, func(obj api.Object) []string {
		s, ok := obj.(*api.EndpointSlice)
		if !ok || s.Labels[api.LabelManagedBy] != ControllerName || s.Labels[api.LabelServiceName] == "" {
			return nil
		}
		return []string{serviceKeyOf(s)}
	})
	services.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.enqueueObject,
		UpdateFunc: func(_, obj api.Object) { ctl.enqueueObject(obj) },
		DeleteFunc: ctl.enqueueObject,
	})
	pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { ctl.onPod(nil, obj) },
		UpdateFunc: ctl.onPod,
		DeleteFunc: func(obj api.Object) { ctl.onPod(nil, obj) },
	})
	endpointSlices.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.onSliceAdd,
		UpdateFunc: ctl.onSliceUpdate,
		DeleteFunc: ctl.onSliceDelete,
	})
	return ctl
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueueObject(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

// onPod queues every Service of the pod's namespace whose selector
// matched the pod before or after the change. Updates that cannot change
// an endpoint (status heartbeats, resyncs) are ignored.
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
		if !podChanged(old, pod) {
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

// podChanged reports changes that may change the pod's endpoints or the
// Services it belongs to.
func podChanged(old, pod *api.Pod) bool {
	if old.ResourceVersion == pod.ResourceVersion && old.ResourceVersion != "" {
		return false // a resync
	}
	return !maps.Equal(old.Labels, pod.Labels) ||
		old.Spec.Hostname != pod.Spec.Hostname || old.Spec.Subdomain != pod.Spec.Subdomain ||
		old.Spec.NodeName != pod.Spec.NodeName ||
		(old.DeletionTimestamp == nil) != (pod.DeletionTimestamp == nil) ||
		api.IsPodReady(old) != api.IsPodReady(pod) ||
		!podTriggerTime(old).Equal(podTriggerTime(pod)) ||
		podIsEndpoint(old) != podIsEndpoint(pod) ||
		old.Status.PodIP != pod.Status.PodIP ||
		!slices.Equal(old.Status.PodIPs, pod.Status.PodIPs)
}

// selects reports whether a Service selector (ANDed key=value pairs)
// matches labels; an empty selector selects nothing here (the controller
// ignores Services without a selector).
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

func (c *Controller) managed(s *api.EndpointSlice) bool {
	return s.Labels[api.LabelManagedBy] == ControllerName && s.Labels[api.LabelServiceName] != ""
}

// wake requeues a Service at once if its last sync found the slice cache
// stale: this slice event may be the one it was waiting for.
func (c *Controller) wake(s *api.EndpointSlice) {
	key := serviceKeyOf(s)
	c.waitingMu.Lock()
	w := c.waiting[key]
	delete(c.waiting, key)
	c.waitingMu.Unlock()
	if w {
		c.queue.Add(key)
	}
}

func (c *Controller) setWaiting(key string, on bool) {
	c.waitingMu.Lock()
	defer c.waitingMu.Unlock()
	if on {
		c.waiting[key] = true
	} else {
		delete(c.waiting, key)
	}
}

// onSliceAdd repairs a Service when a slice it did not write appears.
func (c *Controller) onSliceAdd(obj api.Object) {
	s, ok := obj.(*api.EndpointSlice)
	if !ok || !c.managed(s) {
		return
	}
	c.wake(s)
	if c.tracker.ShouldSync(s) {
		c.queue.AddAfter(serviceKeyOf(s), sliceChangeDelay)
	}
}

// onSliceUpdate repairs a Service when one of its slices changed under
// the controller, moved to another Service or changed hands.
func (c *Controller) onSliceUpdate(oldObj, newObj api.Object) {
	s, ok1 := newObj.(*api.EndpointSlice)
	old, ok2 := oldObj.(*api.EndpointSlice)
	if !ok1 || !ok2 {
		return
	}
	if c.managed(s) {
		c.wake(s)
	}
	if old.Labels[api.LabelServiceName] != s.Labels[api.LabelServiceName] {
		if c.managed(old) {
			c.queue.AddAfter(serviceKeyOf(old), sliceChangeDelay)
		}
		if c.managed(s) {
			c.queue.AddAfter(serviceKeyOf(s), sliceChangeDelay)
		}
		return
	}
	if c.managed(old) != c.managed(s) || (c.managed(s) && c.tracker.ShouldSync(s)) {
		c.queue.AddAfter(serviceKeyOf(s), sliceChangeDelay)
	}
}

// onSliceDelete repairs a Service when someone else deleted its slice.
func (c *Controller) onSliceDelete(obj api.Object) {
	s, ok := obj.(*api.EndpointSlice)
	if !ok || !c.managed(s) {
		return
	}
	c.wake(s)
	if c.tracker.Has(s) && !c.tracker.HandleDeletion(s) {
		c.queue.AddAfter(serviceKeyOf(s), sliceChangeDelay)
	}
}

// Run waits for the informers' first lists, then runs Options.Workers
// workers until ctx ends. It returns nil once ctx has ended and every
// goroutine it started has exited, or an error for invalid options. Call
// it once.
func (c *Controller) Run(ctx context.Context) error {
	if c.optsErr != nil {
		return c.optsErr
	}
	if c.sliceInfo == nil {
		return errors.New("endpointslice: resource table has no discovery.k8s.io/v1 endpointslices")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.services.HasSynced, c.pods.HasSynced, c.slices.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.opts.Workers, "maxEndpointsPerSlice", c.opts.MaxEndpointsPerSlice)
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers:    c.opts.Workers,
		MaxRetries: maxRetries,
		Log:        c.log,
		KeyName:    "service",
		RetryLevel: func(f workqueue.Failure[string]) slog.Level {
			if errors.Is(f.Err, errStaleCache) {
				return slog.LevelDebug // waiting for the slice event
			}
			return slog.LevelInfo
		},
		OnError: c.onSyncError,
	})
	return nil
}

// onSyncError records a Warning event for a failed write of the Service's
// slices, and forgets that a dropped Service waits for the slice cache.
func (c *Controller) onSyncError(_ context.Context, f workqueue.Failure[string]) {
	if f.Dropped {
		c.setWaiting(f.Key, false)
	}
	var werr *writeError
	if c.recorder == nil || !errors.As(f.Err, &werr) {
		return
	}
	c.recorder.Eventf(werr.svc, api.EventTypeWarning, "FailedToUpdateEndpointSlices",
		"Error updating Endpoint Slices for Service %s: %v", f.Key, werr.err)
}

// writeError is a failure of apply: its Service gets a Warning event.
type writeError struct {
	svc *api.Service
	err error
}

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// idle reports whether no Service is queued, being synced or waiting for
// a retry.
func (c *Controller) idle() bool { return c.queue.Idle() }

// sync reconciles the slices of the Service key ("namespace/name") with
// the caches.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return nil
	}
	obj, found := c.services.Get(ns, name)
	if !found {
		return c.deleteServiceSlices(ctx, key)
	}
	svc, ok := obj.(*api.Service)
	if !ok {
		return fmt.Errorf("endpointslice: service %s: unexpected type %T in the cache", key, obj)
	}
	// ExternalName Services and Services without a selector get no slices
	// from this controller; their slices (written by others, or by this
	// controller before the selector was removed) are left alone.
	if svc.Spec.Type == api.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
		c.memoMu.Lock()
		delete(c.memos, key)
		c.memoMu.Unlock()
		return nil
	}

	// Mark the Service as waiting before reading the slice cache: the
	// slice event that makes the cache current is delivered after the
	// cache holds it, so it requeues the Service at once.
	c.setWaiting(key, true)
	existing := c.slicesFor(key)
	if c.tracker.Stale(svc, existing) {
		return errStaleCache
	}
	c.setWaiting(key, false)
	pods := c.podsFor(svc)

	// Always computed, so the tracker sees every sync even a no-op one.
	trigger := c.triggers.Compute(svc, pods)
	plan := Reconcile(Input{
		Service:              svc,
		Pods:                 pods,
		Slices:               existing,
		MaxEndpointsPerSlice: c.opts.MaxEndpointsPerSlice,
		TriggerTime:          trigger,
		Memo:                 c.memo(key, len(pods)),
	})
	if plan.Empty() {
		return nil
	}
	if err := c.apply(ctx, svc, plan); err != nil {
		return &writeError{svc: svc, err: err}
	}
	return nil
}

// memoMinPods is the fewest pods a Service needs for its Memo to be kept
// between syncs. A Memo holds about 600 bytes per pod; deriving a few pods
// afresh at each sync costs less than keeping them (10,000 Services of 5
// pods would keep 30 MB).
const memoMinPods = 64

// memo returns the Memo of the Service key, making it if needed, or nil
// (forgetting the Service's Memo) when the Service selects fewer than
// memoMinPods pods: Reconcile then derives them afresh.
func (c *Controller) memo(key string, pods int) *Memo {
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	if pods < memoMinPods {
		delete(c.memos, key)
		return nil
	}
	m := c.memos[key]
	if m == nil {
		m = &Memo{}
		c.memos[key] = m
	}
	return m
}

// podsFor returns the cached pods of svc's namespace its selector matches.
func (c *Controller) podsFor(svc *api.Service) []*api.Pod {
	type pair struct{ k, v string }
	sel := make([]pair, 0, len(svc.Spec.Selector))
	for k, v := range svc.Spec.Selector {
		sel = append(sel, pair{k, v})
	}
	objs := c.pods.ByIndex(client.NamespaceIndex, svc.Namespace)
	out := make([]*api.Pod, 0, len(objs))
next:
	for _, obj := range objs {
		pod, ok := obj.(*api.Pod)
		if !ok || len(sel) == 0 {
			continue
		}
		for _, p := range sel {
			if v, ok := pod.Labels[p.k]; !ok || v != p.v {
				continue next
			}
		}
		out = append(out, pod)
	}
	return out
}

// slicesFor returns the cached slices this controller manages for the
// Service key, leaving out those being deleted.
func (c *Controller) slicesFor(key string) []*api.EndpointSlice {
	objs := c.slices.ByIndex(serviceIndex, key)
	out := make([]*api.EndpointSlice, 0, len(objs))
	for _, obj := range objs {
		if s, ok := obj.(*api.EndpointSlice); ok && s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	return out
}

// deleteServiceSlices deletes the slices of a Service that is gone (the
// garbage collector would too, through their owner reference, but later).
func (c *Controller) deleteServiceSlices(ctx context.Context, key string) error {
	c.triggers.DeleteService(key)
	c.memoMu.Lock()
	delete(c.memos, key)
	c.memoMu.Unlock()
	var errs []error
	c.setWaiting(key, true)
	cached := c.slicesFor(key)
	for _, s := range cached {
		if err := c.deleteSlice(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if c.tracker.Unseen(key, cached) {
		return errStaleCache // a slice just created is not cached yet
	}
	c.tracker.DeleteService(key)
	c.setWaiting(key, false)
	return nil
}

// apply writes a plan: creates, then updates, then deletes. Every write
// is attempted; the errors are joined.
func (c *Controller) apply(ctx context.Context, svc *api.Service, plan Plan) error {
	var errs []error
	for _, s := range plan.Create {
		if err := c.client.Create(ctx, c.sliceInfo, svc.Namespace, s); err != nil {
			errs = append(errs, fmt.Errorf("endpointslice: create slice for service %s/%s: %w", svc.Namespace, svc.Name, err))
			continue
		}
		c.tracker.Wrote(s)
		c.log.Debug("created slice", "service", keyOf(&svc.ObjectMeta), "slice", s.Name, "endpoints", len(s.Endpoints))
	}
	for _, s := range plan.Update {
		if err := c.client.Update(ctx, c.sliceInfo, svc.Namespace, s); err != nil {
			errs = append(errs, fmt.Errorf("endpointslice: update slice %s/%s: %w", svc.Namespace, s.Name, err))
			continue
		}
		c.tracker.Wrote(s)
		c.log.Debug("updated slice", "service", keyOf(&svc.ObjectMeta), "slice", s.Name, "endpoints", len(s.Endpoints))
	}
	for _, s := range plan.Delete {
		if err := c.deleteSlice(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteSlice deletes s, guarded by its UID; a slice already gone is fine.
func (c *Controller) deleteSlice(ctx context.Context, s *api.EndpointSlice) error {
	err := c.client.Delete(ctx, c.sliceInfo, s.Namespace, s.Name, client.DeleteOptions{
		Preconditions: &client.Preconditions{UID: s.UID},
	})
	if err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("endpointslice: delete slice %s/%s: %w", s.Namespace, s.Name, err)
	}
	c.tracker.ExpectDeletion(s)
	c.log.Debug("deleted slice", "slice", s.Namespace+"/"+s.Name)
	return nil
}
