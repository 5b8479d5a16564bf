package daemonset

import (
	"context"
	"encoding/json"
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
	"github.com/skiff-dev/skiff/controller/internal/expectations"
	"github.com/skiff-dev/skiff/controller/internal/history"
)

// Client is what the controller needs of the API; *client.Client
// satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
	Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error
}

var _ Client = (*client.Client)(nil)

// EventRecorder records Events about objects; *record.Recorder satisfies
// it.
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Cache is what the controller reads of an informer; *client.Informer
// satisfies it.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	List() []api.Object
	ByIndex(name, value string) []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes pods and DaemonSet status.
	Client Client
	// DaemonSets, Pods and Nodes are informers of all namespaces; the
	// caller runs them.
	DaemonSets, Pods, Nodes Cache
	// Revisions is an informer of ControllerRevisions (all namespaces):
	// each DaemonSet's template history (controller/internal/history),
	// what `kubectl rollout history/undo ds` reads. Nil keeps none.
	Revisions Cache
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Event reasons, as Kubernetes' DaemonSet controller and pod control.
const (
	EventSuccessfulCreate = "SuccessfulCreate"
	EventFailedCreate     = "FailedCreate"
	EventSuccessfulDelete = "SuccessfulDelete"
	EventFailedDelete     = "FailedDelete"
	EventFailedDaemonPod  = "FailedDaemonPod"
)

// Defaults of Options.
const (
	DefaultWorkers             = 2
	DefaultBackoffBase         = 100 * time.Millisecond
	DefaultBackoffMax          = 30 * time.Second
	DefaultMaxRetries          = 15
	DefaultExpectationsTimeout = 5 * time.Minute
	// SlowStartInitialBatchSize is the first batch of creates; each
	// successful batch doubles the next, as Kubernetes' slow start.
	SlowStartInitialBatchSize = 1
)

// Options tune the controller; zero values take the defaults.
type Options struct {
	// Workers is how many DaemonSets are synced at once.
	Workers int
	// BackoffBase and BackoffMax bound the retry back-off of a DaemonSet.
	BackoffBase, BackoffMax time.Duration
	// MaxRetries is how many times a failing DaemonSet is retried before
	// it is dropped (until its next change).
	MaxRetries int
	// ExpectationsTimeout is how long an unobserved create or delete
	// blocks a DaemonSet.
	ExpectationsTimeout time.Duration
}

// Controller is the DaemonSet controller. Create it with New and start it
// once with Run.
type Controller struct {
	client   Client
	sets     Cache
	pods     Cache
	nodes    Cache
	setsInfo *api.ResourceInfo
	podsInfo *api.ResourceInfo
	recorder EventRecorder
	history  *history.History // nil: no ControllerRevisions
	log      *slog.Logger
	queue    *workqueue.Queue[string]
	exp      *expectations.Tracker
	workers  int
	retries  int
	now      func() time.Time

	mu      sync.Mutex // protects backoff
	backoff map[string]*failedBackoff
}

// failedBackoff is the back-off of deleting Failed pods of one DaemonSet on
// one node, as Kubernetes' flowcontrol.Backoff(1s, 15m): each delete
// doubles the wait, and an entry unused for twice the maximum starts over.
type failedBackoff struct {
	last time.Time
	wait time.Duration
}

// Failed-pod back-off bounds, as Kubernetes' DaemonSet controller.
const (
	FailedPodsBackoffBase = time.Second
	FailedPodsBackoffMax  = 15 * time.Minute
)

