package serviceaccount

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// Client is the write the controller makes; *client.Client satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the controller reads of an informer; *client.Informer
// satisfies it.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
}

var _ Cache = (*client.Informer)(nil)

// Deps are what the controller talks to.
type Deps struct {
	// Client creates ServiceAccounts.
	Client Client
	// Namespaces and ServiceAccounts are the informers of both resources
	// over all namespaces (the caller runs them).
	Namespaces      Cache
	ServiceAccounts Cache
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

// Options configure the controller. The zero value is valid.
type Options struct {
	// Workers is how many namespaces are synced at once; default 1.
	Workers int
}

// Retry back-off of a failed sync, and the failures in a row after which
// a namespace waits for its next change.
const (
	backoffBase = 200 * time.Millisecond
	backoffMax  = 30 * time.Second
	maxRetries  = 15
)

// Controller keeps the "default" ServiceAccount of every namespace. Build
// it with New, run it once with Run.
type Controller struct {
	client Client
	ns, sa Cache
	log    *slog.Logger
	opts   Options
	saRes  *api.ResourceInfo
	queue  *workqueue.Queue[string]
}

// New builds the controller and registers its handlers on deps' informers.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.Namespaces == nil || deps.ServiceAccounts == nil {
		return nil, fmt.Errorf("serviceaccount: Client, Namespaces and ServiceAccounts are required")
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("serviceaccount: Workers %d < 0", opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = 1
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		client: deps.Client, ns: deps.Namespaces, sa: deps.ServiceAccounts,
		log: log.With("controller", "serviceaccount"), opts: opts,
		saRes: api.Lookup(api.Resources(), "v1", "serviceaccounts"),
		queue: workqueue.New[string](backoffBase, backoffMax),
	}
	c.ns.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { c.queue.Add(obj.GetObjectMeta().Name) },
		UpdateFunc: func(_, obj api.Object) { c.queue.Add(obj.GetObjectMeta().Name) },
	})
	c.sa.AddEventHandler(client.HandlerFuncs{
		DeleteFunc: func(obj api.Object) {
			if m := obj.GetObjectMeta(); m.Name == api.ServiceAccountDefault {
				c.queue.Add(m.Namespace)
			}
		},
	})
	return c, nil
}

// Run waits for both caches, then syncs namespaces until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.ns.HasSynced, c.sa.HasSynced) {
		return nil
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: c.opts.Workers, MaxRetries: maxRetries, Log: c.log, KeyName: "namespace",
	})
	return nil
}

// Reconcile is the controller's decision for one namespace (nil when the
// cache has none): the ServiceAccount to create, or nil.
func Reconcile(ns *api.Namespace, hasDefault bool) *api.ServiceAccount {
	if ns == nil || hasDefault || ns.DeletionTimestamp != nil || ns.Status.Phase != api.NamespaceActive {
		return nil
	}
	return &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: api.ServiceAccountDefault, Namespace: ns.Name}}
}

func (c *Controller) sync(ctx context.Context, name string) error {
	var ns *api.Namespace
	if obj, ok := c.ns.Get("", name); ok {
		ns, _ = obj.(*api.Namespace)
	}
	_, has := c.sa.Get(name, api.ServiceAccountDefault)
	sa := Reconcile(ns, has)
	if sa == nil {
		return nil
	}
	err := c.client.Create(ctx, c.saRes, name, sa)
	switch {
	case err == nil:
		c.log.Info("created the default service account", "namespace", name)
		return nil
	case client.IsAlreadyExists(err), client.IsNotFound(err), client.IsForbidden(err):
		// A stale cache, or a namespace that is gone or terminating.
		return nil
	}
	return fmt.Errorf("serviceaccount: create %s/%s: %w", name, sa.Name, err)
}
