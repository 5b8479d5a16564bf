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
	// Client writes Deployments (status, revision annotations) and Pods.
	Client Client
	// Deployments and Pods are informers of all namespaces; the caller
	// runs them.
	Deployments, Pods Cache
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Event reasons besides the rollback ones (history.go).
const (
	ReasonScalingReplicaSet = "ScalingReplicaSet"
	ReasonSuccessfulCreate  = "SuccessfulCreate"
	ReasonFailedCreate      = "FailedCreate"
	ReasonSuccessfulDelete  = "SuccessfulDelete"
	ReasonFailedDelete      = "FailedDelete"
)

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
	// ExpectationsTTL is how long creations and deletions in flight may
	// stay unobserved before the Deployment is planned again anyway;
	// default 5 minutes, as Kubernetes.
	ExpectationsTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Index of the pod informer that the controller adds: "uid/<uid>" for pods
// controlled by a Deployment, "orphan/<namespace>" for pods without a
// controller.
const podIndex = "deployment.skiff.dev/controller"

// ErrRunning is returned by a second call of Run.
var ErrRunning = errors.New("deployment: Run called more than once")

// Controller is the Deployment controller. Create it with New, start it
// once with Run.
type Controller struct {
	client      Client
	deployments Cache
	pods        Cache
	deployInfo  *api.ResourceInfo
	podInfo     *api.ResourceInfo
	recorder    EventRecorder
	workers     int
	maxRetries  int
	now         func() time.Time
	log         *slog.Logger
	queue       *workqueue.Queue[string]
	exp         *expectations
	running     atomic.Bool

	// writtenMu protects written: per key, the Deployment as the
	// controller's last write stored it. A sync whose cache is older uses
	// it instead, so the controller does not conflict with its own writes.
	writtenMu sync.Mutex
	written   map[string]*api.Deployment
}

// New returns a Deployment controller reading Deployments and Pods from
// deps' informers and writing through deps.Client. It registers its event
// handlers and a pod index, so call it before the informers run.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	deployments, pods := deps.Deployments, deps.Pods
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
	if opts.ExpectationsTTL <= 0 {
		opts.ExpectationsTTL = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res := api.Resources()
	ctl := &Controller{
		client:      deps.Client,
		deployments: deployments,
		pods:        pods,
		deployInfo:  api.Lookup(res, "apps/v1", "deployments"),
		podInfo:     api.Lookup(res, "v1", "pods"),
		recorder:    deps.Recorder,
		workers:     opts.Workers,
		maxRetries:  opts.MaxRetries,
		now:         opts.Now,
		log:         log.With("controller", "deployment"),
		queue:       workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		exp:         newExpectations(opts.ExpectationsTTL, opts.Now),
		written:     map[string]*api.Deployment{},
	}
	pods.AddIndexer(podIndex, podIndexValues)
	deployments.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.enqueueObject,
		UpdateFunc: func(_, obj api.Object) { ctl.enqueueObject(obj) },
		DeleteFunc: func(obj api.Object) {
			key := keyOf(obj.GetObjectMeta())
			ctl.exp.forget(key)
			ctl.forgetWritten(key)
			ctl.queue.Add(key)
		},
	})
	pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.onPodAdd,
		UpdateFunc: ctl.onPodUpdate,
		DeleteFunc: ctl.onPodDelete,
	})
	return ctl
}