// New returns a DaemonSet controller reading DaemonSets, pods and nodes
// from deps' informers and writing through deps.Client.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = DefaultBackoffBase
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = DefaultBackoffMax
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.ExpectationsTimeout <= 0 {
		opts.ExpectationsTimeout = DefaultExpectationsTimeout
	}
	c := &Controller{
		client:   deps.Client,
		sets:     deps.DaemonSets,
		pods:     deps.Pods,
		nodes:    deps.Nodes,
		recorder: deps.Recorder,
		workers:  opts.Workers,
		log:      log.With("controller", "daemonset"),
		queue:    workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		exp:      expectations.New(opts.ExpectationsTimeout, time.Now),
		retries:  opts.MaxRetries,
		now:      time.Now,
		backoff:  map[string]*failedBackoff{},
	}
	if deps.Revisions != nil {
		c.history = history.New(deps.Client, deps.Revisions)
	}
	for _, r := range api.Resources() {
		switch {
		case r.Group == "apps" && r.Resource == "daemonsets":
			c.setsInfo = r
		case r.Group == "" && r.Resource == "pods":
			c.podsInfo = r
		}
	}
	c.sets.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj api.Object) { c.enqueue(obj) },
		DeleteFunc: func(obj api.Object) {
			key := keyOf(obj.GetObjectMeta())
			c.exp.Forget(key)
			c.mu.Lock()
			for k := range c.backoff {
				if strings.HasPrefix(k, key+"/") {
					delete(c.backoff, k)
				}
			}
			c.mu.Unlock()
			c.queue.Add(key)
		},
	})
	c.pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.podAdded,
		UpdateFunc: c.podUpdated,
		DeleteFunc: c.podDeleted,
	})
	c.nodes.AddEventHandler(client.HandlerFuncs{
		AddFunc: func(api.Object) { c.enqueueAll() },
		UpdateFunc: func(oldObj, newObj api.Object) {
			if nodeSchedulingChanged(oldObj, newObj) {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(api.Object) { c.enqueueAll() },
	})
	return c
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueue(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

func (c *Controller) enqueueAll() {
	for _, o := range c.sets.List() {
		c.enqueue(o)
	}
}

// nodeSchedulingChanged reports a node change that can change where
// daemon pods belong: labels, taints, or the node's name.
func nodeSchedulingChanged(oldObj, newObj api.Object) bool {
	o, ok1 := oldObj.(*api.Node)
	n, ok2 := newObj.(*api.Node)
	if !ok1 || !ok2 {
		return true
	}
	if o.ResourceVersion == n.ResourceVersion {
		return false
	}
	lo, _ := json.Marshal(o.Labels)
	ln, _ := json.Marshal(n.Labels)
	to, _ := json.Marshal(o.Spec.Taints)
	tn, _ := json.Marshal(n.Spec.Taints)
	return string(lo) != string(ln) || string(to) != string(tn)
}

// ownerKey is the key of the DaemonSet that controls pod, if any.
func ownerKey(pod api.Object) (string, bool) {
	m := pod.GetObjectMeta()
	ref := api.ControllerRef(m)
	if ref == nil || ref.Kind != "DaemonSet" || !strings.HasPrefix(ref.APIVersion, "apps/") {
		return "", false
	}
	return m.Namespace + "/" + ref.Name, true
}

func nodeOf(obj api.Object) string {
	if p, ok := obj.(*api.Pod); ok {
		return p.Spec.NodeName
	}
	return ""
}

func (c *Controller) podAdded(obj api.Object) {
	if key, ok := ownerKey(obj); ok {
		c.exp.CreateObserved(key, nodeOf(obj))
		if obj.GetObjectMeta().DeletionTimestamp != nil {
			c.exp.DeleteObserved(key, obj.GetObjectMeta().UID)
		}
		c.queue.Add(key)
		return
	}
	c.enqueueAdopters(obj)
}

func (c *Controller) podUpdated(oldObj, newObj api.Object) {
	if oldObj.GetObjectMeta().ResourceVersion == newObj.GetObjectMeta().ResourceVersion {
		return // resync
	}
	oldKey, hadOwner := ownerKey(oldObj)
	newKey, hasOwner := ownerKey(newObj)
	if hasOwner {
		if newObj.GetObjectMeta().DeletionTimestamp != nil {
			c.exp.DeleteObserved(newKey, newObj.GetObjectMeta().UID)
		}
		c.queue.Add(newKey)
	} else {
		c.enqueueAdopters(newObj)
	}
	if hadOwner && (!hasOwner || oldKey != newKey) {
		c.queue.Add(oldKey)
	}
}

func (c *Controller) podDeleted(obj api.Object) {
	if key, ok := ownerKey(obj); ok {
		c.exp.DeleteObserved(key, obj.GetObjectMeta().UID)
		c.queue.Add(key)
	}
}

// enqueueAdopters queues the DaemonSets that could adopt an orphan pod:
// same namespace, a matching selector.
func (c *Controller) enqueueAdopters(obj api.Object) {
	m := obj.GetObjectMeta()
	if m.DeletionTimestamp != nil || api.ControllerRef(m) != nil {
		return
	}
	for _, o := range c.sets.ByIndex(client.NamespaceIndex, m.Namespace) {
		if ds, ok := o.(*api.DaemonSet); ok && api.SelectorMatches(ds.Spec.Selector, m.Labels) {
			c.queue.Add(keyOf(&ds.ObjectMeta))
		}
	}
}

// Run waits for the informers' caches, then runs Options.Workers workers
// until ctx ends. It returns nil after ctx ends and every goroutine it
// started has exited. Run must be called at most once.
func (c *Controller) Run(ctx context.Context) error {
	if c.setsInfo == nil || c.podsInfo == nil {
		return errors.New("daemonset: resource table has no daemonsets or pods")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.sets.HasSynced, c.pods.HasSynced, c.nodes.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers: c.workers, MaxRetries: c.retries, Log: c.log, KeyName: "daemonset",
	})
	return nil
}

func (c *Controller) syncKey(ctx context.Context, key string) error {
	requeue, err := c.sync(ctx, key)
	if err == nil && requeue > 0 {
		return workqueue.RequeueAfter(requeue)
	}
	return err
}

func (c *Controller) listNodes() []*api.Node {
	var nodes []*api.Node
	for _, o := range c.nodes.List() {
		if n, ok := o.(*api.Node); ok {
			nodes = append(nodes, n)
		}
	}
	slices.SortFunc(nodes, func(a, b *api.Node) int { return strings.Compare(a.Name, b.Name) })
	return nodes
}

// sync reconciles one DaemonSet: claim its pods, plan (unless writes are
// still in flight), apply, write the status.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.sets.Get(ns, name)
	if !ok {
		c.exp.Forget(key)
		return 0, nil
	}
	ds, ok := obj.(*api.DaemonSet)
	if !ok {
		return 0, fmt.Errorf("daemonset: %s: cache holds %T", key, obj)
	}
	hash, err := TemplateHash(ds)
	if err != nil {
		return 0, err
	}
	pods, err := c.claimPods(ctx, ds)
	if err != nil {
		return 0, err
	}
	if ds.DeletionTimestamp == nil {
		if collided, err := c.syncHistory(ctx, ds, hash, pods); collided || err != nil {
			return 0, err
		}
	}
	in := Input{DS: ds, Nodes: c.listNodes(), Pods: pods, Hash: hash, Now: c.now(), FailedBackoff: c.backoffOf(key)}
	var requeue time.Duration
	var errs []error
	satisfied, wait := c.exp.Satisfied(key)
	switch {
	case ds.DeletionTimestamp != nil:
	case !satisfied:
		c.log.Debug("waiting for creates and deletes in flight", "daemonset", key)
		requeue = wait
	default:
		plan := Reconcile(in)
		if err := c.apply(ctx, ds, hash, plan); err != nil {
			errs = append(errs, err)
		}
		requeue = plan.RequeueAfter
	}
	status, statusRequeue := ComputeStatus(in)
	if statusRequeue > 0 && (requeue == 0 || statusRequeue < requeue) {
		requeue = statusRequeue
	}
	if err := c.writeStatus(ctx, ds, status); err != nil {
		errs = append(errs, err)
	}
	return requeue, errors.Join(errs...)
}

// claimPods returns the pods ds controls (by controller ownerReference uid)
// and adopts orphans of its namespace matching its selector.
func (c *Controller) claimPods(ctx context.Context, ds *api.DaemonSet) ([]*api.Pod, error) {
	var pods []*api.Pod
	var errs []error
	for _, o := range c.pods.ByIndex(client.NamespaceIndex, ds.Namespace) {
		p, ok := o.(*api.Pod)
		if !ok {
			continue
		}
		ref := api.ControllerRef(&p.ObjectMeta)
		switch {
		case ref != nil && ref.UID == ds.UID && !api.SelectorMatches(ds.Spec.Selector, p.Labels) &&
			ds.DeletionTimestamp == nil && p.DeletionTimestamp == nil:
			// Relabelled out of the selector: released, as Kubernetes'
			// ClaimPods does (the node then gets a new pod).
			if err := c.release(ctx, ds, p); err != nil {
				errs = append(errs, err)
				pods = append(pods, p)
			}
		case ref != nil && ref.UID == ds.UID:
			pods = append(pods, p)
		case ref == nil && ds.DeletionTimestamp == nil && p.DeletionTimestamp == nil &&
			api.SelectorMatches(ds.Spec.Selector, p.Labels):
			upd := api.DeepCopy(p)
			upd.OwnerReferences = append(upd.OwnerReferences, controllerRef(ds))
			if err := c.client.Update(ctx, c.podsInfo, p.Namespace, upd); err != nil {
				errs = append(errs, fmt.Errorf("daemonset: %s: adopt pod %s: %w", keyOf(&ds.ObjectMeta), p.Name, err))
				continue
			}
			c.log.Info("adopted orphan pod", "daemonset", keyOf(&ds.ObjectMeta), "pod", p.Name)
			pods = append(pods, upd)
		}
	}
	return pods, errors.Join(errs...)
}

// release drops ds's ownerReference from pod (a PUT guarded by the pod's
// resourceVersion).
func (c *Controller) release(ctx context.Context, ds *api.DaemonSet, p *api.Pod) error {
	upd := api.DeepCopy(p)
	upd.OwnerReferences = slices.DeleteFunc(upd.OwnerReferences, func(r api.OwnerReference) bool { return r.UID == ds.UID })
	err := c.client.Update(ctx, c.podsInfo, p.Namespace, upd)
	if err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("daemonset: %s: release pod %s: %w", keyOf(&ds.ObjectMeta), p.Name, err)
	}
	c.log.Info("released pod", "daemonset", keyOf(&ds.ObjectMeta), "pod", p.Name)
	return nil
}

