package tainteviction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// PodNodeIndex is the pods informer index this controller adds.
const PodNodeIndex = "tainteviction/spec.nodeName"

// EventRecorder records Events (client/record satisfies it).
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Client deletes pods; *client.Client satisfies it.
type Client interface {
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
}

var _ Client = (*client.Client)(nil)

// Cache is the nodes informer.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
}

// PodCache is the pods informer, which gets the node index.
type PodCache interface {
	Cache
	AddIndexer(name string, f func(api.Object) []string)
	ByIndex(name, value string) []api.Object
}

var _ PodCache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	Client   Client
	Nodes    Cache
	Pods     PodCache
	Recorder EventRecorder // nil records nothing
	Log      *slog.Logger  // nil logs nowhere
}

// Options tune the controller; zero values take the defaults.
type Options struct {
	Now     func() time.Time // default time.Now
	Workers int              // default 2
	// MaxRetries bounds the retries of a failing sync. Default 15.
	MaxRetries int
}

// Controller evicts pods from nodes with NoExecute taints. Create it with
// New and start it once with Run.
type Controller struct {
	client Client
	nodes  Cache
	pods   PodCache
	rec    EventRecorder
	log    *slog.Logger
	opts   Options
	podRes *api.ResourceInfo
	queue  *workqueue.Queue[string]

	// mu protects since: node -> pod uid -> first seen tainted.
	mu    sync.Mutex
	since map[string]map[string]time.Time
}

// New builds the controller and registers its handlers and index.
func New(deps Deps, opts Options) *Controller {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 15
	}
	logger := deps.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		client: deps.Client, nodes: deps.Nodes, pods: deps.Pods, rec: deps.Recorder, opts: opts,
		log:    logger.With("controller", "tainteviction"),
		podRes: api.Lookup(api.Resources(), "v1", "pods"),
		queue:  workqueue.New[string](50*time.Millisecond, 30*time.Second),
		since:  map[string]map[string]time.Time{},
	}
	deps.Pods.AddIndexer(PodNodeIndex, func(obj api.Object) []string {
		if p, ok := obj.(*api.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}
		}
		return nil
	})
	deps.Nodes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { c.queue.Add(obj.GetObjectMeta().Name) },
		UpdateFunc: func(_, obj api.Object) { c.queue.Add(obj.GetObjectMeta().Name) },
		DeleteFunc: func(obj api.Object) {
			c.mu.Lock()
			delete(c.since, obj.GetObjectMeta().Name)
			c.mu.Unlock()
		},
	})
	onPod := func(obj api.Object) {
		p, ok := obj.(*api.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		if o, ok := c.nodes.Get("", p.Spec.NodeName); ok && len(noExecute(o.(*api.Node).Spec.Taints)) > 0 {
			c.queue.Add(p.Spec.NodeName)
		}
	}
	deps.Pods.AddEventHandler(client.HandlerFuncs{AddFunc: onPod, UpdateFunc: func(_, obj api.Object) { onPod(obj) }})
	return c
}

// Run syncs nodes until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.nodes.HasSynced, c.pods.HasSynced) {
		return nil
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{Workers: c.opts.Workers, Log: c.log, KeyName: "node", MaxRetries: c.opts.MaxRetries})
	return nil
}

// sync evicts what Decide says for one node and requeues at its deadline.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok := c.nodes.Get("", name)
	if !ok {
		c.forget(name)
		return nil
	}
	node := obj.(*api.Node)
	if len(noExecute(node.Spec.Taints)) == 0 {
		c.forget(name)
		return nil
	}
	now := c.opts.Now()
	var pods []*api.Pod
	for _, o := range c.pods.ByIndex(PodNodeIndex, name) {
		pods = append(pods, o.(*api.Pod))
	}
	since := c.record(name, pods, now)
	plan := Decide(node.Spec.Taints, pods, since, now)
	var errs []error
	for _, pod := range plan.Evict {
		err := c.client.Delete(ctx, c.podRes, pod.Namespace, pod.Name, client.DeleteOptions{Preconditions: &client.Preconditions{UID: pod.UID}})
		switch {
		case err == nil:
			c.log.Info("evicted pod for a NoExecute taint", "node", name, "pod", pod.Namespace+"/"+pod.Name)
			if c.rec != nil {
				c.rec.Eventf(pod, api.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s", pod.Namespace, pod.Name)
			}
		case client.IsNotFound(err), client.IsConflict(err):
		default:
			errs = append(errs, fmt.Errorf("tainteviction: delete pod %s/%s: %w", pod.Namespace, pod.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !plan.Next.IsZero() {
		return workqueue.RequeueAfter(plan.Next.Sub(now))
	}
	return nil
}

// record notes now as the start of every pod of node not yet known,
// drops pods no longer there, and returns a copy of the node's starts.
func (c *Controller) record(node string, pods []*api.Pod, now time.Time) map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.since[node]
	cur := make(map[string]time.Time, len(pods))
	for _, p := range pods {
		if t, ok := old[p.UID]; ok {
			cur[p.UID] = t
		} else {
			cur[p.UID] = now
		}
	}
	c.since[node] = cur
	out := make(map[string]time.Time, len(cur))
	for k, v := range cur {
		out[k] = v
	}
	return out
}

func (c *Controller) forget(node string) {
	c.mu.Lock()
	delete(c.since, node)
	c.mu.Unlock()
}
