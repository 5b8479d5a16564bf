package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// EventRecorder records Events about objects (client/record satisfies
// it). A nil Deps.Recorder records nothing.
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Client is what the scheduler needs of the API; *client.Client satisfies
// it. Do posts the bindings; Update writes pods/status.
type Client interface {
	Do(ctx context.Context, method, path string, body, out any) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the scheduler reads of an informer; *client.Informer
// satisfies it.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the scheduler talks to.
type Deps struct {
	// Client posts bindings and writes pods/status.
	Client Client
	// Pods and Nodes are informers of every pod and node; the caller
	// runs them.
	Pods, Nodes Cache
	// Claims, Volumes and Classes are informers of every
	// PersistentVolumeClaim, PersistentVolume and StorageClass, read by
	// the volume filter (volumes.go); nil turns the filter off.
	Claims, Volumes, Classes Cache
	// Recorder receives Scheduled and FailedScheduling events; nil = none.
	Recorder EventRecorder
	// Log is the scheduler's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options tune the scheduler; zero values take the defaults.
type Options struct {
	// SchedulerName: pods whose spec.schedulerName is this (or empty) are
	// scheduled. Default api.DefaultSchedulerName.
	SchedulerName string
	// Workers is how many goroutines make the API calls (bindings,
	// status writes); one goroutine decides. Default 16.
	Workers int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// AssumeTimeout: an assumed pod whose bind succeeded but which the
	// informer has not shown bound within this long is forgotten. Default 30s.
	AssumeTimeout time.Duration
	// RetryBase and RetryMax bound the exponential back-off of both the
	// periodic retry of unschedulable pods and the retry of failed API
	// calls. Defaults 1s and 60s.
	RetryBase, RetryMax time.Duration
	// MaxRetries is how many times a failing bind or status write is
	// retried before the pod is dropped (it comes back on its next
	// change). Default 15.
	MaxRetries int
}

func (o *Options) defaults() {
	if o.SchedulerName == "" {
		o.SchedulerName = api.DefaultSchedulerName
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AssumeTimeout <= 0 {
		o.AssumeTimeout = 30 * time.Second
	}
	if o.RetryBase <= 0 {
		o.RetryBase = time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 60 * time.Second
	}
	if o.RetryMax < o.RetryBase {
		o.RetryMax = o.RetryBase
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 15
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
}

// housekeepingPeriod is how often unschedulable pods whose back-off has
// passed are retried and unconfirmed assumptions expire.
const housekeepingPeriod = 500 * time.Millisecond

// Scheduler binds pending pods to nodes. Create it with New and start it
// once with Run.
type Scheduler struct {
	client  Client
	pods    Cache
	nodes   Cache
	podInfo *api.ResourceInfo
	opts    Options
	rec     EventRecorder
	log     *slog.Logger

	cache   *cache
	volumes *volumeCaches // volumes.go; nil without the caches
	queue   *workqueue.Queue[string]
	unsched *unschedulablePods
	tasks   chan task
}

// New builds a scheduler over deps' pods and nodes informers and
// registers its handlers on them.
func New(deps Deps, opts Options) *Scheduler {
	opts.defaults()
	logger := deps.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pods, nodes := deps.Pods, deps.Nodes
	s := &Scheduler{
		client:  deps.Client,
		rec:     deps.Recorder,
		pods:    pods,
		nodes:   nodes,
		podInfo: api.Lookup(api.Resources(), "v1", "pods"),
		opts:    opts,
		log:     logger.With("controller", "scheduler"),
		cache:   newCache(),
		queue:   workqueue.NewPriority(opts.RetryBase, opts.RetryMax, func(key string) int64 { return podPriority(pods, key) }),
		unsched: newUnschedulablePods(opts.RetryBase, opts.RetryMax),
		tasks:   make(chan task, 256),
	}
	pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    s.onPodAdd,
		UpdateFunc: s.onPodUpdate,
		DeleteFunc: s.onPodDelete,
	})
	s.volumes = s.newVolumeCaches(deps)
	nodes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    s.onNodeAdd,
		UpdateFunc: func(_, n api.Object) { s.onNodeAdd(n) },
		DeleteFunc: s.onNodeDelete,
	})
	return s
}

// podPriority is the queue order of a pending pod: spec.priority (the
// Priority admission resolved it from priorityClassName), 0 when unset.
func podPriority(pods Cache, key string) int64 {
	ns, name := splitKey(key)
	if obj, ok := pods.Get(ns, name); ok {
		if p, ok := obj.(*api.Pod); ok && p.Spec.Priority != nil {
			return int64(*p.Spec.Priority)
		}
	}
	return 0
}

// ---- event handlers: they update the cache and queue keys, nothing more ----

func podKey(p *api.Pod) string { return p.Namespace + "/" + p.Name }

// responsible reports whether p is a pending pod this scheduler places.
func (s *Scheduler) responsible(p *api.Pod) bool {
	return p.Spec.NodeName == "" && p.DeletionTimestamp == nil && !podIsTerminal(p) &&
		(p.Spec.SchedulerName == "" || p.Spec.SchedulerName == s.opts.SchedulerName)
}

