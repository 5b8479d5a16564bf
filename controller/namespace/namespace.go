package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
)

// Client is what the controller needs of the API; *client.Client satisfies it.
type Client interface {
	List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error
	Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions) (*client.Watcher, error)
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
}

var _ Client = (*client.Client)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client lists, watches, deletes and finalizes.
	Client Client
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options tune the controller; the zero value is usable.
type Options struct {
	// Resources is the resource table: the namespaces resource and every
	// namespaced resource whose objects are deleted with their namespace.
	// Default api.Resources().
	Resources []*api.ResourceInfo
	// Workers is how many namespaces are emptied at once. Default 2.
	Workers int
	// Custom gives the resources added while the server runs (the custom
	// resources of CustomResourceDefinitions); their namespaced ones are
	// emptied too, as read at each pass. Nil is none.
	Custom CustomResources
}

// CustomResources is the changing set of custom resources, one entry per
// resource (apiextensions.Registry).
type CustomResources interface {
	// Current returns the resources now and a channel closed at the next
	// change.
	Current() ([]*api.ResourceInfo, <-chan struct{})
}

// Tunables.
const (
	defaultBackoffBase = 200 * time.Millisecond
	defaultBackoffMax  = 15 * time.Second
	listPageSize       = 500
	finalizeAttempts   = 5
)

// errContentRemains asks for a later pass: objects are still terminating.
var errContentRemains = errors.New("namespace: content remains")

// ErrNoNamespaces is returned by Run when the resource table has no
// namespaces resource.
var ErrNoNamespaces = errors.New("namespace: resource table has no namespaces")

// Controller is the namespace controller. Create it with New and start it
// once with Run.
type Controller struct {
	client     Client
	nsInfo     *api.ResourceInfo
	namespaced []*api.ResourceInfo
	custom     CustomResources
	log        *slog.Logger
	workers    int
	queue      *workqueue.Queue[string]

	// reflectorBackoff overrides the reflector's back-off base (tests).
	reflectorBackoff time.Duration
}

// New returns a namespace controller working through deps.Client.
func New(deps Deps, opts Options) *Controller {
	logger := deps.Log
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Resources == nil {
		opts.Resources = api.Resources()
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	ctl := &Controller{
		client:  deps.Client,
		custom:  opts.Custom,
		log:     logger.With("controller", "namespace"),
		workers: opts.Workers,
		queue:   workqueue.New[string](defaultBackoffBase, defaultBackoffMax),
	}
	for _, r := range opts.Resources {
		switch {
		case r.Group == "" && r.Resource == "namespaces":
			ctl.nsInfo = r
		case r.Namespaced:
			ctl.namespaced = append(ctl.namespaced, r)
		}
	}
	return ctl
}

// handler queues namespaces that are being deleted.
type handler struct{ c *Controller }

func (h handler) Replace(_ *api.ResourceInfo, objs []reflector.Meta) {
	for _, m := range objs {
		h.Upsert(nil, m)
	}
}

func (h handler) Upsert(_ *api.ResourceInfo, m reflector.Meta) {
	if m.DeletionTimestamp != nil {
		h.c.queue.Add(m.Name)
	}
}

func (h handler) Delete(_ *api.ResourceInfo, m reflector.Meta) { h.c.queue.Forget(m.Name) }

// Run watches namespaces and, once they have been listed, runs
// Options.Workers workers until ctx ends. It returns nil after ctx ends and
// every goroutine it started has exited. Run must be called at most once.
func (c *Controller) Run(ctx context.Context) error {
	if c.nsInfo == nil {
		return ErrNoNamespaces
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()

	r := reflector.New(c.client, c.nsInfo, handler{c}, c.log)
	if c.reflectorBackoff > 0 {
		r.BackoffBase = c.reflectorBackoff
	}
	wg.Go(func() { r.Run(ctx) })
	select {
	case <-r.Synced():
	case <-ctx.Done():
		return nil
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: c.workers,
		Log:     c.log,
		KeyName: "namespace",
		RetryLevel: func(f workqueue.Failure[string]) slog.Level {
			if errors.Is(f.Err, errContentRemains) {
				return slog.LevelDebug // waiting for the content to go
			}
			return slog.LevelWarn
		},
	})
	return nil
}

// sync empties and finalizes one terminating namespace.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.getNamespace(ctx, name)
	if err != nil || ns == nil || ns.DeletionTimestamp == nil {
		return err
	}
	remaining := 0
	var errs []error
	infos := c.namespaced
	if c.custom != nil {
		cur, _ := c.custom.Current()
		for _, info := range cur {
			if info.Namespaced {
				infos = append(slices.Clip(infos), info)
			}
		}
	}
	for _, info := range infos {
		n, err := c.emptyResource(ctx, info, name)
		remaining += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if remaining > 0 {
		return fmt.Errorf("%w: %d objects in %s", errContentRemains, remaining, name)
	}
	return c.finalize(ctx, ns)
}

func (c *Controller) getNamespace(ctx context.Context, name string) (*client.Unstructured, error) {
	var ns client.Unstructured
	err := c.client.Get(ctx, c.nsInfo, "", name, &ns)
	if client.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("namespace: get %s: %w", name, err)
	}
	return &ns, nil
}

