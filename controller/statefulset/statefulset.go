package statefulset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	ByIndex(name, value string) []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client writes pods and StatefulSet status.
	Client Client
	// StatefulSets and Pods are informers of all namespaces; the caller
	// runs them.
	StatefulSets, Pods Cache
	// Claims is an informer of all PersistentVolumeClaims, for the
	// claims of spec.volumeClaimTemplates (claims.go); nil creates none.
	Claims Cache
	// Revisions is an informer of ControllerRevisions (all namespaces):
	// each set's template history (controller/internal/history), what
	// `kubectl rollout history/undo sts` reads, and the templates of
	// older revisions pods are recreated at. Nil keeps none.
	Revisions Cache
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Event reasons, as Kubernetes' StatefulSet controller.
const (
	EventSuccessfulCreate    = "SuccessfulCreate"
	EventFailedCreate        = "FailedCreate"
	EventSuccessfulDelete    = "SuccessfulDelete"
	EventFailedDelete        = "FailedDelete"
	EventRecreatingFailedPod = "RecreatingFailedPod"
	EventSuccessfulUpdate    = "SuccessfulUpdate" // adoption of an orphan pod
)

// Defaults of Options.
const (
	DefaultWorkers             = 2
	DefaultBackoffBase         = 100 * time.Millisecond
	DefaultBackoffMax          = 30 * time.Second
	DefaultMaxRetries          = 15
	DefaultExpectationsTimeout = 5 * time.Minute
)

// Options tune the controller; zero values take the defaults.
type Options struct {
	// Workers is how many sets are synced at once.
	Workers int
	// BackoffBase and BackoffMax bound the retry back-off of a set.
	BackoffBase, BackoffMax time.Duration
	// MaxRetries is how many times a failing set is retried before it is
	// dropped (until its next change).
	MaxRetries int
	// ExpectationsTimeout is how long an unobserved create or delete
	// blocks a set.
	ExpectationsTimeout time.Duration
}

// Controller is the StatefulSet controller. Create it with New and start
// it once with Run.
type Controller struct {
	client   Client
	sets     Cache
	pods     Cache
	setsInfo *api.ResourceInfo
	podsInfo *api.ResourceInfo
	recorder EventRecorder
	log      *slog.Logger
	queue    *workqueue.Queue[string]
	exp      *expectations.Tracker
	workers  int
	retries  int
	now      func() time.Time

	// claims and claimsInfo: claims.go (claims nil: no claims made).
	claims     Cache
	claimsInfo *api.ResourceInfo
	history    *history.History // nil: no ControllerRevisions
}