func (s *Scheduler) onPodAdd(obj api.Object) {
	p, ok := obj.(*api.Pod)
	if !ok {
		return
	}
	if p.Spec.NodeName != "" {
		s.unsched.remove(podKey(p))
		if s.cache.setBoundPod(p) {
			s.wakeUnschedulable()
		}
		return
	}
	if s.responsible(p) {
		s.queue.Add(podKey(p))
	}
}

func (s *Scheduler) onPodUpdate(oldObj, newObj api.Object) {
	p, ok := newObj.(*api.Pod)
	if !ok {
		return
	}
	if p.Spec.NodeName != "" {
		s.onPodAdd(p)
		return
	}
	if !s.responsible(p) {
		s.unsched.remove(podKey(p))
		return
	}
	// An unschedulable pod waits for a cluster change or its back-off; an
	// update of its status or metadata alone (such as the PodScheduled
	// condition this scheduler writes) does not change where it fits.
	if old, ok := oldObj.(*api.Pod); ok && old.Generation == p.Generation && old.UID == p.UID &&
		s.unsched.has(podKey(p)) {
		return
	}
	s.unsched.remove(podKey(p))
	s.queue.Add(podKey(p))
}

func (s *Scheduler) onPodDelete(obj api.Object) {
	p, ok := obj.(*api.Pod)
	if !ok {
		return
	}
	s.unsched.remove(podKey(p))
	if s.cache.removePod(podKey(p), p.UID) {
		s.wakeUnschedulable()
	}
}

func (s *Scheduler) onNodeAdd(obj api.Object) {
	n, ok := obj.(*api.Node)
	if !ok {
		return
	}
	if s.cache.setNode(n) {
		s.wakeUnschedulable()
	}
}

func (s *Scheduler) onNodeDelete(obj api.Object) {
	if n, ok := obj.(*api.Node); ok {
		s.cache.removeNode(n.Name)
	}
}

// wakeUnschedulable moves every unschedulable pod back to the queue: the
// cluster changed in a way that may let it fit.
func (s *Scheduler) wakeUnschedulable() {
	for _, key := range s.unsched.takeAll() {
		s.queue.Add(key)
	}
}

// ---- run loop ----

// task is work for the API workers: a bind or an unschedulable status.
type task struct {
	pod  *podInfo
	node string    // bind to this node
	fail *decision // or report this failure
	ns   string
	name string
}

// Run waits for the informers' caches, then schedules until ctx ends: one
// goroutine decides (workqueue.Run with one worker, so every decision sees
// the previous ones), Options.Workers goroutines make the API calls. It
// returns nil once ctx has ended and every goroutine it started has
// exited.
func (s *Scheduler) Run(ctx context.Context) error {
	defer s.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, s.pods.HasSynced, s.nodes.HasSynced, s.volumes.synced) {
		return nil
	}
	s.log.Info("caches synced, scheduling", "workers", s.opts.Workers)
	var wg sync.WaitGroup
	var workersWG sync.WaitGroup
	for range s.opts.Workers {
		workersWG.Go(func() { s.worker(ctx) })
	}
	wg.Go(func() { s.housekeeping(ctx) })
	workqueue.Run(ctx, s.queue, s.scheduleOne, workqueue.Options[string]{Workers: 1, Log: s.log, KeyName: "pod"})
	close(s.tasks) // the one sender has returned
	wg.Wait()
	workersWG.Wait()
	return nil
}

// housekeeping retries unschedulable pods whose back-off has passed and
// expires unconfirmed assumptions.
func (s *Scheduler) housekeeping(ctx context.Context) {
	t := time.NewTicker(housekeepingPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.opts.Now()
		for _, key := range s.unsched.takeDue(now) {
			s.queue.Add(key)
		}
		if n := s.cache.expire(now); n > 0 {
			s.log.Info("forgot assumed pods the informer never showed bound", "pods", n)
		}
	}
}

// scheduleOne decides one queued pod and hands the API call to the
// workers, which settle the key's retries (bind): it returns
// workqueue.ErrHandedOff, so workqueue.Run neither forgets nor retries
// the key, except for a pod that is gone (nil: nothing is left to retry).
func (s *Scheduler) scheduleOne(ctx context.Context, key string) error {
	ns, name := splitKey(key)
	obj, ok := s.pods.Get(ns, name)
	if !ok {
		s.unsched.remove(key)
		return nil
	}
	pod := obj.(*api.Pod)
	if !s.responsible(pod) || s.cache.placed(key, pod.UID) {
		return workqueue.ErrHandedOff
	}
	info := newPodInfo(pod)
	info.volumes = s.volumes.forPod(pod)
	gen := s.unsched.generation()
	d := s.cache.scheduleAndAssume(info)
	t := task{pod: info, ns: ns, name: name}
	if d.node != nil {
		t.node = d.node.name
	} else {
		if !s.unsched.add(key, s.opts.Now(), gen) {
			// The cluster changed while deciding: try again at once
			// (Done re-queues a key added while it is held).
			s.queue.Add(key)
		}
		t.fail = &d
	}
	select {
	case s.tasks <- t:
	case <-ctx.Done():
		if t.node != "" {
			s.cache.forget(key, info.uid)
		}
	}
	return workqueue.ErrHandedOff
}

