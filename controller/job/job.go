package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/controller/internal/expectations"
)

// Client is what the controller needs of the API; *client.Client
// satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
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
	// Client writes pods, Job status and deletes finished Jobs.
	Client Client
	// Jobs and Pods are informers of all namespaces; the caller runs them.
	Jobs, Pods Cache
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Event reasons, as Kubernetes' Job controller.
const (
	EventSuccessfulCreate = "SuccessfulCreate"
	EventFailedCreate     = "FailedCreate"
	EventSuccessfulDelete = "SuccessfulDelete"
	EventFailedDelete     = "FailedDelete"
)

// Defaults of Options.
const (
	DefaultWorkers             = 4
	DefaultBackoffBase         = 100 * time.Millisecond
	DefaultBackoffMax          = 30 * time.Second
	DefaultMaxRetries          = 15
	DefaultExpectationsTimeout = 5 * time.Minute
)

// Options tune the controller; zero values take the defaults.
type Options struct {
	Workers                 int
	BackoffBase, BackoffMax time.Duration
	MaxRetries              int
	ExpectationsTimeout     time.Duration
}

// Controller is the Job controller. Create it with New, start it once with
// Run.
type Controller struct {
	client   Client
	jobs     Cache
	pods     Cache
	jobsInfo *api.ResourceInfo
	podsInfo *api.ResourceInfo
	recorder EventRecorder
	log      *slog.Logger
	queue    *workqueue.Queue[string]
	exp      *expectations.Tracker
	workers  int
	retries  int
	now      func() time.Time

	mu      sync.Mutex          // protects written
	written map[string]*api.Job // the controller's last status write per Job key
}

// New returns a Job controller on deps' informers.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := deps.Now
	if now == nil {
		now = time.Now
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
		client: deps.Client, jobs: deps.Jobs, pods: deps.Pods, recorder: deps.Recorder,
		log:     log.With("controller", "job"),
		queue:   workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		exp:     expectations.New(opts.ExpectationsTimeout, now),
		workers: opts.Workers, retries: opts.MaxRetries, now: now,
		written: map[string]*api.Job{},
	}
	for _, r := range api.Resources() {
		switch {
		case r.Group == "batch" && r.Resource == "jobs":
			c.jobsInfo = r
		case r.Group == "" && r.Resource == "pods":
			c.podsInfo = r
		}
	}
	c.jobs.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj api.Object) { c.enqueue(obj) },
		DeleteFunc: func(obj api.Object) {
			key := keyOf(obj.GetObjectMeta())
			c.exp.Forget(key)
			c.mu.Lock()
			delete(c.written, key)
			c.mu.Unlock()
			c.queue.Add(key)
		},
	})
	c.pods.AddEventHandler(client.HandlerFuncs{
		AddFunc: func(obj api.Object) {
			if key, ok := ownerKey(obj); ok {
				c.exp.CountedCreateObserved(key)
				c.podChanged(key, obj)
			}
		},
		UpdateFunc: func(oldObj, obj api.Object) {
			if oldObj.GetObjectMeta().ResourceVersion == obj.GetObjectMeta().ResourceVersion {
				return
			}
			if key, ok := ownerKey(obj); ok {
				c.podChanged(key, obj)
			}
		},
		DeleteFunc: func(obj api.Object) {
			if key, ok := ownerKey(obj); ok {
				c.exp.DeleteObserved(key, obj.GetObjectMeta().UID)
				c.queue.Add(key)
			}
		},
	})
	return c
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueue(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

// podChanged observes a pod's deletion or finalizer removal and queues its
// Job.
func (c *Controller) podChanged(key string, obj api.Object) {
	m := obj.GetObjectMeta()
	if m.DeletionTimestamp != nil || !slices.Contains(m.Finalizers, api.JobTrackingFinalizer) {
		c.exp.DeleteObserved(key, m.UID)
	}
	c.queue.Add(key)
}

// ownerKey is the key of the Job that controls pod.
func ownerKey(pod api.Object) (string, bool) {
	m := pod.GetObjectMeta()
	ref := api.ControllerRef(m)
	if ref == nil || ref.Kind != "Job" || !strings.HasPrefix(ref.APIVersion, "batch/") {
		return "", false
	}
	return m.Namespace + "/" + ref.Name, true
}

// Run waits for the caches, then runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if c.jobsInfo == nil || c.podsInfo == nil {
		return errors.New("job: resource table has no jobs or pods")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.jobs.HasSynced, c.pods.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers: c.workers, MaxRetries: c.retries, Log: c.log, KeyName: "job",
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

func rv(m *api.ObjectMeta) uint64 {
	n, _ := strconv.ParseUint(m.ResourceVersion, 10, 64)
	return n
}

// current is the cached Job, or the controller's own last write of it
// when the cache has not caught up with that write yet.
func (c *Controller) current(key string, cached *api.Job) *api.Job {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.written[key]
	if !ok || w.UID != cached.UID || rv(&w.ObjectMeta) <= rv(&cached.ObjectMeta) {
		delete(c.written, key)
		return cached
	}
	return w
}

// sync reconciles one Job: its pods, the plan (unless writes are still in
// flight), the apply step.
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.jobs.Get(ns, name)
	if !ok {
		c.exp.Forget(key)
		return 0, c.releaseOrphans(ctx, key, "")
	}
	cached, ok := obj.(*api.Job)
	if !ok {
		return 0, fmt.Errorf("job: %s: cache holds %T", key, obj)
	}
	if err := c.releaseOrphans(ctx, key, cached.UID); err != nil {
		return 0, err
	}
	if ok, wait := c.exp.Satisfied(key); !ok {
		return wait, nil
	}
	j := c.current(key, cached)
	pods, err := c.claimPods(ctx, key, j)
	if err != nil {
		return 0, err
	}
	plan := Reconcile(Input{Job: j, Pods: pods, Now: c.now()})
	return plan.RequeueAfter, c.apply(ctx, key, j, plan)
}