// podIndexValues indexes pods by controlling Deployment, or as orphans.
func podIndexValues(obj api.Object) []string {
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

// controllerOf returns the key of the cached Deployment that controls pod,
// or "" when none does.
func (c *Controller) controllerOf(p *api.Pod) string {
	ref := api.ControllerRef(&p.ObjectMeta)
	if ref == nil || !isDeploymentRef(ref) {
		return ""
	}
	obj, ok := c.deployments.Get(p.Namespace, ref.Name)
	if !ok || obj.GetObjectMeta().UID != ref.UID {
		return ""
	}
	return keyOf(obj.GetObjectMeta())
}

// enqueueMatching queues every Deployment in pod's namespace whose
// selector matches it (an orphan that one of them may adopt).
func (c *Controller) enqueueMatching(p *api.Pod) {
	for _, obj := range c.deployments.ByIndex(client.NamespaceIndex, p.Namespace) {
		if d, ok := obj.(*api.Deployment); ok && api.SelectorMatches(d.Spec.Selector, p.Labels) {
			c.queue.Add(keyOf(&d.ObjectMeta))
		}
	}
}

func (c *Controller) onPodAdd(obj api.Object) {
	p, ok := obj.(*api.Pod)
	if !ok {
		return
	}
	if api.ControllerRef(&p.ObjectMeta) == nil {
		if p.DeletionTimestamp == nil {
			c.enqueueMatching(p)
		}
		return
	}
	key := c.controllerOf(p)
	if key == "" {
		return
	}
	c.exp.creationObserved(key)
	if p.DeletionTimestamp != nil {
		c.exp.deletionObserved(key, p.Name)
	}
	c.queue.Add(key)
}

func (c *Controller) onPodUpdate(oldObj, newObj api.Object) {
	old, ok1 := oldObj.(*api.Pod)
	cur, ok2 := newObj.(*api.Pod)
	if !ok1 || !ok2 || old.ResourceVersion == cur.ResourceVersion {
		return
	}
	oldKey, curKey := c.controllerOf(old), c.controllerOf(cur)
	if oldKey != "" && oldKey != curKey {
		c.queue.Add(oldKey)
	}
	if curKey != "" {
		if cur.DeletionTimestamp != nil {
			c.exp.deletionObserved(curKey, cur.Name)
		}
		c.queue.Add(curKey)
		return
	}
	if api.ControllerRef(&cur.ObjectMeta) == nil && cur.DeletionTimestamp == nil {
		c.enqueueMatching(cur)
	}
}

func (c *Controller) onPodDelete(obj api.Object) {
	p, ok := obj.(*api.Pod)
	if !ok {
		return
	}
	if key := c.controllerOf(p); key != "" {
		c.exp.deletionObserved(key, p.Name)
		c.queue.Add(key)
	}
}

// Run waits for the informers' caches, then runs Options.Workers workers
// until ctx ends. It returns nil once ctx has ended and every worker has
// returned.
func (c *Controller) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	if c.deployInfo == nil || c.podInfo == nil {
		return errors.New("deployment: resource table lacks deployments or pods")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.deployments.HasSynced, c.pods.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers:    c.workers,
		MaxRetries: c.maxRetries,
		Log:        c.log,
		KeyName:    "deployment",
		RetryLevel: func(f workqueue.Failure[string]) slog.Level {
			if client.IsConflict(f.Err) {
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
		c.exp.forget(key)
		c.forgetWritten(key)
		return 0, nil
	}
	cached, ok := obj.(*api.Deployment)
	if !ok {
		return 0, fmt.Errorf("deployment: %s: cached object is %T", key, obj)
	}
	d := api.DeepCopy(c.freshest(key, cached))
	now := c.now()

	pods, err := c.claimPods(ctx, d)
	if err != nil {
		return 0, err
	}
	hist, err := History(d)
	if err != nil {
		c.log.Warn("ignoring unreadable revision history", "deployment", key, "err", err)
		hist = nil
	}
	hash := TemplateHash(&d.Spec.Template)
	rolling := d.DeletionTimestamp == nil && !d.Spec.Paused
	if rolling {
		if v, ok := d.Annotations[AnnotationRollbackTo]; ok {
			return 0, c.rollback(ctx, d, v, hist, hash)
		}
		if d, hist, err = c.recordRevision(ctx, d, hist, hash, pods); err != nil {
			return 0, err
		}
	}
	bnds, err := resolveBounds(d)
	if err != nil {
		return 0, err
	}
	revs := revisionOf(hist)
	minReady := time.Duration(d.Spec.MinReadySeconds) * time.Second
	states := make([]podState, 0, len(pods))
	for _, p := range pods {
		if isActive(p) {
			states = append(states, stateOf(p, revs, minReady, now))
		}
	}

	var applyErr error
	satisfied := c.exp.satisfied(key)
	if d.DeletionTimestamp == nil && satisfied {
		p := computePlan(planInput{
			replicas: replicasOf(d),
			recreate: d.Spec.Strategy.Type == api.RecreateDeploymentStrategyType,
			bounds:   bnds,
			paused:   d.Spec.Paused,
			newHash:  hash,
			pods:     states,
		})
		applyErr = c.apply(ctx, key, d, hist, hash, states, p)
	}

	st, wait := computeStatus(statusInput{d: d, hash: hash, bounds: bnds, pods: states, now: now})
	if err := c.writeStatus(ctx, d, st); err != nil {
		return 0, errors.Join(applyErr, err)
	}
	if !satisfied && (wait == 0 || wait > c.exp.ttl) {
		// Should an event be lost, plan again once the expectations expire.
		wait = c.exp.ttl + time.Second
	}
	return wait, applyErr
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
