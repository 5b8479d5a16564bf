package deployment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// Client is what the controller needs of the API; *client.Client
// satisfies it.
type Client interface {
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
}

var _ Client = (*client.Client)(nil)

// EventRecorder records Events about objects (client/record implements
// it). A nil Deps.Recorder records nothing.
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

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
	// Client writes Deployments (status, revision annotation) and
	// ReplicaSets; the controller never writes pods.
	Client Client
	// Deployments, ReplicaSets and Pods are informers of all namespaces;
	// the caller runs them. Pods are read only to see when a Recreate
	// Deployment's old pods are gone.
	Deployments, ReplicaSets, Pods Cache
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// ReasonScalingReplicaSet is the reason of the scaling Events.
const ReasonScalingReplicaSet = "ScalingReplicaSet"

// Options tune a Controller; the zero value is usable.
type Options struct {
	// Workers is how many Deployments are synced at once; default 4.
	Workers int
	// MaxRetries is how many times a failing Deployment is retried with
	// back-off before it is dropped (until its next change); default 15.
	MaxRetries int
	// BackoffBase and BackoffMax bound the retry back-off; defaults 100ms
	// and 30s.
	BackoffBase, BackoffMax time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Indexes the controller adds: on ReplicaSets, "uid/<uid>" for those
// controlled by a Deployment and "orphan/<namespace>" for those without a
// controller; on pods, "uid/<uid>" of their controller.
const (
	rsIndex  = "deployment.skiff.dev/controller"
	podIndex = "deployment.skiff.dev/pod-controller"
)

// ErrRunning is returned by a second call of Run.
var ErrRunning = errors.New("deployment: Run called more than once")

// Controller is the Deployment controller. Create it with New, start it
// once with Run.
type Controller struct {
	client      Client
	deployments Cache
	replicaSets Cache
	pods        Cache
	deployInfo  *api.ResourceInfo
	rsInfo      *api.ResourceInfo
	recorder    EventRecorder
	workers     int
	maxRetries  int
	now         func() time.Time
	log         *slog.Logger
	queue       *workqueue.Queue[string]
	running     atomic.Bool

	// writtenMu protects written: per key, the Deployment as the
	// controller's last write stored it. A sync whose cache is older uses
	// it instead, so the controller does not conflict with its own writes.
	writtenMu sync.Mutex
	written   map[string]*api.Deployment
}

// New returns a Deployment controller reading Deployments, ReplicaSets
// and Pods from deps' informers and writing through deps.Client. It
// registers its event handlers and indexes, so call it before the
// informers run.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 15
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 100 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res := api.Resources()
	ctl := &Controller{
		client:      deps.Client,
		deployments: deps.Deployments,
		replicaSets: deps.ReplicaSets,
		pods:        deps.Pods,
		deployInfo:  api.Lookup(res, "apps/v1", "deployments"),
		rsInfo:      api.Lookup(res, "apps/v1", "replicasets"),
		recorder:    deps.Recorder,
		workers:     opts.Workers,
		maxRetries:  opts.MaxRetries,
		now:         opts.Now,
		log:         log.With("controller", "deployment"),
		queue:       workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		written:     map[string]*api.Deployment{},
	}
	deps.ReplicaSets.AddIndexer(rsIndex, rsIndexValues)
	deps.Pods.AddIndexer(podIndex, func(obj api.Object) []string {
		if ref := api.ControllerRef(obj.GetObjectMeta()); ref != nil {
			return []string{"uid/" + ref.UID}
		}
		return nil
	})
	deps.Deployments.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.enqueueObject,
		UpdateFunc: func(_, obj api.Object) { ctl.enqueueObject(obj) },
		DeleteFunc: func(obj api.Object) {
			key := keyOf(obj.GetObjectMeta())
			ctl.forgetWritten(key)
			ctl.queue.Add(key)
		},
	})
	deps.ReplicaSets.AddEventHandler(client.HandlerFuncs{
		AddFunc: ctl.onReplicaSet,
		UpdateFunc: func(oldObj, obj api.Object) {
			if oldObj.GetObjectMeta().ResourceVersion == obj.GetObjectMeta().ResourceVersion {
				return
			}
			if k := ctl.controllerOf(oldObj.GetObjectMeta()); k != "" && k != ctl.controllerOf(obj.GetObjectMeta()) {
				ctl.queue.Add(k)
			}
			ctl.onReplicaSet(obj)
		},
		DeleteFunc: func(obj api.Object) {
			if k := ctl.controllerOf(obj.GetObjectMeta()); k != "" {
				ctl.queue.Add(k)
			}
		},
	})
	// Pods matter only for Recreate: the new ReplicaSet waits until the
	// old pods are gone (upstream's deletePod handler).
	deps.Pods.AddEventHandler(client.HandlerFuncs{
		UpdateFunc: func(_, obj api.Object) { ctl.onPod(obj) },
		DeleteFunc: ctl.onPod,
	})
	return ctl
}

