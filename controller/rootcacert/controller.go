package rootcacert

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// Name, annotation and key of the published ConfigMap, as upstream.
const (
	ConfigMapName         = "kube-root-ca.crt"
	Key                   = "ca.crt"
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Client is the writes the controller makes; *client.Client satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
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
	Client Client
	// Namespaces informs on every namespace; ConfigMaps on the ConfigMaps
	// named kube-root-ca.crt (a field selector; others are ignored).
	Namespaces Cache
	ConfigMaps Cache
	// RootCA is the CA certificate(s), PEM.
	RootCA []byte
	// Log is the controller's logger; nil logs nowhere.
	Log *slog.Logger
}

const (
	backoffBase = 200 * time.Millisecond
	backoffMax  = 30 * time.Second
	maxRetries  = 15
)

// Controller publishes the CA. Build it with New, run it once with Run.
type Controller struct {
	client Client
	ns, cm Cache
	ca     string
	log    *slog.Logger
	cmRes  *api.ResourceInfo
	queue  *workqueue.Queue[string]
}

// New builds the controller and registers its handlers.
func New(deps Deps) (*Controller, error) {
	if deps.Client == nil || deps.Namespaces == nil || deps.ConfigMaps == nil || len(deps.RootCA) == 0 {
		return nil, fmt.Errorf("rootcacert: Client, Namespaces, ConfigMaps and RootCA are required")
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		client: deps.Client, ns: deps.Namespaces, cm: deps.ConfigMaps, ca: string(deps.RootCA),
		log:   log.With("controller", "root-ca-cert-publisher"),
		cmRes: api.Lookup(api.Resources(), "v1", "configmaps"),
		queue: workqueue.New[string](backoffBase, backoffMax),
	}
	c.ns.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { c.queue.Add(obj.GetObjectMeta().Name) },
		UpdateFunc: func(_, obj api.Object) { c.queue.Add(obj.GetObjectMeta().Name) },
	})
	cmChanged := func(obj api.Object) {
		if m := obj.GetObjectMeta(); m.Name == ConfigMapName {
			c.queue.Add(m.Namespace)
		}
	}
	c.cm.AddEventHandler(client.HandlerFuncs{
		UpdateFunc: func(_, obj api.Object) { cmChanged(obj) },
		DeleteFunc: cmChanged,
	})
	return c, nil
}

// Run waits for both caches, then syncs namespaces until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.ns.HasSynced, c.cm.HasSynced) {
		return nil
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: 1, MaxRetries: maxRetries, Log: c.log, KeyName: "namespace",
	})
	return nil
}

// Reconcile is the decision for one namespace (nil when the cache has
// none) and its current ConfigMap (nil when there is none): the ConfigMap
// to create or to update, or nil.
func Reconcile(ns *api.Namespace, cur *api.ConfigMap, ca string) (create, update *api.ConfigMap) {
	if ns == nil || ns.DeletionTimestamp != nil || ns.Status.Phase != api.NamespaceActive {
		return nil, nil
	}
	data := map[string]string{Key: ca}
	if cur == nil {
		return &api.ConfigMap{
			ObjectMeta: api.ObjectMeta{Name: ConfigMapName, Namespace: ns.Name, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       data,
		}, nil
	}
	if maps.Equal(cur.Data, data) && len(cur.BinaryData) == 0 && cur.Annotations[DescriptionAnnotation] != "" {
		return nil, nil
	}
	cm := api.DeepCopy(cur)
	cm.Data, cm.BinaryData = data, nil
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	return nil, cm
}

func (c *Controller) sync(ctx context.Context, name string) error {
	var ns *api.Namespace
	if obj, ok := c.ns.Get("", name); ok {
		ns, _ = obj.(*api.Namespace)
	}
	var cur *api.ConfigMap
	if obj, ok := c.cm.Get(name, ConfigMapName); ok {
		cur, _ = obj.(*api.ConfigMap)
	}
	create, update := Reconcile(ns, cur, c.ca)
	switch {
	case create != nil:
		err := c.client.Create(ctx, c.cmRes, name, create)
		if err == nil || client.IsAlreadyExists(err) || client.IsNotFound(err) || client.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("rootcacert: create %s/%s: %w", name, ConfigMapName, err)
	case update != nil:
		err := c.client.Update(ctx, c.cmRes, name, update)
		if err == nil || client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("rootcacert: update %s/%s: %w", name, ConfigMapName, err)
	}
	return nil
}