// claimPods returns j's pods, as upstream's ClaimPods (with the
// job-tracking finalizer) finds them: the pods whose controller
// ownerReference has its uid and that its selector matches; an orphan of
// its namespace that the selector matches is adopted (the ownerReference
// and the finalizer added, a JSON patch tested on the pod's uid and on
// having no controller), which only a manualSelector Job's selector
// allows (a generated one holds the Job's controller-uid); a pod of j
// relabelled out of its selector is released (both removed). A Job being
// deleted adopts and releases nothing.
func (c *Controller) claimPods(ctx context.Context, key string, j *api.Job) ([]*api.Pod, error) {
	var pods []*api.Pod
	var errs []error
	for _, o := range c.pods.ByIndex(client.NamespaceIndex, j.Namespace) {
		p, ok := o.(*api.Pod)
		if !ok {
			continue
		}
		ref := api.ControllerRef(&p.ObjectMeta)
		matches := api.SelectorMatches(j.Spec.Selector, p.Labels)
		active := j.DeletionTimestamp == nil && p.DeletionTimestamp == nil
		switch {
		case ref != nil && ref.UID == j.UID && !matches && active:
			if err := c.releasePod(ctx, key, j, p); err != nil {
				errs = append(errs, err)
				pods = append(pods, p)
			}
		case ref != nil && ref.UID == j.UID:
			pods = append(pods, p)
		case ref == nil && matches && active:
			adopted, err := c.adoptPod(ctx, key, j, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			pods = append(pods, adopted)
		}
	}
	return pods, errors.Join(errs...)
}

// adoptPod makes j the controller of orphan p and gives it the tracking
// finalizer.
func (c *Controller) adoptPod(ctx context.Context, key string, j *api.Job, p *api.Pod) (*api.Pod, error) {
	refs := append(slices.Clone(p.OwnerReferences), controllerRef(j))
	finalizers := slices.Clone(p.Finalizers)
	if !slices.Contains(finalizers, api.JobTrackingFinalizer) {
		finalizers = append(finalizers, api.JobTrackingFinalizer)
	}
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": p.UID},
		{"op": "test", "path": "/metadata/resourceVersion", "value": p.ResourceVersion},
		{"op": "add", "path": "/metadata/ownerReferences", "value": refs},
		{"op": "add", "path": "/metadata/finalizers", "value": finalizers},
	})
	var out api.Pod
	if err := c.client.Patch(ctx, c.podsInfo, p.Namespace, p.Name, client.JSONPatchType, patch, &out); err != nil {
		return nil, fmt.Errorf("job: %s: adopt pod %s: %w", key, p.Name, err)
	}
	c.log.Info("adopted orphan pod", "job", key, "pod", p.Name)
	return &out, nil
}

