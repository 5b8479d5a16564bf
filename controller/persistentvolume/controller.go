package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// Client is the writes the binder makes; *client.Client satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the binder reads of an informer; *client.Informer
// satisfies it.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	List() []api.Object
}

var _ Cache = (*client.Informer)(nil)

// EventRecorder records Events (client/record satisfies it).
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Deps are what the binder talks to.
type Deps struct {
	Client Client
	// Claims, Volumes, Classes, Pods and Nodes are informers over every
	// object of their resource; the caller runs them.
	Claims, Volumes, Classes, Pods, Nodes Cache
	// Recorder receives the binder's Events; nil records nothing.
	Recorder EventRecorder
	// Log is the binder's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options tune the binder. The zero value is valid.
type Options struct {
	// Workers is how many keys are synced at once; default 2.
	Workers int
	// ResyncPeriod is how often every claim and volume is looked at again
	// without a change (upstream's 15 s); default 15 s.
	ResyncPeriod time.Duration
}

const (
	backoffBase = 200 * time.Millisecond
	backoffMax  = 30 * time.Second
	maxRetries  = 15
)

// Controller is the PersistentVolume binder and the local-path
// provisioner. Build it with New, run it once with Run.
type Controller struct {
	client                                Client
	claims, volumes, classes, pods, nodes Cache
	rec                                   EventRecorder
	log                                   *slog.Logger
	opts                                  Options
	pvRes, pvcRes                         *api.ResourceInfo
	queue                                 *workqueue.Queue[string]
}

// Keys of the queue: "claim:<ns>/<name>" and "volume:<name>".
const (
	claimPrefix  = "claim:"
	volumePrefix = "volume:"
)

// New builds the binder and registers its handlers on deps' informers.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.Claims == nil || deps.Volumes == nil || deps.Classes == nil || deps.Pods == nil || deps.Nodes == nil {
		return nil, errors.New("persistentvolume: Client, Claims, Volumes, Classes, Pods and Nodes are required")
	}
	if opts.Workers < 0 || opts.ResyncPeriod < 0 {
		return nil, fmt.Errorf("persistentvolume: negative option (Workers %d, ResyncPeriod %v)", opts.Workers, opts.ResyncPeriod)
	}
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	if opts.ResyncPeriod == 0 {
		opts.ResyncPeriod = 15 * time.Second
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := api.Resources()
	c := &Controller{
		client: deps.Client, claims: deps.Claims, volumes: deps.Volumes, classes: deps.Classes, pods: deps.Pods, nodes: deps.Nodes,
		rec: deps.Recorder, log: log.With("controller", "persistentvolume-binder"), opts: opts,
		pvRes: api.Lookup(res, "v1", "persistentvolumes"), pvcRes: api.Lookup(res, "v1", "persistentvolumeclaims"),
		queue: workqueue.New[string](backoffBase, backoffMax),
	}
	c.claims.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.onClaim,
		UpdateFunc: func(_, obj api.Object) { c.onClaim(obj) },
		DeleteFunc: c.onClaim,
	})
	c.volumes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.onVolume,
		UpdateFunc: func(_, obj api.Object) { c.onVolume(obj) },
		DeleteFunc: c.onVolume,
	})
	c.classes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(api.Object) { c.enqueuePendingClaims() },
		UpdateFunc: func(_, _ api.Object) { c.enqueuePendingClaims() },
	})
	c.pods.AddEventHandler(client.HandlerFuncs{
		AddFunc:    c.onPod,
		UpdateFunc: func(_, obj api.Object) { c.onPod(obj) },
		DeleteFunc: c.onPod,
	})
	return c, nil
}

func (c *Controller) onClaim(obj api.Object) {
	pvc, ok := obj.(*api.PersistentVolumeClaim)
	if !ok {
		return
	}
	c.queue.Add(claimPrefix + claimKey(pvc))
	if pvc.Spec.VolumeName != "" {
		c.queue.Add(volumePrefix + pvc.Spec.VolumeName)
	}
}

func (c *Controller) onVolume(obj api.Object) {
	pv, ok := obj.(*api.PersistentVolume)
	if !ok {
		return
	}
	c.queue.Add(volumePrefix + pv.Name)
	if r := pv.Spec.ClaimRef; r != nil {
		c.queue.Add(claimPrefix + r.Namespace + "/" + r.Name)
	}
}