// rsIndexValues indexes ReplicaSets by controlling Deployment, or as
// orphans.
func rsIndexValues(obj api.Object) []string {
	m := obj.GetObjectMeta()
	ref := api.ControllerRef(m)
	switch {
	case ref == nil:
		return []string{"orphan/" + m.Namespace}
	case isDeploymentRef(ref):
		return []string{"uid/" + ref.UID}
	}
	return nil
}

func isDeploymentRef(ref *api.OwnerReference) bool {
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	return ref.Kind == "Deployment" && group == "apps"
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueueObject(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

// controllerOf returns the key of the cached Deployment that controls the
// object, or "" when none does.
func (c *Controller) controllerOf(m *api.ObjectMeta) string {
	ref := api.ControllerRef(m)
	if ref == nil || !isDeploymentRef(ref) {
		return ""
	}
	obj, ok := c.deployments.Get(m.Namespace, ref.Name)
	if !ok || obj.GetObjectMeta().UID != ref.UID {
		return ""
	}
	return keyOf(obj.GetObjectMeta())
}

// onReplicaSet queues the ReplicaSet's Deployment, or for an orphan every
// Deployment whose selector matches it (one of them may adopt it).
func (c *Controller) onReplicaSet(obj api.Object) {
	m := obj.GetObjectMeta()
	if api.ControllerRef(m) != nil {
		if k := c.controllerOf(m); k != "" {
			c.queue.Add(k)
		}
		return
	}
	if m.DeletionTimestamp != nil {
		return
	}
	for _, o := range c.deployments.ByIndex(client.NamespaceIndex, m.Namespace) {
		if d, ok := o.(*api.Deployment); ok && api.SelectorMatches(d.Spec.Selector, m.Labels) {
			c.queue.Add(keyOf(&d.ObjectMeta))
		}
	}
}

// onPod queues the Recreate Deployment whose ReplicaSet controls pod.
func (c *Controller) onPod(obj api.Object) {
	m := obj.GetObjectMeta()
	ref := api.ControllerRef(m)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, ok := c.replicaSets.Get(m.Namespace, ref.Name)
	if !ok || rs.GetObjectMeta().UID != ref.UID {
		return
	}
	k := c.controllerOf(rs.GetObjectMeta())
	if k == "" {
		return
	}
	ns, name, _ := strings.Cut(k, "/")
	if d, ok := c.deployments.Get(ns, name); ok {
		if dd, ok := d.(*api.Deployment); ok && !isRolling(dd) {
			c.queue.Add(k)
		}
	}
}

// Run waits for the informers' caches, then runs Options.Workers workers
// until ctx ends. It returns nil once ctx has ended and every worker has
// returned.
func (c *Controller) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	if c.deployInfo == nil || c.rsInfo == nil {
		return errors.New("deployment: resource table lacks deployments or replicasets")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.deployments.HasSynced, c.replicaSets.HasSynced, c.pods.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers:    c.workers,
		MaxRetries: c.maxRetries,
		Log:        c.log,
		KeyName:    "deployment",
		RetryLevel: func(f workqueue.Failure[string]) slog.Level {
			if client.IsConflict(f.Err) || errors.Is(f.Err, errCacheBehind) || errors.Is(f.Err, errCollision) {
				return slog.LevelDebug // a stale cache; the retry reads the new version
			}
			return slog.LevelWarn
		},
	})
	return nil
}