func (c *Controller) event(ds *api.DaemonSet, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(ds, eventType, reason, format, args...)
	}
}

// apply deletes the plan's pods, then creates its pods in slow-start
// batches (1, 2, 4, ...), stopping after the first batch with a failure;
// the creates not sent are dropped from the expectations and retried on
// the next sync.
func (c *Controller) apply(ctx context.Context, ds *api.DaemonSet, hash string, plan Plan) error {
	key := keyOf(&ds.ObjectMeta)
	var errs []error
	for _, d := range plan.Delete {
		if err := c.deletePod(ctx, ds, d); err != nil {
			errs = append(errs, err)
		}
	}
	for _, node := range plan.Create {
		c.exp.ExpectCreate(key, node)
	}
	batch := min(len(plan.Create), SlowStartInitialBatchSize)
	for pos := 0; pos < len(plan.Create); pos, batch = pos+batch, min(2*batch, len(plan.Create)-(pos+batch)) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		failed := 0
		for _, node := range plan.Create[pos : pos+batch] {
			wg.Go(func() {
				if err := c.createPod(ctx, ds, node, hash); err != nil {
					mu.Lock()
					failed++
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if failed > 0 {
			for _, node := range plan.Create[pos+batch:] {
				c.exp.CreateObserved(key, node)
			}
			break
		}
	}
	return errors.Join(errs...)
}

// backoffOf is, per node, until when Failed pods of DaemonSet key there
// are left alone.
func (c *Controller) backoffOf(key string) map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]time.Time{}
	for k, b := range c.backoff {
		if node, ok := strings.CutPrefix(k, key+"/"); ok && !strings.Contains(node, "/") {
			out[node] = b.last.Add(b.wait)
		}
	}
	return out
}

// nextBackoff records a delete of a Failed pod on node.
func (c *Controller) nextBackoff(key, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	k := key + "/" + node
	b, ok := c.backoff[k]
	switch {
	case !ok || now.Sub(b.last) > 2*FailedPodsBackoffMax:
		b = &failedBackoff{wait: FailedPodsBackoffBase}
		c.backoff[k] = b
	default:
		b.wait = min(2*b.wait, FailedPodsBackoffMax)
	}
	b.last = now
}

func (c *Controller) createPod(ctx context.Context, ds *api.DaemonSet, node, hash string) error {
	key := keyOf(&ds.ObjectMeta)
	pod := NewPod(ds, node, hash)
	if err := c.client.Create(ctx, c.podsInfo, ds.Namespace, pod); err != nil {
		c.exp.CreateObserved(key, node)
		if ctx.Err() == nil {
			c.event(ds, api.EventTypeWarning, EventFailedCreate, "Error creating: %v", err)
		}
		return fmt.Errorf("daemonset: %s: create pod on node %s: %w", key, node, err)
	}
	c.log.Info("created pod", "daemonset", key, "pod", pod.Name, "node", node)
	c.event(ds, api.EventTypeNormal, EventSuccessfulCreate, "Created pod: %s", pod.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, ds *api.DaemonSet, d Delete) error {
	key := keyOf(&ds.ObjectMeta)
	p := d.Pod
	if d.Reason == ReasonFailed {
		c.nextBackoff(key, p.Spec.NodeName)
		c.event(ds, api.EventTypeWarning, EventFailedDaemonPod, "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, p.Spec.NodeName)
	}
	c.exp.ExpectDelete(key, p.UID)
	err := c.client.Delete(ctx, c.podsInfo, p.Namespace, p.Name, client.DeleteOptions{
		Preconditions: &client.Preconditions{UID: p.UID},
	})
	switch {
	case err == nil:
	case client.IsNotFound(err), client.IsConflict(err):
		c.exp.DeleteObserved(key, p.UID)
		return nil
	default:
		c.exp.DeleteObserved(key, p.UID)
		if ctx.Err() == nil {
			c.event(ds, api.EventTypeWarning, EventFailedDelete, "Error deleting: %v", err)
		}
		return fmt.Errorf("daemonset: %s: delete pod %s: %w", key, p.Name, err)
	}
	c.log.Info("deleted pod", "daemonset", key, "pod", p.Name, "node", p.Spec.NodeName, "reason", d.Reason)
	c.event(ds, api.EventTypeNormal, EventSuccessfulDelete, "Deleted pod: %s", p.Name)
	return nil
}

// writeStatus writes status when it differs from the cached one: a JSON
// patch of the status subresource, after a test of the uid, setting every
// count the controller owns (conditions and collisionCount are left
// alone). As the StatefulSet controller, it sends no resourceVersion: it
// is the only writer of these fields and syncs of one key never overlap.
func (c *Controller) writeStatus(ctx context.Context, ds *api.DaemonSet, st api.DaemonSetStatus) error {
	a, _ := json.Marshal(ds.Status)
	b, _ := json.Marshal(st)
	if string(a) == string(b) {
		return nil
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	ops := []op{{"test", "/metadata/uid", ds.UID}}
	for _, f := range []struct {
		name  string
		value any
	}{
		{"observedGeneration", st.ObservedGeneration},
		{"desiredNumberScheduled", st.DesiredNumberScheduled},
		{"currentNumberScheduled", st.CurrentNumberScheduled},
		{"numberMisscheduled", st.NumberMisscheduled},
		{"numberReady", st.NumberReady},
		{"updatedNumberScheduled", st.UpdatedNumberScheduled},
		{"numberAvailable", st.NumberAvailable},
		{"numberUnavailable", st.NumberUnavailable},
	} {
		ops = append(ops, op{"add", "/status/" + f.name, f.value})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("daemonset: %s/%s: encode status: %w", ds.Namespace, ds.Name, err)
	}
	err = c.client.Patch(ctx, c.setsInfo, ds.Namespace, ds.Name, client.JSONPatchType, patch, nil, "status")
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemonset: %s/%s: update status: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}

// syncHistory makes the revision of ds's template the newest of its
// ControllerRevisions and truncates the others to revisionHistoryLimit,
// keeping those its pods still run (upstream's constructHistory and
// cleanupHistory). A hash collision bumps status.collisionCount, which
// changes the hash; collided says the sync must start over.
func (c *Controller) syncHistory(ctx context.Context, ds *api.DaemonSet, hash string, pods []*api.Pod) (collided bool, err error) {
	if c.history == nil {
		return false, nil
	}
	revs := c.history.Owned(ds.Namespace, string(ds.UID))
	cur, err := c.history.Sync(ctx, history.Owner{Meta: &ds.ObjectMeta, Ref: controllerRef(ds), Template: &ds.Spec.Template, Hash: hash}, revs)
	if errors.Is(err, history.ErrCollision) {
		n := int32(1)
		if ds.Status.CollisionCount != nil {
			n = *ds.Status.CollisionCount + 1
		}
		patch, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/uid", "value": ds.UID},
			{"op": "add", "path": "/status/collisionCount", "value": n},
		})
		if perr := c.client.Patch(ctx, c.setsInfo, ds.Namespace, ds.Name, client.JSONPatchType, patch, nil, "status"); perr != nil && !client.IsNotFound(perr) {
			return true, fmt.Errorf("daemonset: %s/%s: collisionCount: %w", ds.Namespace, ds.Name, perr)
		}
		c.log.Info("revision hash collision; collisionCount bumped", "daemonset", ds.Namespace+"/"+ds.Name, "collisionCount", n)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("daemonset: %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	live := map[string]bool{}
	for _, p := range pods {
		live[p.Labels[api.LabelControllerRevisionHash]] = true
	}
	limit := int32(10)
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = *ds.Spec.RevisionHistoryLimit
	}
	if err := c.history.Truncate(ctx, revs, cur, live, limit); err != nil {
		return false, fmt.Errorf("daemonset: %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return false, nil
}