// onPod queues the claims a pod uses: their selected node may now be
// known, or (the pod ended or went) their protection finalizer may go.
func (c *Controller) onPod(obj api.Object) {
	pod, ok := obj.(*api.Pod)
	if !ok {
		return
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			c.queue.Add(claimPrefix + pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName)
		}
	}
}

func (c *Controller) enqueuePendingClaims() {
	for _, obj := range c.claims.List() {
		if pvc, ok := obj.(*api.PersistentVolumeClaim); ok && pvc.Spec.VolumeName == "" {
			c.queue.Add(claimPrefix + claimKey(pvc))
		}
	}
}

func (c *Controller) enqueueAll() {
	for _, obj := range c.claims.List() {
		c.onClaim(obj)
	}
	for _, obj := range c.volumes.List() {
		c.onVolume(obj)
	}
}

// Run waits for the caches, then syncs claims and volumes until ctx ends,
// looking at all of them again every ResyncPeriod.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.claims.HasSynced, c.volumes.HasSynced, c.classes.HasSynced, c.pods.HasSynced, c.nodes.HasSynced) {
		return nil
	}
	go func() {
		t := time.NewTicker(c.opts.ResyncPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.enqueueAll()
			}
		}
	}()
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: c.opts.Workers, MaxRetries: maxRetries, Log: c.log, KeyName: "key",
	})
	return nil
}

// state reads what a sync needs from the caches. consumersOf, when set,
// is the claim whose consumers are looked up.
func (c *Controller) state(consumersOf *api.PersistentVolumeClaim) *State {
	st := &State{
		Claims:    map[string]*api.PersistentVolumeClaim{},
		Classes:   map[string]*api.StorageClass{},
		Nodes:     map[string]*api.Node{},
		Consumers: map[string]string{},
		InUse:     map[string]bool{},
	}
	for _, obj := range c.volumes.List() {
		if pv, ok := obj.(*api.PersistentVolume); ok {
			st.Volumes = append(st.Volumes, pv)
		}
	}
	for _, obj := range c.classes.List() {
		if sc, ok := obj.(*api.StorageClass); ok {
			st.Classes[sc.Name] = sc
		}
	}
	for _, obj := range c.nodes.List() {
		if n, ok := obj.(*api.Node); ok {
			st.Nodes[n.Name] = n
		}
	}
	if consumersOf != nil {
		pods := c.pods.List()
		if n := ConsumerNode(pods, consumersOf); n != "" {
			st.Consumers[claimKey(consumersOf)] = n
		}
		st.InUse[claimKey(consumersOf)] = ClaimInUse(pods, consumersOf)
	}
	return st
}

// ConsumerNode is the node of a scheduled pod that uses the claim and has
// neither ended nor is being deleted; "" when there is none.
func ConsumerNode(pods []api.Object, claim *api.PersistentVolumeClaim) string {
	for _, obj := range pods {
		pod, ok := obj.(*api.Pod)
		if !ok || pod.Namespace != claim.Namespace || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil ||
			pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim.Name {
				return pod.Spec.NodeName
			}
		}
	}
	return ""
}

// ClaimInUse reports whether a scheduled pod that has not ended
// (Succeeded or Failed) uses the claim, as upstream's pvc-protection
// controller decides (an unscheduled pod does not count: the node agent
// refuses to start a pod whose claim is being deleted).
func ClaimInUse(pods []api.Object, claim *api.PersistentVolumeClaim) bool {
	for _, obj := range pods {
		pod, ok := obj.(*api.Pod)
		if !ok || pod.Namespace != claim.Namespace || pod.Spec.NodeName == "" ||
			pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim.Name {
				return true
			}
		}
	}
	return false
}

