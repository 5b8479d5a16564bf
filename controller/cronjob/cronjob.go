package cronjob

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
)

// Client is what the controller needs of the API; *client.Client
// satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
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
	List() []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client creates and deletes Jobs and writes CronJob status.
	Client Client
	// CronJobs and Jobs are informers of all namespaces; the caller runs
	// them.
	CronJobs, Jobs Cache
	Recorder       EventRecorder
	Log            *slog.Logger
	// Now is the clock; nil is time.Now. Tests inject a fake one.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultWorkers     = 4
	DefaultBackoffBase = 100 * time.Millisecond
	DefaultBackoffMax  = 30 * time.Second
	DefaultMaxRetries  = 15
)

// Options tune the controller; zero values take the defaults.
type Options struct {
	Workers                 int
	BackoffBase, BackoffMax time.Duration
	MaxRetries              int
}

// Controller is the CronJob controller.
type Controller struct {
	client   Client
	cronJobs Cache
	jobs     Cache
	cjInfo   *api.ResourceInfo
	jobsInfo *api.ResourceInfo
	recorder EventRecorder
	log      *slog.Logger
	queue    *workqueue.Queue[string]
	workers  int
	retries  int
	now      func() time.Time
}

// New returns a CronJob controller on deps' informers.
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
	c := &Controller{
		client: deps.Client, cronJobs: deps.CronJobs, jobs: deps.Jobs, recorder: deps.Recorder,
		log:     log.With("controller", "cronjob"),
		queue:   workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		workers: opts.Workers, retries: opts.MaxRetries, now: now,
	}
	for _, r := range api.Resources() {
		switch {
		case r.Group == "batch" && r.Resource == "cronjobs":
			c.cjInfo = r
		case r.Group == "batch" && r.Resource == "jobs":
			c.jobsInfo = r
		}
	}
	c.cronJobs.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj api.Object) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	})
	onJob := func(obj api.Object) {
		if key, ok := ownerKey(obj); ok {
			c.queue.Add(key)
		}
	}
	c.jobs.AddEventHandler(client.HandlerFuncs{
		AddFunc:    onJob,
		UpdateFunc: func(_, obj api.Object) { onJob(obj) },
		DeleteFunc: onJob,
	})
	return c
}

func keyOf(m *api.ObjectMeta) string { return m.Namespace + "/" + m.Name }

func (c *Controller) enqueue(obj api.Object) { c.queue.Add(keyOf(obj.GetObjectMeta())) }

func ownerKey(obj api.Object) (string, bool) {
	m := obj.GetObjectMeta()
	ref := api.ControllerRef(m)
	if ref == nil || ref.Kind != "CronJob" || !strings.HasPrefix(ref.APIVersion, "batch/") {
		return "", false
	}
	return m.Namespace + "/" + ref.Name, true
}

// Resync queues every CronJob, as the clock moving would; tests that move
// a fake clock call it.
func (c *Controller) Resync() {
	for _, o := range c.cronJobs.List() {
		c.enqueue(o)
	}
}

// Run waits for the caches, then runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if c.cjInfo == nil || c.jobsInfo == nil {
		return errors.New("cronjob: resource table has no cronjobs or jobs")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.cronJobs.HasSynced, c.jobs.HasSynced) {
		return nil
	}
	c.log.Info("caches synced, starting workers", "workers", c.workers)
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers: c.workers, MaxRetries: c.retries, Log: c.log, KeyName: "cronjob",
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

func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.cronJobs.Get(ns, name)
	if !ok {
		return 0, nil
	}
	cj, ok := obj.(*api.CronJob)
	if !ok {
		return 0, fmt.Errorf("cronjob: %s: cache holds %T", key, obj)
	}
	var jobs []*api.Job
	for _, o := range c.jobs.ByIndex(client.NamespaceIndex, ns) {
		if j, ok := o.(*api.Job); ok {
			if r := api.ControllerRef(&j.ObjectMeta); r != nil && r.UID == cj.UID {
				jobs = append(jobs, j)
			}
		}
	}
	plan := Reconcile(Input{CronJob: cj, Jobs: jobs, Now: c.now()})
	return plan.RequeueAfter, c.apply(ctx, key, cj, plan)
}

func (c *Controller) event(cj *api.CronJob, typ, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(cj, typ, reason, format, args...)
	}
}

// apply deletes, creates, records the events and writes the status (a PUT
// of the status subresource guarded by the resourceVersion, only when it
// changed).
func (c *Controller) apply(ctx context.Context, key string, cj *api.CronJob, plan Plan) error {
	var errs []error
	st := plan.Status
	for _, e := range plan.Events {
		c.event(cj, e.Type, e.Reason, "%s", e.Message)
	}
	for _, j := range plan.Delete {
		err := c.client.Delete(ctx, c.jobsInfo, j.Namespace, j.Name, client.DeleteOptions{
			PropagationPolicy: string(api.DeletePropagationBackground),
			Preconditions:     &client.Preconditions{UID: j.UID},
		})
		switch {
		case err == nil:
			c.event(cj, api.EventTypeNormal, EventSuccessfulDelete, "Deleted job %s", j.Name)
		case client.IsNotFound(err), client.IsConflict(err):
		default:
			c.event(cj, api.EventTypeWarning, EventFailedDelete, "Deleted job: %v", err)
			errs = append(errs, fmt.Errorf("cronjob: %s: delete job %s: %w", key, j.Name, err))
		}
	}
	if j := plan.Create; j != nil {
		err := c.client.Create(ctx, c.jobsInfo, cj.Namespace, j)
		if client.IsAlreadyExists(err) {
			// Created before a crash or by an earlier sync whose status
			// write was lost: ours if it is controlled by this CronJob.
			existing, ok := c.jobs.Get(cj.Namespace, j.Name)
			if ex, isJob := existing.(*api.Job); ok && isJob {
				if r := api.ControllerRef(&ex.ObjectMeta); r != nil && r.UID == cj.UID {
					j, err = ex, nil
				}
			}
		}
		if err != nil {
			c.event(cj, api.EventTypeWarning, EventFailedCreate, "Error creating job: %v", err)
			errs = append(errs, fmt.Errorf("cronjob: %s: create job: %w", key, err))
		} else {
			c.log.Info("created job", "cronjob", key, "job", j.Name, "scheduled", plan.ScheduledTime)
			c.event(cj, api.EventTypeNormal, EventSuccessfulCreate, "Created job %s", j.Name)
			found := false
			for _, r := range st.Active {
				found = found || r.UID == j.UID
			}
			if !found {
				st.Active = append(st.Active, ref(j))
			}
			st.LastScheduleTime = &api.Time{Time: plan.ScheduledTime}
		}
	}
	if !statusEqual(&cj.Status, &st) {
		upd := api.DeepCopy(cj)
		upd.Status = st
		if err := c.client.Update(ctx, c.cjInfo, cj.Namespace, upd, "status"); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cronjob: %s: update status: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

func statusEqual(a, b *api.CronJobStatus) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
