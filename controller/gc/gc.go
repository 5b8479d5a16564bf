package gc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
)

// Client is what the collector needs of the API; *client.Client satisfies it.
type Client interface {
	List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error
	Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions) (*client.Watcher, error)
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
	Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error
}

var _ Client = (*client.Client)(nil)

// Tunables; tests in this package shorten them.
const (
	defaultBackoffBase = 50 * time.Millisecond
	defaultBackoffMax  = time.Minute
	// patchAttempts bounds the read-patch retries of one metadata edit
	// within a sync; the sync itself is then retried with back-off.
	patchAttempts = 5
	// absentCacheSize bounds the cache of uids known to be absent.
	absentCacheSize = 4096
	// listPageSize is the page size of the live dependent lists.
	listPageSize = 500
	// listAttempts bounds the restarts of a paged list whose continue
	// token expired.
	listAttempts = 3
)

// Controller is the garbage collector. Create it with New and start it once
// with Run.
type Controller struct {
	client Client
	custom CustomResources
	log    *slog.Logger

	// mu guards resources and byKind, which grow and shrink with the
	// custom resources (custom.go).
	mu        sync.Mutex
	resources []*api.ResourceInfo
	byKind    map[string]*api.ResourceInfo // group/Kind
	// removed are the group/Kinds of custom resources that were served
	// and are no longer (custom.go).
	removed map[string]bool

	graph  *graph
	queue  *workqueue.Queue[string]
	absent *uidSet
	// workers is Options.Workers.
	workers int

	// reflectorBackoff overrides the reflectors' back-off base (tests).
	reflectorBackoff time.Duration
}

// Deps are what the collector talks to.
type Deps struct {
	// Client lists, watches, gets, patches and deletes objects.
	Client Client
	// Log is the collector's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options tune the collector; the zero value is usable.
type Options struct {
	// Resources is the resource table whose objects are watched for
	// owner references. Default api.Resources().
	Resources []*api.ResourceInfo
	// Workers is how many objects are processed at once. Default 2.
	Workers int
	// Custom gives the resources added while the server runs (the custom
	// resources of CustomResourceDefinitions), watched as they come and
	// go (custom.go). Nil is none.
	Custom CustomResources
}

// New returns a collector working through deps.Client.
func New(deps Deps, opts Options) *Controller {
	logger := deps.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	resources := opts.Resources
	if resources == nil {
		resources = api.Resources()
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	ctl := &Controller{
		client:    deps.Client,
		custom:    opts.Custom,
		workers:   opts.Workers,
		resources: slices.Clone(resources),
		byKind:    map[string]*api.ResourceInfo{},
		removed:   map[string]bool{},
		log:       logger.With("controller", "gc"),
		graph:     newGraph(),
		queue:     workqueue.New[string](defaultBackoffBase, defaultBackoffMax),
		absent:    newUIDSet(absentCacheSize),
	}
	for _, r := range resources {
		ctl.byKind[r.Group+"/"+r.Kind] = r
	}
	return ctl
}

// handler feeds reflector events into the graph and the queue.
type handler struct{ c *Controller }

func (h handler) add(uids []string) {
	for _, u := range uids {
		h.c.queue.Add(u)
	}
}

func (h handler) Replace(info *api.ResourceInfo, objs []reflector.Meta) {
	h.add(h.c.graph.replace(info, objs))
}

func (h handler) Upsert(info *api.ResourceInfo, m reflector.Meta) {
	h.add(h.c.graph.upsert(info, m))
}

func (h handler) Delete(info *api.ResourceInfo, m reflector.Meta) {
	h.add(h.c.graph.remove(m.UID))
}

// Run watches every resource and, once all have been listed, runs
// Options.Workers workers until ctx ends. It returns nil after ctx ends and
// every goroutine it started has exited. Run must be called at most once.
func (c *Controller) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()

	var refls []*reflector.Reflector
	for _, info := range c.resources {
		r := reflector.New(c.client, info, handler{c}, c.log)
		if c.reflectorBackoff > 0 {
			r.BackoffBase = c.reflectorBackoff
		}
		refls = append(refls, r)
		wg.Go(func() { r.Run(ctx) })
	}
	for _, r := range refls {
		select {
		case <-r.Synced():
		case <-ctx.Done():
			return nil
		}
	}
	c.log.Info("graph synced", "objects", c.graph.size(), "resources", len(refls))
	if c.custom != nil {
		wg.Go(func() { c.followCustom(ctx) })
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{Workers: c.workers, Log: c.log, KeyName: "uid"})
	return nil
}

// metaObject decodes only apiVersion, kind and metadata of any object.
type metaObject struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

// get reads an object's metadata live; nil when it does not exist.
func (c *Controller) get(ctx context.Context, info *api.ResourceInfo, ns, name string) (*metaObject, error) {
	var obj metaObject
	err := c.client.Get(ctx, info, ns, name, &obj)
	if client.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gc: get %s %s/%s: %w", info.Resource, ns, name, err)
	}
	return &obj, nil
}