// New returns a StatefulSet controller reading sets and pods from deps'
// informers and writing through deps.Client.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sets, pods := deps.StatefulSets, deps.Pods
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
	ctl := &Controller{
		client:   deps.Client,
		sets:     sets,
		pods:     pods,
		claims:   deps.Claims,
		recorder: deps.Recorder,
		workers:  opts.Workers,
		log:      log.With("controller", "statefulset"),
		queue:    workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		exp:      expectations.New(opts.ExpectationsTimeout, time.Now),
		retries:  opts.MaxRetries,
		now:      time.Now,
	}
	if deps.Revisions != nil {
		ctl.history = history.New(deps.Client, deps.Revisions)
	}
	for _, r := range api.Resources() {
		switch {
		case r.Group == "apps" && r.Resource == "statefulsets":
			ctl.setsInfo = r
		case r.Group == "" && r.Resource == "pods":
			ctl.podsInfo = r
		case r.Group == "" && r.Resource == "persistentvolumeclaims":
			ctl.claimsInfo = r
		}
	}
	sets.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.enqueueSet,
		UpdateFunc: func(_, obj api.Object) { ctl.enqueueSet(obj) },
		DeleteFunc: func(obj api.Object) {
			key := keyOf(obj.GetObjectMeta())
			ctl.exp.Forget(key)
			ctl.queue.Add(key)
		},
	})
	pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    ctl.podAdded,
		UpdateFunc: ctl.podUpdated,
		DeleteFunc: ctl.podDeleted,
	})
	return ctl
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueueSet(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

// ownerKey is the key of the StatefulSet that controls pod, if any.
func ownerKey(pod api.Object) (string, bool) {
	m := pod.GetObjectMeta()
	ref := api.ControllerRef(m)
	if ref == nil || ref.Kind != "StatefulSet" || !strings.HasPrefix(ref.APIVersion, "apps/") {
		return "", false
	}
	return m.Namespace + "/" + ref.Name, true
}

func (c *Controller) podAdded(obj api.Object) {
	if key, ok := ownerKey(obj); ok {
		c.exp.CreateObserved(key, obj.GetObjectMeta().Name)
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

// enqueueAdopters queues the sets that could adopt an orphan pod: same
// namespace, a name of theirs, a matching selector.
func (c *Controller) enqueueAdopters(obj api.Object) {
	m := obj.GetObjectMeta()
	if m.DeletionTimestamp != nil || api.ControllerRef(m) != nil {
		return // being deleted, or another controller's
	}
	for _, o := range c.sets.ByIndex(client.NamespaceIndex, m.Namespace) {
		set, ok := o.(*api.StatefulSet)
		if !ok {
			continue
		}
		if _, ok := ordinalOf(set.Name, m.Name); ok && api.SelectorMatches(set.Spec.Selector, m.Labels) {
			c.queue.Add(keyOf(&set.ObjectMeta))
		}
	}
}

// Run waits for the informers' caches, then runs Options.Workers workers
// until ctx ends. It returns nil after ctx ends and every goroutine it
// started has exited. Run must be called at most once.
func (c *Controller) Run(ctx context.Context) error {
	if c.setsInfo == nil || c.podsInfo == nil {
		return errors.New("statefulset: resource table has no statefulsets or pods")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.sets.HasSynced, c.pods.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers: c.workers, MaxRetries: c.retries, Log: c.log, KeyName: "statefulset",
	})
	return nil
}

// syncKey is sync in workqueue.Run's terms: a retry with back-off on
// error (dropped after MaxRetries), or a later look when asked.
func (c *Controller) syncKey(ctx context.Context, key string) error {
	requeue, err := c.sync(ctx, key)
	if err == nil && requeue > 0 {
		return workqueue.RequeueAfter(requeue)
	}
	return err
}

// claimOwnersWait is how soon a set whose claims' owners were just
// written is synced again, once its cache has seen them.
const claimOwnersWait = 20 * time.Millisecond

// sync reconciles one StatefulSet: it claims the set's pods, computes the
// plan (unless creates or deletes are still in flight, or claims' owners
// were just written), applies it and writes the status if it changed.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.sets.Get(ns, name)
	if !ok {
		c.exp.Forget(key)
		return 0, nil
	}
	set, ok := obj.(*api.StatefulSet)
	if !ok {
		return 0, fmt.Errorf("statefulset: %s: cache holds %T", key, obj)
	}
	update, err := revisionName(set)
	if err != nil {
		return 0, err
	}
	rev := revisions{current: set.Status.CurrentRevision, update: update}
	if rev.current == "" {
		rev.current = rev.update
	}
	pods, err := c.claimPods(ctx, set)
	if err != nil {
		return 0, err
	}
	if set.DeletionTimestamp == nil {
		if err := c.syncHistory(ctx, set, update, pods); err != nil {
			return 0, err
		}
	}
	now := c.now()
	var requeue time.Duration
	var errs []error
	if set.DeletionTimestamp == nil {
		if ok, wait := c.exp.Satisfied(key); !ok {
			c.log.Debug("waiting for creates and deletes in flight", "statefulset", key)
			requeue = wait
		} else if wait, err := c.syncClaimOwners(ctx, set, pods); err != nil || wait { // claims.go
			// The plan may delete a pod whose claims must be its own
			// first: run it once the cache shows them so.
			if err != nil {
				errs = append(errs, err)
			}
			requeue = claimOwnersWait
		} else {
			plan := computePlan(set, pods, rev, now)
			if plan.Wait != "" {
				c.log.Debug("plan", "statefulset", key, "actions", len(plan.Actions), "wait", plan.Wait)
			}
			if err := c.apply(ctx, set, pods, rev, plan); err != nil {
				errs = append(errs, err)
			}
			requeue = plan.RequeueAfter
		}
	}
	status, statusRequeue := computeStatus(set, pods, rev, now)
	if statusRequeue > 0 && (requeue == 0 || statusRequeue < requeue) {
		requeue = statusRequeue
	}
	if err := c.writeStatus(ctx, set, status); err != nil {
		errs = append(errs, err)
	}
	return requeue, errors.Join(errs...)
}

// claimPods returns the pods set controls (by controller ownerReference
// uid) and adopts orphans: pods of the set's namespace with a name of the
// set, a matching selector, no controller and no deletionTimestamp.
func (c *Controller) claimPods(ctx context.Context, set *api.StatefulSet) ([]*api.Pod, error) {
	var pods []*api.Pod
	var errs []error
	for _, o := range c.pods.ByIndex(client.NamespaceIndex, set.Namespace) {
		p, ok := o.(*api.Pod)
		if !ok {
			continue
		}
		ref := api.ControllerRef(&p.ObjectMeta)
		switch {
		case ref != nil && ref.UID == set.UID:
			pods = append(pods, p)
		case ref == nil && set.DeletionTimestamp == nil && p.DeletionTimestamp == nil &&
			api.SelectorMatches(set.Spec.Selector, p.Labels):
			if _, ok := ordinalOf(set.Name, p.Name); !ok {
				continue
			}
			adopted, err := c.adopt(ctx, set, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			pods = append(pods, adopted)
		}
	}
	return pods, errors.Join(errs...)
}

// adopt makes set the controller of an orphan pod (a PUT guarded by the
// pod's resourceVersion).
func (c *Controller) adopt(ctx context.Context, set *api.StatefulSet, p *api.Pod) (*api.Pod, error) {
	upd := api.DeepCopy(p)
	upd.OwnerReferences = append(upd.OwnerReferences, controllerRef(set))
	if err := c.client.Update(ctx, c.podsInfo, p.Namespace, upd); err != nil {
		return nil, fmt.Errorf("statefulset: %s/%s: adopt pod %s: %w", set.Namespace, set.Name, p.Name, err)
	}
	c.log.Info("adopted orphan pod", "statefulset", keyOf(&set.ObjectMeta), "pod", p.Name)
	return upd, nil
}

// apply carries out a plan's actions in order. Each write is expected
// before it is sent and the expectation is dropped when it fails. All
// actions are tried; their errors are joined.
func (c *Controller) apply(ctx context.Context, set *api.StatefulSet, pods []*api.Pod, rev revisions, plan Plan) error {
	var errs []error
	for _, a := range plan.Actions {
		var err error
		switch a.Op {
		case OpCreate:
			err = c.createPod(ctx, set, pods, rev, a)
		case OpDelete:
			err = c.deletePod(ctx, set, a)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) event(set *api.StatefulSet, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(set, eventType, reason, format, args...)
	}
}

func (c *Controller) createPod(ctx context.Context, set *api.StatefulSet, pods []*api.Pod, rev revisions, a Action) error {
	key := keyOf(&set.ObjectMeta)
	tmpl, revision := templateFor(set, pods, a.Revision, rev, c.revisionTemplate(set))
	pod := newPod(set, a.Ordinal, revision, tmpl)
	if err := c.createClaims(ctx, set, a.Ordinal); err != nil { // claims.go
		return err
	}
	c.exp.ExpectCreate(key, pod.Name)
	if err := c.client.Create(ctx, c.podsInfo, set.Namespace, pod); err != nil {
		c.exp.CreateObserved(key, pod.Name)
		if ctx.Err() == nil {
			c.event(set, api.EventTypeWarning, EventFailedCreate, "create Pod %s in StatefulSet %s failed error: %v", pod.Name, set.Name, err)
		}
		return fmt.Errorf("statefulset: %s: create pod %s: %w", key, pod.Name, err)
	}
	c.log.Info("created pod", "statefulset", key, "pod", pod.Name, "revision", revision)
	c.event(set, api.EventTypeNormal, EventSuccessfulCreate, "create Pod %s in StatefulSet %s successful", pod.Name, set.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, set *api.StatefulSet, a Action) error {
	key := keyOf(&set.ObjectMeta)
	p := a.Pod
	if a.Reason == ReasonFailed {
		c.event(set, api.EventTypeWarning, EventRecreatingFailedPod, "StatefulSet %s/%s is recreating %s Pod %s", set.Namespace, set.Name, strings.ToLower(p.Status.Phase), p.Name)
	}
	c.exp.ExpectDelete(key, p.UID)
	err := c.client.Delete(ctx, c.podsInfo, p.Namespace, p.Name, client.DeleteOptions{
		Preconditions: &client.Preconditions{UID: p.UID},
	})
	switch {
	case err == nil:
	case client.IsNotFound(err), client.IsConflict(err):
		// Gone already, or replaced by a pod of the same name: nothing
		// to delete, nothing to wait for.
		c.exp.DeleteObserved(key, p.UID)
		return nil
	default:
		c.exp.DeleteObserved(key, p.UID)
		if ctx.Err() == nil {
			c.event(set, api.EventTypeWarning, EventFailedDelete, "delete Pod %s in StatefulSet %s failed error: %v", p.Name, set.Name, err)
		}
		return fmt.Errorf("statefulset: %s: delete pod %s: %w", key, p.Name, err)
	}
	c.log.Info("deleted pod", "statefulset", key, "pod", p.Name, "reason", a.Reason)
	c.event(set, api.EventTypeNormal, EventSuccessfulDelete, "delete Pod %s in StatefulSet %s successful", p.Name, set.Name)
	return nil
}

// writeStatus writes status, only when it differs from the cached set's,
// with a JSON patch of the status subresource that sets every field the
// controller owns (conditions and collisionCount are left alone) after a
// test of the set's uid, so a recreated set of the same name is never
// written. No resourceVersion is sent: the controller is the only writer
// of these fields and syncs of one set never overlap, each computed from a
// cache at least as new as the last, so a write never undoes a newer one
// (and a stale cache after the controller's own last write costs no
// Conflict).
func (c *Controller) writeStatus(ctx context.Context, set *api.StatefulSet, status api.StatefulSetStatus) error {
	if statusEqual(&set.Status, &status) {
		return nil
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	ops := []op{{"test", "/metadata/uid", set.UID}}
	for _, f := range []struct {
		name  string
		value any
	}{
		{"observedGeneration", status.ObservedGeneration},
		{"replicas", status.Replicas},
		{"readyReplicas", status.ReadyReplicas},
		{"availableReplicas", status.AvailableReplicas},
		{"currentReplicas", status.CurrentReplicas},
		{"updatedReplicas", status.UpdatedReplicas},
		{"currentRevision", status.CurrentRevision},
		{"updateRevision", status.UpdateRevision},
	} {
		// "add" sets a member whether or not it is present.
		ops = append(ops, op{"add", "/status/" + f.name, f.value})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("statefulset: %s/%s: encode status: %w", set.Namespace, set.Name, err)
	}
	err = c.client.Patch(ctx, c.setsInfo, set.Namespace, set.Name, client.JSONPatchType, patch, nil, "status")
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("statefulset: %s/%s: update status: %w", set.Namespace, set.Name, err)
	}
	return nil
}

// syncHistory makes the revision of set's template (update, its name) the
// newest of its ControllerRevisions and cuts the others to
// revisionHistoryLimit, keeping the current revision's and those its
// pods run (controller/internal/history). The revision name carries the
// template hash, so a collision cannot happen here: the same name is the
// same template.
func (c *Controller) syncHistory(ctx context.Context, set *api.StatefulSet, update string, pods []*api.Pod) error {
	if c.history == nil {
		return nil
	}
	revs := c.history.Owned(set.Namespace, string(set.UID))
	hash := update[strings.LastIndex(update, "-")+1:]
	cur, err := c.history.Sync(ctx, history.Owner{Meta: &set.ObjectMeta, Ref: controllerRef(set), Template: &set.Spec.Template, Hash: hash, Name: update}, revs)
	if err != nil {
		return fmt.Errorf("statefulset: %s/%s: %w", set.Namespace, set.Name, err)
	}
	live := map[string]bool{set.Status.CurrentRevision: true}
	for _, p := range pods {
		live[p.Labels[RevisionLabel]] = true
	}
	limit := int32(10)
	if set.Spec.RevisionHistoryLimit != nil {
		limit = *set.Spec.RevisionHistoryLimit
	}
	if err := c.history.Truncate(ctx, revs, cur, live, limit); err != nil {
		return fmt.Errorf("statefulset: %s/%s: %w", set.Namespace, set.Name, err)
	}
	return nil
}

// revisionTemplate finds the template of one of set's revisions in its
// ControllerRevisions (nil without them, or when it is gone).
func (c *Controller) revisionTemplate(set *api.StatefulSet) func(name string) *api.PodTemplateSpec {
	return func(name string) *api.PodTemplateSpec {
		if c.history == nil {
			return nil
		}
		for _, r := range c.history.Owned(set.Namespace, string(set.UID)) {
			if r.Name == name {
				if t, err := r.Template(); err == nil {
					return t
				}
			}
		}
		return nil
	}
}
