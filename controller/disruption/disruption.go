package disruption

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
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	UpdateStatus(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
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
	// Client reads pods' controllers and writes budget status.
	Client Client
	// PDBs and Pods are informers of all namespaces; the caller runs them.
	PDBs, Pods Cache
	// Resources is the server's resource table, to find a pod's
	// controller by apiVersion and kind; nil means api.Resources().
	Resources []*api.ResourceInfo
	// Recorder receives the controller's Events; nil records none.
	Recorder EventRecorder
	Log      *slog.Logger
}

// Event reasons, as Kubernetes' disruption controller.
const (
	EventNoPods          = "NoPods"
	EventUnmanagedPods   = "UnmanagedPods"
	EventCalculateExpect = "CalculateExpectedPodCountFailed"
)

// Options tune the controller; zero values take the defaults.
type Options struct {
	Workers                 int
	BackoffBase, BackoffMax time.Duration
	MaxRetries              int
}

// Controller is the disruption controller.
type Controller struct {
	client    Client
	pdbs      Cache
	pods      Cache
	resources []*api.ResourceInfo
	pdbInfo   *api.ResourceInfo
	recorder  EventRecorder
	log       *slog.Logger
	queue     *workqueue.Queue[string]
	workers   int
	retries   int
	now       func() time.Time
}

// New returns a disruption controller.
func New(deps Deps, opts Options) *Controller {
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 100 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 15
	}
	res := deps.Resources
	if res == nil {
		res = api.Resources()
	}
	c := &Controller{
		client: deps.Client, pdbs: deps.PDBs, pods: deps.Pods, resources: res,
		pdbInfo:  api.Lookup(res, "policy/v1", "poddisruptionbudgets"),
		recorder: deps.Recorder, log: log.With("controller", "disruption"),
		queue:   workqueue.New[string](opts.BackoffBase, opts.BackoffMax),
		workers: opts.Workers, retries: opts.MaxRetries, now: time.Now,
	}
	c.pdbs.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, o api.Object) { c.enqueue(o) },
		DeleteFunc: c.enqueue,
	})
	c.pods.AddEventHandler(client.HandlerFuncs{
		AddFunc: c.podChanged,
		UpdateFunc: func(o, n api.Object) {
			if o.GetObjectMeta().ResourceVersion == n.GetObjectMeta().ResourceVersion {
				return
			}
			c.podChanged(o)
			c.podChanged(n)
		},
		DeleteFunc: c.podChanged,
	})
	return c
}

func (c *Controller) enqueue(obj api.Object) {
	m := obj.GetObjectMeta()
	c.queue.Add(m.Namespace + "/" + m.Name)
}