// sync brings one object in line with its owners and dependents.
func (c *Controller) sync(ctx context.Context, uid string) error {
	ref, deps, ok := c.graph.snapshot(uid)
	if !ok {
		return nil
	}
	live, err := c.get(ctx, ref.Info, ref.Namespace, ref.Name)
	if err != nil {
		return err
	}
	if live == nil || live.UID != uid {
		// Gone; the watch will say so too. Act on it now.
		c.absent.add(uid)
		for _, u := range c.graph.remove(uid) {
			c.queue.Add(u)
		}
		return nil
	}
	it := item{Ref: ref, Owners: live.OwnerReferences, Finalizers: live.Finalizers, Deleting: live.DeletionTimestamp != nil,
		Version: live.ResourceVersion}
	var owners map[string]ownerState
	if needsOwners(it) {
		owners = make(map[string]ownerState, len(it.Owners))
		for _, o := range it.Owners {
			st, err := c.ownerState(ctx, it, o)
			if err != nil {
				return err
			}
			owners[o.UID] = st
		}
	}
	p := decide(it, owners, deps)
	if p.RemoveFinalizer != "" {
		// "No dependents left" from the graph alone may be a graph that
		// has not seen them yet: confirm with a live list, which is newer
		// than the owner's deletion, and decide again on what it found.
		found, err := c.liveDependents(ctx, it.Ref)
		if err != nil {
			return err
		}
		deps = c.mergeLive(it.Ref, deps, found)
		p = decide(it, owners, deps)
	}
	if p.empty() {
		return nil
	}
	return c.apply(ctx, it, p)
}

// found is one object a live list returned.
type found struct {
	info *api.ResourceInfo
	meta reflector.Meta
}

// liveDependents lists, live, every object that names owner's uid in its
// ownerReferences: every namespaced resource in the owner's namespace, or,
// for a cluster-scoped owner, every resource in every namespace. A list
// without resourceVersion reads the store's current revision, so it holds
// every dependent created before the owner's deletion that still exists.
func (c *Controller) liveDependents(ctx context.Context, owner objectRef) ([]found, error) {
	var out []found
	for _, info := range c.resourceList() {
		ns := ""
		if owner.Info.Namespaced {
			if !info.Namespaced {
				// A cluster-scoped object cannot be owned by a namespaced
				// one; the collector never acts on such a reference.
				continue
			}
			ns = owner.Namespace
		}
		metas, err := c.listMeta(ctx, info, ns, func(m reflector.Meta) bool {
			return slices.ContainsFunc(m.OwnerReferences, func(r api.OwnerReference) bool { return r.UID == owner.UID })
		})
		if err != nil {
			return nil, fmt.Errorf("gc: confirm dependents of %s: %w", owner, err)
		}
		for _, m := range metas {
			out = append(out, found{info: info, meta: m})
		}
	}
	return out, nil
}

// listMeta lists info in ns ("" all) page by page and returns the
// metadata of the objects keep accepts; an expired continue token restarts
// the list.
func (c *Controller) listMeta(ctx context.Context, info *api.ResourceInfo, ns string, keep func(reflector.Meta) bool) ([]reflector.Meta, error) {
	for attempt := 0; ; attempt++ {
		var kept []reflector.Meta
		opts := client.ListOptions{Limit: listPageSize}
		for {
			var page client.RawList
			err := c.client.List(ctx, info, ns, opts, &page)
			if client.IsGone(err) && opts.Continue != "" && attempt < listAttempts {
				break // continue token expired: start over
			}
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", info.Resource, err)
			}
			for _, raw := range page.Items {
				m, err := reflector.Decode(raw)
				if err != nil || m.UID == "" || m.Name == "" {
					// Skipped, as the reflectors skip it: the graph never
					// holds it either.
					c.log.Warn("skipping undecodable object", "resource", info.Resource, "err", err, "name", m.Name)
					continue
				}
				if keep(m) {
					kept = append(kept, m)
				}
			}
			if page.Metadata.Continue == "" {
				return kept, nil
			}
			opts.Continue = page.Metadata.Continue
		}
	}
}

