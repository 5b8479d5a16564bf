package replicaset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/controller/internal/expectations"
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
	// Client writes the sets' status and the pods.
	Client Client
	// Sets is an informer of the kind's objects (ReplicaSets or
	// ReplicationControllers), Pods one of pods, both of all namespaces;
	// the caller runs them.
	Sets, Pods Cache
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Event reasons, as upstream's pod control records them.
const (
	EventSuccessfulCreate = "SuccessfulCreate"
	EventFailedCreate     = "FailedCreate"
	EventSuccessfulDelete = "SuccessfulDelete"
	EventFailedDelete     = "FailedDelete"
)

// Options tune a Controller; the zero value runs a ReplicaSet controller.
type Options struct {
	// Kind is ReplicaSetKind (the default, when Name is "") or
	// ReplicationControllerKind.
	Kind Kind
	// Workers is how many sets are synced at once; default 5, as upstream.
	Workers int
	// MaxRetries is how many times a failing set is retried with back-off
	// before it is dropped (until its next change); default 15.
	MaxRetries int
	// BackoffBase and BackoffMax bound the retry back-off; defaults 100ms
	// and 30s.
	BackoffBase, BackoffMax time.Duration
	// ExpectationsTTL is how long creations and deletions in flight may
	// stay unobserved before the set is managed again anyway; default 5
	// minutes, as upstream.
	ExpectationsTTL time.Duration
	// Burst caps the pods created or deleted in one round; default
	// DefaultBurst.
	Burst int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// ErrRunning is returned by a second call of Run.
var ErrRunning = errors.New("replicaset: Run called more than once")

// Controller keeps the pods of one kind's sets. Create it with New, start
// it once with Run.
type Controller struct {
	kind       Kind
	client     Client
	sets, pods Cache
	setInfo    *api.ResourceInfo
	podInfo    *api.ResourceInfo
	recorder   EventRecorder
	workers    int
	maxRetries int
	burst      int
	now        func() time.Time
	log        *slog.Logger
	queue      *workqueue.Queue[string]
	exp        *expectations.Tracker
	podIndex   string // the pod informer's index this controller adds
	setIndex   string // the set informer's index by controller uid
	running    atomic.Bool
}

// New returns a controller of opts.Kind reading deps' informers and writing
// through deps.Client. It registers its event handlers and indexes, so call
// it before the informers run.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Kind.Name == "" {
		opts.Kind = ReplicaSetKind
	}
	if opts.Workers <= 0 {
		opts.Workers = 5
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
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res := api.Resources()
	k := opts.Kind
	c := &Controller{
		kind: k, client: deps.Client, sets: deps.Sets, pods: deps.Pods,
		setInfo: k.info(res), podInfo: api.Lookup(res, "v1", "pods"),
		recorder: deps.Recorder, workers: opts.Workers, maxRetries: opts.MaxRetries, burst: opts.Burst,
		now: opts.Now, log: log.With("controller", k.ControllerName),
		queue:    workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		exp:      expectations.New(opts.ExpectationsTTL, opts.Now),
		podIndex: "replicaset.skiff.dev/" + k.Name,
		setIndex: "replicaset.skiff.dev/owner",
	}
	c.pods.AddIndexer(c.podIndex, c.podIndexValues)
	c.sets.AddIndexer(c.setIndex, func(obj api.Object) []string {
		if ref := api.ControllerRef(obj.GetObjectMeta()); ref != nil {
			return []string{ref.UID}
		}
		return nil
	})
	c.sets.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.enqueueObject,
		UpdateFunc: func(_, obj api.Object) { c.enqueueObject(obj) },
		DeleteFunc: func(obj api.Object) {
			key := keyOf(obj.GetObjectMeta())
			c.exp.Forget(key)
			c.queue.Add(key)
		},
	})
	c.pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.onPodAdd,
		UpdateFunc: c.onPodUpdate,
		DeleteFunc: c.onPodDelete,
	})
	return c
}