// releasePod drops j's ownerReference and the tracking finalizer from p.
func (c *Controller) releasePod(ctx context.Context, key string, j *api.Job, p *api.Pod) error {
	refs := slices.DeleteFunc(slices.Clone(p.OwnerReferences), func(r api.OwnerReference) bool { return r.UID == j.UID })
	finalizers := slices.DeleteFunc(slices.Clone(p.Finalizers), func(f string) bool { return f == api.JobTrackingFinalizer })
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": p.UID},
		{"op": "test", "path": "/metadata/resourceVersion", "value": p.ResourceVersion},
		{"op": "add", "path": "/metadata/ownerReferences", "value": refs},
		{"op": "add", "path": "/metadata/finalizers", "value": finalizers},
	})
	err := c.client.Patch(ctx, c.podsInfo, p.Namespace, p.Name, client.JSONPatchType, patch, nil)
	if err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("job: %s: release pod %s: %w", key, p.Name, err)
	}
	c.log.Info("released pod", "job", key, "pod", p.Name)
	return nil
}

// releaseOrphans removes the job-tracking finalizer from pods whose
// controlling Job of this name is gone (or is another Job of the same
// name, uid != the pod's owner): nothing will count them, and the
// finalizer would keep them forever.
func (c *Controller) releaseOrphans(ctx context.Context, key, uid string) error {
	ns, name, _ := strings.Cut(key, "/")
	var errs []error
	for _, o := range c.pods.ByIndex(client.NamespaceIndex, ns) {
		p, ok := o.(*api.Pod)
		if !ok || !slices.Contains(p.Finalizers, api.JobTrackingFinalizer) {
			continue
		}
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref == nil || ref.Kind != "Job" || ref.Name != name || ref.UID == uid {
			continue
		}
		if err := c.removeFinalizer(ctx, "", p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// apply carries out a plan: the uncounted pods are written to the status
// first, then finalizers removed, pods deleted and created, and the final
// status written only once every finalizer removal succeeded (else the
// uncounted pods stay in the status until a retry removes them).
func (c *Controller) apply(ctx context.Context, key string, j *api.Job, plan Plan) error {
	if plan.Uncounted != nil {
		interim := api.DeepCopy(j)
		interim.Status.UncountedTerminatedPods = plan.Uncounted
		if err := c.writeStatus(ctx, key, j, interim.Status); err != nil {
			return err
		}
		j = c.current(key, j)
	}
	var errs []error
	finalizersOK := true
	for _, p := range plan.RemoveFinalizers {
		if err := c.removeFinalizer(ctx, key, p); err != nil {
			finalizersOK = false
			errs = append(errs, err)
		}
	}
	for _, p := range plan.Deletes {
		if err := c.deletePod(ctx, key, j, p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(plan.Creates) > 0 {
		c.exp.ExpectCreates(key, len(plan.Creates))
		for _, cr := range plan.Creates {
			if err := c.createPod(ctx, key, j, cr); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if finalizersOK {
		if err := c.writeStatus(ctx, key, j, plan.Status); err != nil {
			errs = append(errs, err)
		} else {
			for _, e := range plan.Events {
				c.event(j, e.Type, e.Reason, "%s", e.Message)
			}
		}
	}
	if plan.DeleteJob && len(errs) == 0 {
		// As Kubernetes' TTL-after-finished controller: foreground, so the
		// pods go before the Job; guarded by the uid.
		err := c.client.Delete(ctx, c.jobsInfo, j.Namespace, j.Name, client.DeleteOptions{
			PropagationPolicy: string(api.DeletePropagationForeground),
			Preconditions:     &client.Preconditions{UID: j.UID},
		})
		if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) {
			errs = append(errs, fmt.Errorf("job: %s: delete after ttlSecondsAfterFinished: %w", key, err))
		} else if err == nil {
			c.log.Info("deleted finished job (ttlSecondsAfterFinished)", "job", key)
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) event(j *api.Job, typ, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(j, typ, reason, format, args...)
	}
}

func (c *Controller) createPod(ctx context.Context, key string, j *api.Job, cr Create) error {
	pod := newPod(j, cr)
	if err := c.client.Create(ctx, c.podsInfo, j.Namespace, pod); err != nil {
		c.exp.CountedCreateObserved(key)
		if ctx.Err() == nil {
			c.event(j, api.EventTypeWarning, EventFailedCreate, "Error creating: %v", err)
		}
		return fmt.Errorf("job: %s: create pod: %w", key, err)
	}
	c.log.Info("created pod", "job", key, "pod", pod.Name)
	c.event(j, api.EventTypeNormal, EventSuccessfulCreate, "Created pod: %s", pod.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, key string, j *api.Job, p *api.Pod) error {
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
			c.event(j, api.EventTypeWarning, EventFailedDelete, "Error deleting: %v", err)
		}
		return fmt.Errorf("job: %s: delete pod %s: %w", key, p.Name, err)
	}
	c.event(j, api.EventTypeNormal, EventSuccessfulDelete, "Deleted pod: %s", p.Name)
	return nil
}

// removeFinalizer drops the job-tracking finalizer from p with a JSON
// patch guarded by the pod's uid and the finalizer's position.
func (c *Controller) removeFinalizer(ctx context.Context, key string, p *api.Pod) error {
	i := slices.Index(p.Finalizers, api.JobTrackingFinalizer)
	if i < 0 {
		return nil
	}
	path := "/metadata/finalizers/" + strconv.Itoa(i)
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": p.UID},
		{"op": "test", "path": path, "value": api.JobTrackingFinalizer},
		{"op": "remove", "path": path},
	})
	if key != "" {
		c.exp.ExpectDelete(key, p.UID)
	}
	err := c.client.Patch(ctx, c.podsInfo, p.Namespace, p.Name, client.JSONPatchType, patch, nil)
	if err != nil {
		if key != "" {
			c.exp.DeleteObserved(key, p.UID)
		}
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("job: %s: remove finalizer of pod %s: %w", key, p.Name, err)
	}
	return nil
}

// writeStatus writes status (PUT of the status subresource, guarded by the
// Job's resourceVersion) when it differs from j's, and remembers the
// written Job so that the next sync does not act on a cache that has not
// seen it yet.
func (c *Controller) writeStatus(ctx context.Context, key string, j *api.Job, status api.JobStatus) error {
	if statusEqual(&j.Status, &status) {
		return nil
	}
	upd := api.DeepCopy(j)
	upd.Status = status
	if err := c.client.Update(ctx, c.jobsInfo, j.Namespace, upd, "status"); err != nil {
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("job: %s: update status: %w", key, err)
	}
	c.mu.Lock()
	c.written[key] = upd
	c.mu.Unlock()
	return nil
}

// statusEqual compares two statuses as the API stores them, ignoring the
// probe times of conditions that did not change.
func statusEqual(a, b *api.JobStatus) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