// mergeLive feeds the dependents a live list found into the graph (those
// it has not seen yet, so they can be synced) and returns the dependents to
// decide on: the graph's, with the live state taking precedence, plus the
// ones only the list knew. A graph dependent the list did not return no
// longer refers to the owner or is gone; keeping it only makes the owner
// wait for the watch to say so.
func (c *Controller) mergeLive(owner objectRef, deps []dependent, live []found) []dependent {
	byUID := make(map[string]int, len(deps))
	for i, d := range deps {
		byUID[d.Ref.UID] = i
	}
	var unseen []string
	for _, f := range live {
		learned, sync := c.graph.learn(f.info, f.meta)
		if learned {
			unseen = append(unseen, f.info.Resource+"/"+f.meta.Namespace+"/"+f.meta.Name)
		}
		for _, u := range sync {
			c.queue.Add(u)
		}
		d := dependentOf(owner.UID, newNode(f.info, f.meta))
		if i, ok := byUID[d.Ref.UID]; ok {
			deps[i] = d
			continue
		}
		byUID[d.Ref.UID] = len(deps)
		deps = append(deps, d)
	}
	if len(unseen) > 0 {
		c.log.Info("found dependents the graph had not seen yet", "owner", owner.String(), "dependents", unseen)
	}
	sortDependents(deps)
	return deps
}

// resolve finds the resource of an owner reference's apiVersion and kind.
func (c *Controller) resolve(ref api.OwnerReference) *api.ResourceInfo {
	group := ""
	if g, _, ok := strings.Cut(ref.APIVersion, "/"); ok {
		group = g
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byKind[group+"/"+ref.Kind]
}

// ownerState looks an owner up live.
func (c *Controller) ownerState(ctx context.Context, it item, ref api.OwnerReference) (ownerState, error) {
	if c.absent.has(ref.UID) {
		return ownerAbsent, nil
	}
	info := c.resolve(ref)
	if info == nil && c.removedKind(ref) {
		// Its custom resource was removed with every object of it
		// (custom.go): the owner cannot exist.
		c.absent.add(ref.UID)
		return ownerAbsent, nil
	}
	if info == nil {
		c.log.Warn("owner kind not served; keeping the dependent", "dependent", it.Ref.String(), "ownerAPIVersion", ref.APIVersion, "ownerKind", ref.Kind)
		return ownerSolid, nil
	}
	ns := ""
	if info.Namespaced {
		if !it.Ref.Info.Namespaced {
			c.log.Warn("cluster-scoped object names a namespaced owner; keeping it", "dependent", it.Ref.String(), "ownerKind", ref.Kind)
			return ownerSolid, nil
		}
		ns = it.Ref.Namespace
	}
	owner, err := c.get(ctx, info, ns, ref.Name)
	if err != nil {
		return ownerSolid, err
	}
	if owner == nil || owner.UID != ref.UID {
		c.absent.add(ref.UID)
		return ownerAbsent, nil
	}
	if owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, FinalizerForeground) {
		return ownerWaiting, nil
	}
	return ownerSolid, nil
}

// apply carries out a plan; it stops at the first failure so that, for
// example, an orphan finalizer is never removed before every dependent has
// been orphaned.
func (c *Controller) apply(ctx context.Context, it item, p plan) error {
	for _, d := range p.Orphan {
		err := c.editMeta(ctx, d, func(m *api.ObjectMeta) []patchOp {
			return removeOwnerOps(m, []string{it.Ref.UID})
		})
		if err != nil {
			return fmt.Errorf("gc: orphan %s from %s: %w", d, it.Ref, err)
		}
		c.log.Info("orphaned dependent", "dependent", d.String(), "owner", it.Ref.String())
	}
	if p.RemoveFinalizer != "" {
		err := c.editMeta(ctx, it.Ref, func(m *api.ObjectMeta) []patchOp {
			return removeFinalizerOps(m, p.RemoveFinalizer)
		})
		if err != nil {
			return fmt.Errorf("gc: remove finalizer %s from %s: %w", p.RemoveFinalizer, it.Ref, err)
		}
		c.log.Info("removed finalizer", "object", it.Ref.String(), "finalizer", p.RemoveFinalizer)
	}
	for _, u := range p.Enqueue {
		c.queue.Add(u)
	}
	if len(p.RemoveOwners) > 0 {
		err := c.editMeta(ctx, it.Ref, func(m *api.ObjectMeta) []patchOp {
			return removeOwnerOps(m, p.RemoveOwners)
		})
		if err != nil {
			return fmt.Errorf("gc: remove owner references from %s: %w", it.Ref, err)
		}
		c.log.Info("removed owner references", "object", it.Ref.String(), "owners", p.RemoveOwners)
	}
	if p.UnblockOwners {
		if err := c.editMeta(ctx, it.Ref, unblockOps); err != nil {
			return fmt.Errorf("gc: unblock owner references of %s: %w", it.Ref, err)
		}
	}
	if p.Delete != "" {
		// Only the version decided on is deleted: the object may have
		// changed since it was read (an owner being deleted with Orphan
		// removes its reference meanwhile), and then it is decided again.
		err := c.client.Delete(ctx, it.Ref.Info, it.Ref.Namespace, it.Ref.Name, client.DeleteOptions{
			PropagationPolicy: p.Delete,
			Preconditions:     &client.Preconditions{UID: it.Ref.UID, ResourceVersion: it.Version},
		})
		switch {
		case client.IsNotFound(err): // gone
		case client.IsConflict(err): // changed or replaced: decide again
			c.queue.Add(it.Ref.UID)
		case err != nil:
			return fmt.Errorf("gc: delete %s: %w", it.Ref, err)
		default:
			c.log.Info("deleted", "object", it.Ref.String(), "propagation", p.Delete)
		}
	}
	return nil
}