// list reads the metadata of every object of info in ns.
func (c *Controller) list(ctx context.Context, info *api.ResourceInfo, ns string) ([]reflector.Meta, error) {
	var out []reflector.Meta
	opts := client.ListOptions{Limit: listPageSize}
	for {
		var page client.RawList
		if err := c.client.List(ctx, info, ns, opts, &page); err != nil {
			return nil, fmt.Errorf("namespace: list %s in %s: %w", info.Resource, ns, err)
		}
		for _, raw := range page.Items {
			m, err := reflector.Decode(raw)
			if err != nil {
				return nil, fmt.Errorf("namespace: list %s in %s: %w", info.Resource, ns, err)
			}
			out = append(out, m)
		}
		if page.Metadata.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Metadata.Continue
	}
}

// toDelete picks the objects a pass deletes: those not already being
// deleted.
func toDelete(objs []reflector.Meta) []reflector.Meta {
	return slices.DeleteFunc(slices.Clone(objs), func(m reflector.Meta) bool { return m.DeletionTimestamp != nil })
}

// emptyResource deletes the objects of info in ns and returns how many are
// still there afterwards.
func (c *Controller) emptyResource(ctx context.Context, info *api.ResourceInfo, ns string) (int, error) {
	objs, err := c.list(ctx, info, ns)
	if err != nil {
		return 0, err
	}
	del := toDelete(objs)
	var errs []error
	for _, m := range del {
		err := c.client.Delete(ctx, info, ns, m.Name, client.DeleteOptions{
			PropagationPolicy: client.DeletePropagationBackground,
			Preconditions:     &client.Preconditions{UID: m.UID},
		})
		switch {
		case err == nil, client.IsNotFound(err), client.IsConflict(err): // deleted, gone, or replaced (next pass)
		default:
			errs = append(errs, fmt.Errorf("namespace: delete %s %s/%s: %w", info.Resource, ns, m.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return len(objs), err
	}
	if len(del) == 0 {
		return len(objs), nil
	}
	c.log.Info("deleted namespace content", "namespace", ns, "resource", info.Resource, "count", len(del))
	// Count what the deletes left behind (finalizers, grace periods).
	left, err := c.list(ctx, info, ns)
	return len(left), err
}

// finalizedSpec returns spec with its finalizers emptied and whether that
// changes anything.
func finalizedSpec(spec map[string]any) (map[string]any, bool) {
	list, _ := spec["finalizers"].([]any)
	if len(list) == 0 {
		return spec, false
	}
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		out[k] = v
	}
	out["finalizers"] = []any{}
	return out, true
}

// finalize empties spec.finalizers through the finalize subresource.
func (c *Controller) finalize(ctx context.Context, ns *client.Unstructured) error {
	name := ns.Name
	var err error
	for range finalizeAttempts {
		spec := map[string]any{}
		if _, ferr := ns.Field("spec", &spec); ferr != nil {
			return fmt.Errorf("namespace: %s: %w", name, ferr)
		}
		next, changed := finalizedSpec(spec)
		if !changed {
			return nil
		}
		if err := ns.SetField("spec", next); err != nil {
			return fmt.Errorf("namespace: %s: %w", name, err)
		}
		err = c.client.Update(ctx, c.nsInfo, "", ns, "finalize")
		switch {
		case err == nil:
			c.log.Info("finalized namespace", "namespace", name)
			return nil
		case client.IsNotFound(err):
			return nil
		case client.IsConflict(err):
			if ns, err = c.getNamespace(ctx, name); err != nil || ns == nil {
				return err
			}
		default:
			return fmt.Errorf("namespace: finalize %s: %w", name, err)
		}
	}
	return fmt.Errorf("namespace: finalize %s: %d attempts: %w", name, finalizeAttempts, err)
}