// podIndexValues indexes pods by their controlling set of this kind
// ("uid/<uid>"), or as orphans ("orphan/<namespace>").
func (c *Controller) podIndexValues(obj api.Object) []string {
	m := obj.GetObjectMeta()
	ref := api.ControllerRef(m)
	switch {
	case ref == nil:
		return []string{"orphan/" + m.Namespace}
	case c.kind.owns(ref):
		return []string{"uid/" + ref.UID}
	}
	return nil
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueueObject(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

// controllerOf returns the key of the cached set that controls pod, or ""
// when none of this kind does.
func (c *Controller) controllerOf(p *api.Pod) string {
	ref := api.ControllerRef(&p.ObjectMeta)
	if ref == nil || !c.kind.owns(ref) {
		return ""
	}
	obj, ok := c.sets.Get(p.Namespace, ref.Name)
	if !ok || obj.GetObjectMeta().UID != ref.UID {
		return ""
	}
	return keyOf(obj.GetObjectMeta())
}

// enqueueMatching queues every set in pod's namespace whose selector
// matches it (an orphan one of them may adopt).
func (c *Controller) enqueueMatching(p *api.Pod) {
	for _, obj := range c.sets.ByIndex(client.NamespaceIndex, p.Namespace) {
		if s, ok := c.kind.toSet(obj); ok && api.SelectorMatches(s.Selector, p.Labels) {
			c.queue.Add(keyOf(obj.GetObjectMeta()))
		}
	}
}

func (c *Controller) onPodAdd(obj api.Object) {
	p, ok := obj.(*api.Pod)
	if !ok {
		return
	}
	if p.DeletionTimestamp != nil {
		// Seen first while already terminating (a relist): a deletion.
		c.onPodDelete(p)
		return
	}
	if api.ControllerRef(&p.ObjectMeta) == nil {
		c.enqueueMatching(p)
		return
	}
	if key := c.controllerOf(p); key != "" {
		c.exp.CountedCreateObserved(key)
		c.queue.Add(key)
	}
}

func (c *Controller) onPodUpdate(oldObj, newObj api.Object) {
	old, ok1 := oldObj.(*api.Pod)
	cur, ok2 := newObj.(*api.Pod)
	if !ok1 || !ok2 || old.ResourceVersion == cur.ResourceVersion {
		return
	}
	oldKey, curKey := c.controllerOf(old), c.controllerOf(cur)
	if cur.DeletionTimestamp != nil {
		// A graceful deletion starts: for the set the pod is gone now (it
		// no longer counts), so expectations are lowered at once.
		if curKey != "" {
			c.exp.DeleteObserved(curKey, cur.Name)
		}
	}
	if oldKey != "" && oldKey != curKey {
		c.queue.Add(oldKey)
	}
	if curKey != "" {
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
		c.exp.DeleteObserved(key, p.Name)
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
	if c.setInfo == nil || c.podInfo == nil {
		return fmt.Errorf("%s: resource table lacks %s or pods", c.kind.ControllerName, c.kind.Resource)
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.sets.HasSynced, c.pods.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers:    c.workers,
		MaxRetries: c.maxRetries,
		Log:        c.log,
		KeyName:    strings.ToLower(c.kind.Name),
		RetryLevel: func(f workqueue.Failure[string]) slog.Level {
			if client.IsConflict(f.Err) {
				return slog.LevelDebug // a stale cache; the retry reads the new version
			}
			return slog.LevelWarn
		},
	})
	return nil
}

func (c *Controller) syncKey(ctx context.Context, key string) error {
	wait, err := c.sync(ctx, key)
	if err == nil && wait > 0 {
		return workqueue.RequeueAfter(wait)
	}
	return err
}

func (c *Controller) event(obj api.Object, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(obj, eventType, reason, format, args...)
	}
}

// sync reconciles one set and returns when it wants to be looked at again
// even without a change (0: only on changes).
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.sets.Get(ns, name)
	if !ok {
		c.exp.Forget(key)
		return 0, nil
	}
	s, ok := c.kind.toSet(obj)
	if !ok {
		return 0, fmt.Errorf("%s: %s: cached object is %T", c.kind.ControllerName, key, obj)
	}
	now := c.now()
	needsSync, _ := c.exp.Satisfied(key)
	plan := Reconcile(Input{
		Set: s, Pods: c.candidates(s), Related: c.related(obj), NeedsSync: needsSync, Burst: c.burst, Now: now,
	})
	owned, claimErr := c.claim(ctx, obj, s, &plan)
	if claimErr != nil {
		return 0, claimErr
	}
	manageErr := c.manage(ctx, key, obj, s, &plan)
	st, wait := ComputeStatus(s, owned, manageErr, now)
	if err := c.writeStatus(ctx, obj, s, st); err != nil {
		return 0, errors.Join(manageErr, err)
	}
	if ok, _ := c.exp.Satisfied(key); !ok && (wait == 0 || wait > c.exp.TTL()) {
		// Should an event be lost, manage again once the expectations expire.
		wait = c.exp.TTL() + time.Second
	}
	return wait, manageErr
}

// candidates are the pods of s's namespace that s controls or that have no
// controller (cache objects: read only).
func (c *Controller) candidates(s *Set) []*api.Pod {
	var out []*api.Pod
	for _, v := range []string{"uid/" + s.UID, "orphan/" + s.Namespace} {
		for _, obj := range c.pods.ByIndex(c.podIndex, v) {
			if p, ok := obj.(*api.Pod); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// related are the active pods of the sets controlled by obj's own
// controller (obj included), for the co-location rank; nil when obj has
// no controller, as upstream.
func (c *Controller) related(obj api.Object) []*api.Pod {
	m := obj.GetObjectMeta()
	ref := api.ControllerRef(m)
	if ref == nil {
		return nil
	}
	var out []*api.Pod
	for _, sib := range c.sets.ByIndex(c.setIndex, ref.UID) {
		sm := sib.GetObjectMeta()
		if sm.Namespace != m.Namespace {
			continue
		}
		for _, po := range c.pods.ByIndex(c.podIndex, "uid/"+sm.UID) {
			if p, ok := po.(*api.Pod); ok && IsActive(p) {
				out = append(out, p)
			}
		}
	}
	return out
}