// patchOp is one JSON patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// listOp replaces the list at path, or removes it when it becomes empty.
func listOp[T any](path string, list []T) patchOp {
	if len(list) == 0 {
		return patchOp{Op: "remove", Path: path}
	}
	return patchOp{Op: "replace", Path: path, Value: list}
}

func removeFinalizerOps(m *api.ObjectMeta, f string) []patchOp {
	if !slices.Contains(m.Finalizers, f) {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(m.Finalizers), func(x string) bool { return x == f })
	return []patchOp{listOp("/metadata/finalizers", rest)}
}

func removeOwnerOps(m *api.ObjectMeta, uids []string) []patchOp {
	rest := slices.DeleteFunc(slices.Clone(m.OwnerReferences), func(r api.OwnerReference) bool {
		return slices.Contains(uids, r.UID)
	})
	if len(rest) == len(m.OwnerReferences) {
		return nil
	}
	return []patchOp{listOp("/metadata/ownerReferences", rest)}
}

func unblockOps(m *api.ObjectMeta) []patchOp {
	refs := slices.Clone(m.OwnerReferences)
	changed := false
	f := false
	for i := range refs {
		if blocks(refs[i]) {
			refs[i].BlockOwnerDeletion = &f
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return []patchOp{listOp("/metadata/ownerReferences", refs)}
}

// editMeta reads ref live and applies the operations ops computes from its
// metadata, as a JSON patch guarded by tests of uid and resourceVersion.
// A missing or replaced object, or nothing to change, ends it successfully;
// a failed test or a conflict is retried on a fresh read.
func (c *Controller) editMeta(ctx context.Context, ref objectRef, ops func(*api.ObjectMeta) []patchOp) error {
	var err error
	for range patchAttempts {
		var live *metaObject
		live, err = c.get(ctx, ref.Info, ref.Namespace, ref.Name)
		if err != nil {
			return err
		}
		if live == nil || live.UID != ref.UID {
			return nil
		}
		edit := ops(&live.ObjectMeta)
		if len(edit) == 0 {
			return nil
		}
		body := append([]patchOp{
			{Op: "test", Path: "/metadata/uid", Value: live.UID},
			{Op: "test", Path: "/metadata/resourceVersion", Value: live.ResourceVersion},
		}, edit...)
		data, merr := json.Marshal(body)
		if merr != nil {
			return fmt.Errorf("gc: encode patch: %w", merr)
		}
		err = c.client.Patch(ctx, ref.Info, ref.Namespace, ref.Name, client.JSONPatchType, data, nil)
		switch {
		case err == nil, client.IsNotFound(err):
			return nil
		case client.IsConflict(err), client.IsInvalid(err):
			continue // changed under us: read again
		default:
			return fmt.Errorf("gc: patch %s: %w", ref, err)
		}
	}
	return fmt.Errorf("gc: patch %s: %d attempts: %w", ref, patchAttempts, err)
}

// uidSet is a bounded set of uids known to be absent; uids are never
// reused, so an entry never goes stale. When full it starts over.
type uidSet struct {
	mu   sync.Mutex
	max  int
	uids map[string]struct{}
}

func newUIDSet(max int) *uidSet { return &uidSet{max: max, uids: map[string]struct{}{}} }

func (s *uidSet) add(uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.uids) >= s.max {
		s.uids = map[string]struct{}{}
	}
	s.uids[uid] = struct{}{}
}

func (s *uidSet) has(uid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.uids[uid]
	return ok
}