// syncKey is sync in workqueue.Run's terms: a wanted later look is a
// RequeueAfter.
func (c *Controller) syncKey(ctx context.Context, key string) error {
	wait, err := c.sync(ctx, key)
	if err == nil && wait > 0 {
		return workqueue.RequeueAfter(wait)
	}
	return err
}

// event records an Event when a recorder is set.
func (c *Controller) event(obj api.Object, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(obj, eventType, reason, format, args...)
	}
}

// sync reconciles one Deployment and returns when it wants to be looked
// at again even without a change (0: only on changes).
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.deployments.Get(ns, name)
	if !ok {
		c.forgetWritten(key)
		return 0, nil
	}
	cached, ok := obj.(*api.Deployment)
	if !ok {
		return 0, fmt.Errorf("deployment: %s: cached object is %T", key, obj)
	}
	d := api.DeepCopy(c.freshest(key, cached))
	if d.Spec.Selector == nil || (len(d.Spec.Selector.MatchLabels) == 0 && len(d.Spec.Selector.MatchExpressions) == 0) {
		// Upstream: an empty selector would select every pod; never act.
		c.event(d, api.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		return 0, nil
	}
	rss, err := c.claimReplicaSets(ctx, d)
	if err != nil {
		return 0, err
	}
	b, err := resolveBounds(d)
	if err != nil {
		return 0, err
	}
	in := Input{Deployment: d, ReplicaSets: rss}
	if !isRolling(d) {
		in.OldPodsRunning = c.oldPodsRunning(d, rss)
	}
	p := Reconcile(in, b)
	created, applyErr := c.apply(ctx, d, &p)
	if errors.Is(applyErr, errCollision) || errors.Is(applyErr, errCacheBehind) {
		return 0, applyErr
	}
	st, wait := ComputeStatus(StatusInput{Deployment: d, Bounds: b, Plan: p, Created: created, Now: c.now()})
	if err := c.writeStatus(ctx, d, st); err != nil {
		return 0, errors.Join(applyErr, err)
	}
	return wait, applyErr
}

// oldPodsRunning is upstream's: a pod controlled by an old ReplicaSet of
// d is neither Succeeded nor Failed (terminating ones count: Recreate
// waits until they are gone).
func (c *Controller) oldPodsRunning(d *api.Deployment, rss []*api.ReplicaSet) bool {
	newRS := findNewReplicaSet(d, rss)
	for _, rs := range rss {
		if rs == newRS {
			continue
		}
		for _, obj := range c.pods.ByIndex(podIndex, "uid/"+rs.UID) {
			p, ok := obj.(*api.Pod)
			if !ok || p.Namespace != d.Namespace {
				continue
			}
			if p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed {
				return true
			}
		}
	}
	return false
}

// remember records d as the controller's last write of key.
func (c *Controller) remember(key string, d *api.Deployment) {
	c.writtenMu.Lock()
	defer c.writtenMu.Unlock()
	c.written[key] = api.DeepCopy(d)
}

func (c *Controller) forgetWritten(key string) {
	c.writtenMu.Lock()
	defer c.writtenMu.Unlock()
	delete(c.written, key)
}

// freshest is cached, or the controller's own last write of the same
// Deployment when the cache has not caught up with it yet
// (resourceVersions are the store's increasing revision).
func (c *Controller) freshest(key string, cached *api.Deployment) *api.Deployment {
	c.writtenMu.Lock()
	defer c.writtenMu.Unlock()
	w, ok := c.written[key]
	if !ok {
		return cached
	}
	wrv, err1 := strconv.ParseUint(w.ResourceVersion, 10, 64)
	crv, err2 := strconv.ParseUint(cached.ResourceVersion, 10, 64)
	if err1 == nil && err2 == nil && w.UID == cached.UID && crv < wrv {
		return w
	}
	delete(c.written, key)
	return cached
}