// podChanged queues the budgets of pod's namespace whose selector matches
// it (an empty selector matches every pod, a null one none).
func (c *Controller) podChanged(obj api.Object) {
	m := obj.GetObjectMeta()
	for _, o := range c.pdbs.ByIndex(client.NamespaceIndex, m.Namespace) {
		if p, ok := o.(*api.PodDisruptionBudget); ok && api.SelectorMatches(p.Spec.Selector, m.Labels) {
			c.enqueue(p)
		}
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if c.pdbInfo == nil {
		return errors.New("disruption: resource table has no poddisruptionbudgets")
	}
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.pdbs.HasSynced, c.pods.HasSynced) {
		return nil
	}
	workqueue.Run(ctx, c.queue, c.syncKey, workqueue.Options[string]{
		Workers: c.workers, MaxRetries: c.retries, Log: c.log, KeyName: "poddisruptionbudget",
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
	obj, ok := c.pdbs.Get(ns, name)
	if !ok {
		return 0, nil
	}
	pdb, ok := obj.(*api.PodDisruptionBudget)
	if !ok {
		return 0, fmt.Errorf("disruption: %s: cache holds %T", key, obj)
	}
	var pods []*api.Pod
	for _, o := range c.pods.ByIndex(client.NamespaceIndex, ns) {
		if p, ok := o.(*api.Pod); ok && api.SelectorMatches(pdb.Spec.Selector, p.Labels) {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		c.event(pdb, api.EventTypeNormal, EventNoPods, "No matching pods found")
	}
	owners, err := c.owners(ctx, pods)
	if err != nil {
		return 0, err
	}
	res, cerr := Compute(Input{PDB: pdb, Pods: pods, Owners: owners, Now: c.now()})
	if cerr != nil {
		c.event(pdb, api.EventTypeWarning, EventCalculateExpect, "Failed to calculate the number of expected pods: %v", cerr)
	}
	if len(res.Unmanaged) > 0 {
		c.event(pdb, api.EventTypeWarning, EventUnmanagedPods, "Pods selected by this PodDisruptionBudget (selector: %v) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.", api.SelectorString(pdb.Spec.Selector))
	}
	if err := c.writeStatus(ctx, pdb, res.Status); err != nil {
		return 0, err
	}
	return res.Recheck, nil
}

func (c *Controller) event(pdb *api.PodDisruptionBudget, typ, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(pdb, typ, reason, format, args...)
	}
}

// owners finds, for each pod with a controller, that controller's scale:
// the controller is read by apiVersion and kind from the resource table
// (Deployment, StatefulSet, and any other kind api.ScaleOf knows); a
// controller that is itself controlled by a Deployment (a ReplicaSet)
// counts as that Deployment, as Kubernetes' finders do. A controller that
// is gone or has no scale is left out (Compute then fails safe).
func (c *Controller) owners(ctx context.Context, pods []*api.Pod) (map[string]Owner, error) {
	out := map[string]Owner{}
	byUID := map[string]*Owner{}
	for _, p := range pods {
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref == nil {
			continue
		}
		if o, ok := byUID[ref.UID]; ok {
			if o != nil {
				out[p.Name] = *o
			}
			continue
		}
		o, err := c.scaleOf(ctx, p.Namespace, ref, 0)
		if err != nil {
			return nil, err
		}
		byUID[ref.UID] = o
		if o != nil {
			out[p.Name] = *o
		}
	}
	return out, nil
}

func (c *Controller) scaleOf(ctx context.Context, ns string, ref *api.OwnerReference, depth int) (*Owner, error) {
	info := api.LookupKind(c.resources, ref.APIVersion, ref.Kind)
	if info == nil {
		return nil, nil
	}
	obj := info.New()
	if err := c.client.Get(ctx, info, ns, ref.Name, obj); err != nil {
		if client.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("disruption: get %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	if obj.GetObjectMeta().UID != ref.UID {
		return nil, nil
	}
	if up := api.ControllerRef(obj.GetObjectMeta()); up != nil && up.Kind == "Deployment" && depth == 0 {
		if o, err := c.scaleOf(ctx, ns, up, 1); err != nil || o != nil {
			return o, err
		}
	}
	s, ok := api.ScaleOf(obj)
	if !ok {
		return nil, nil
	}
	return &Owner{UID: ref.UID, Scale: s.Spec.Replicas}, nil
}

// writeStatus writes st when it differs from the cached budget's, with a
// PUT of the status guarded by the cached resourceVersion (the eviction
// subresource writes it too; a Conflict retries the sync).
func (c *Controller) writeStatus(ctx context.Context, pdb *api.PodDisruptionBudget, st api.PodDisruptionBudgetStatus) error {
	a, _ := json.Marshal(pdb.Status)
	b, _ := json.Marshal(st)
	if string(a) == string(b) {
		return nil
	}
	upd := api.DeepCopy(pdb)
	upd.Status = st
	err := c.client.UpdateStatus(ctx, c.pdbInfo, pdb.Namespace, upd)
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("disruption: %s/%s: update status: %w", pdb.Namespace, pdb.Name, err)
	}
	return nil
}