func splitKey(key string) (ns, name string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

func (s *Scheduler) worker(ctx context.Context) {
	for t := range s.tasks {
		if ctx.Err() != nil {
			if t.node != "" {
				s.cache.forget(t.pod.key, t.pod.uid)
			}
			continue
		}
		if t.node != "" {
			s.bind(ctx, t)
		} else {
			s.reportUnschedulable(ctx, t)
		}
	}
}

// bind posts the Binding of an assumed pod and settles the assumption.
func (s *Scheduler) bind(ctx context.Context, t task) {
	key := t.pod.key
	path, err := client.ResourcePath(s.podInfo, t.ns, t.name, "binding")
	if err == nil {
		b := &api.Binding{
			TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Binding"},
			ObjectMeta: api.ObjectMeta{Name: t.name, Namespace: t.ns, UID: t.pod.uid},
			Target:     api.ObjectReference{Kind: "Node", Name: t.node},
		}
		err = s.client.Do(ctx, http.MethodPost, path, b, nil)
	}
	switch {
	case err == nil:
		s.cache.bindDone(key, t.pod.uid, s.opts.Now().Add(s.opts.AssumeTimeout))
		s.queue.Forget(key)
		s.event(t, api.EventTypeNormal, "Scheduled", "Successfully assigned %s to %s", key, t.node)
	case client.IsNotFound(err) || client.IsConflict(err):
		// Gone, being deleted, bound by someone else, or recreated with
		// another uid: the informer will tell; nothing to retry.
		s.cache.forget(key, t.pod.uid)
		s.queue.Forget(key)
		s.log.Debug("binding refused", "pod", key, "node", t.node, "err", err)
	default:
		s.cache.forget(key, t.pod.uid)
		s.retry(ctx, key, fmt.Errorf("scheduler: bind %s to %s: %w", key, t.node, err))
	}
}

// retry requeues key with back-off, up to MaxRetries.
func (s *Scheduler) retry(ctx context.Context, key string, err error) {
	if ctx.Err() != nil {
		return
	}
	if n := s.queue.NumRequeues(key); n >= s.opts.MaxRetries {
		s.queue.Forget(key)
		s.log.Error("dropping pod after too many failures", "pod", key, "retries", n, "err", err)
		return
	}
	s.log.Warn("retrying", "pod", key, "err", err)
	s.queue.AddRateLimited(key)
}

func (s *Scheduler) event(t task, eventType, reason, format string, args ...any) {
	if s.rec == nil {
		return
	}
	ref := &api.Pod{ObjectMeta: api.ObjectMeta{Name: t.name, Namespace: t.ns, UID: t.pod.uid}}
	ref.APIVersion, ref.Kind = "v1", "Pod"
	if obj, ok := s.pods.Get(t.ns, t.name); ok && obj.GetObjectMeta().UID == t.pod.uid {
		ref = obj.(*api.Pod)
	}
	s.rec.Eventf(ref, eventType, reason, format, args...)
}

// reportUnschedulable records a FailedScheduling event and sets the pod's
// PodScheduled condition to False/Unschedulable with the failure message,
// unless it already says exactly that.
func (s *Scheduler) reportUnschedulable(ctx context.Context, t task) {
	msg := t.fail.message()
	s.event(t, api.EventTypeWarning, "FailedScheduling", "%s", msg)
	obj, ok := s.pods.Get(t.ns, t.name)
	if !ok {
		return
	}
	pod := obj.(*api.Pod)
	if pod.UID != t.pod.uid || pod.Spec.NodeName != "" {
		return
	}
	cur := api.GetPodCondition(&pod.Status, api.PodScheduled)
	if cur != nil && cur.Status == api.ConditionFalse && cur.Reason == ReasonUnschedulable && cur.Message == msg {
		return
	}
	pod = api.DeepCopy(pod)
	setUnschedulable(&pod.Status, msg, s.opts.Now())
	err := s.client.Update(ctx, s.podInfo, t.ns, pod, "status")
	switch {
	case err == nil, client.IsNotFound(err):
	case client.IsConflict(err):
		// The pod changed under us; the next attempt writes the status.
		s.log.Debug("status conflict", "pod", t.pod.key)
	default:
		s.log.Warn("could not write unschedulable status", "pod", t.pod.key, "err", err)
	}
}

// ReasonUnschedulable is the PodScheduled=False reason of a pod that fits
// on no node.
const ReasonUnschedulable = "Unschedulable"

// setUnschedulable sets PodScheduled=False/Unschedulable with msg; the
// transition time moves only when the status changes.
func setUnschedulable(st *api.PodStatus, msg string, now time.Time) {
	c := api.PodCondition{Type: api.PodScheduled, Status: api.ConditionFalse, Reason: ReasonUnschedulable,
		Message: msg, LastTransitionTime: api.NewTime(now)}
	if cur := api.GetPodCondition(st, api.PodScheduled); cur != nil {
		if cur.Status == api.ConditionFalse {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		c.LastProbeTime = cur.LastProbeTime
		*cur = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}