func (c *Controller) sync(ctx context.Context, key string) error {
	switch {
	case strings.HasPrefix(key, claimPrefix):
		ns, name, _ := strings.Cut(strings.TrimPrefix(key, claimPrefix), "/")
		obj, ok := c.claims.Get(ns, name)
		if !ok {
			return nil
		}
		pvc := obj.(*api.PersistentVolumeClaim)
		p := PlanClaim(pvc, c.state(pvc))
		return c.apply(ctx, &p)
	case strings.HasPrefix(key, volumePrefix):
		obj, ok := c.volumes.Get("", strings.TrimPrefix(key, volumePrefix))
		if !ok {
			return nil
		}
		pv := obj.(*api.PersistentVolume)
		st := c.state(nil)
		if r := pv.Spec.ClaimRef; r != nil {
			if cobj, ok := c.claims.Get(r.Namespace, r.Name); ok {
				st.Claims[r.Namespace+"/"+r.Name] = cobj.(*api.PersistentVolumeClaim)
			}
		}
		p := PlanVolume(pv, st)
		return c.apply(ctx, &p)
	}
	return nil
}

// apply makes the plan's writes in order. Every update is conditional on
// the cached resourceVersion, so a write decided on a stale cache fails
// with a conflict and the key is synced again; a provisioned volume has a
// name derived from its claim's uid, so a second create is AlreadyExists.
// Those two are why the binder needs no expectations.
func (c *Controller) apply(ctx context.Context, p *Plan) error {
	for _, e := range p.Events {
		if c.rec != nil {
			c.rec.Eventf(e.Object, e.Type, e.Reason, "%s", e.Message)
		}
	}
	if p.Create != nil {
		err := c.client.Create(ctx, c.pvRes, "", p.Create)
		switch {
		case err == nil:
			c.log.Info("provisioned volume", "volume", p.Create.Name, "claim", p.Create.Spec.ClaimRef.Namespace+"/"+p.Create.Spec.ClaimRef.Name)
			if r := p.Create.Spec.ClaimRef; c.rec != nil {
				ref := &api.PersistentVolumeClaim{
					TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
					ObjectMeta: api.ObjectMeta{Namespace: r.Namespace, Name: r.Name, UID: r.UID, ResourceVersion: r.ResourceVersion},
				}
				c.rec.Eventf(ref, api.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", p.Create.Name)
			}
		case client.IsAlreadyExists(err):
		default:
			return fmt.Errorf("persistentvolume: create %s: %w", p.Create.Name, err)
		}
	}
	if p.Volume != nil && (p.VolumeSpec || p.VolumeStatus) {
		pv := p.Volume
		status := pv.Status
		if p.VolumeSpec {
			if err := c.client.Update(ctx, c.pvRes, "", pv); err != nil {
				return ignoreGone(fmt.Errorf("persistentvolume: update %s: %w", pv.Name, err))
			}
		}
		if p.VolumeStatus {
			pv.Status = status
			if err := c.client.Update(ctx, c.pvRes, "", pv, "status"); err != nil {
				return ignoreGone(fmt.Errorf("persistentvolume: update %s status: %w", pv.Name, err))
			}
		}
	}
	if p.Claim != nil && (p.ClaimSpec || p.ClaimStatus) {
		pvc := p.Claim
		status := pvc.Status
		if p.ClaimSpec {
			if err := c.client.Update(ctx, c.pvcRes, pvc.Namespace, pvc); err != nil {
				return ignoreGone(fmt.Errorf("persistentvolume: update claim %s: %w", claimKey(pvc), err))
			}
		}
		if p.ClaimStatus {
			pvc.Status = status
			if err := c.client.Update(ctx, c.pvcRes, pvc.Namespace, pvc, "status"); err != nil {
				return ignoreGone(fmt.Errorf("persistentvolume: update claim %s status: %w", claimKey(pvc), err))
			}
		}
		if p.ClaimSpec && pvc.Spec.VolumeName != "" {
			c.log.Info("bound claim", "claim", claimKey(pvc), "volume", pvc.Spec.VolumeName)
		}
	}
	if p.DeleteVolume != "" {
		err := c.client.Delete(ctx, c.pvRes, "", p.DeleteVolume, client.DeleteOptions{})
		if err != nil && !client.IsNotFound(err) {
			return fmt.Errorf("persistentvolume: delete %s: %w", p.DeleteVolume, err)
		}
		c.log.Info("deleted released volume", "volume", p.DeleteVolume)
	}
	return nil
}

// ignoreGone drops the error of a write to an object deleted meanwhile;
// its delete event syncs what is left.
func ignoreGone(err error) error {
	if client.IsNotFound(err) {
		return nil
	}
	return err
}
