// Package controller holds Skiff's built-in controllers, one package each
// (cronjob, deployment, endpoints, endpointslice, endpointslicemirroring, gc, job,
// namespace, nodeipam, nodelifecycle, persistentvolume, podautoscaler, replicaset,
// serviceaccount, servicelb,
// statefulset; the scheduler lives in
// scheduler/ and follows the same shape). This file is documentation only: it is the skeleton a
// new controller copies. controller/endpointslice is the model to read
// alongside it (its doc.go states the invariants, its README.md the flow
// and the measured costs).
//
// # Shape
//
//	informers ──handlers queue keys──► workqueue ──workqueue.Run──► sync(key)
//	sync(key): read the caches → Reconcile(Input) Plan (pure) → apply(Plan)
//
// The parts:
//
//   - Informer handlers only queue keys ("namespace/name"); they never call
//     the API. The queue is level-triggered: a key is a request to look
//     again, so many events of one object cost one sync.
//   - sync reads the caches, builds an Input, calls the pure Reconcile and
//     applies the Plan. Reconcile takes everything it looks at as
//     arguments (the clock too) and returns the writes; the table tests of
//     the package test it without an API.
//   - Expectations: apply records the writes the cache has not shown yet
//     (endpointslice's slice tracker, deployment's and statefulset's
//     expectations). A sync whose cache is older than the controller's own
//     writes waits for the cache instead of acting on it, so a stale cache
//     never causes a double create.
//
// # Construction: New(Deps, Options)
//
// Every controller is built by New(deps Deps, opts Options):
//
//   - Deps holds what it talks to, as interfaces declared in its own
//     package with only the methods it calls (2–6 each): a Client of the
//     writes it makes, a Cache per informer it reads (*client.Informer
//     satisfies it), and the optional Recorder (nil records nothing) and
//     Log (nil logs nowhere). *client.Client and the fake API's Client
//     both satisfy the Client interfaces.
//   - Options holds the tunables. The zero value is valid; every field
//     documents its default (Workers, MaxRetries, back-off, timeouts, the
//     clock). Invalid options are reported by New or Run, never panicked
//     on.
//
// A skeleton:
//
//	type Client interface {
//		Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
//		Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
//	}
//
//	type Cache interface {
//		AddEventHandler(h client.EventHandler)
//		HasSynced() bool
//		Get(namespace, name string) (api.Object, bool)
//	}
//
//	type Deps struct {
//		Client   Client
//		Widgets  Cache
//		Recorder EventRecorder // nil records nothing
//		Log      *slog.Logger  // nil logs nowhere
//	}
//
//	type Options struct {
//		Workers int // default 2
//	}
//
//	func New(deps Deps, opts Options) *Controller {
//		c := &Controller{..., queue: workqueue.New[string](backoffBase, backoffMax)}
//		deps.Widgets.AddEventHandler(client.HandlerFuncs{AddFunc: c.enqueue, ...})
//		return c
//	}
//
// # Run
//
// Run(ctx) waits for the caches (client.WaitForCacheSync), then hands the
// queue to workqueue.Run, which owns the worker loop for every controller:
//
//	func (c *Controller) Run(ctx context.Context) error {
//		defer c.queue.ShutDown()
//		if !client.WaitForCacheSync(ctx, c.widgets.HasSynced) {
//			return nil
//		}
//		workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
//			Workers: c.opts.Workers, MaxRetries: 15, Log: c.log, KeyName: "widget",
//			OnError: c.onSyncError, // an Event or a condition on failure
//		})
//		return nil
//	}
//
// sync returns nil when done, workqueue.RequeueAfter(d) when it wants a
// later look without a change (a deadline), or an error to be retried with
// back-off and dropped after MaxRetries (until the next change).
// workqueue.Run shuts the queue down when ctx ends and returns after the
// syncs in flight, so Run returns only when every goroutine it started
// has exited.
//
// # Tests
//
//   - Reconcile: named table cases, no API.
//   - The controller: New over client.NewInformerFor informers of
//     internal/fakeapi (a stateful in-memory API server that enforces
//     resourceVersion conflicts, finalizers, generation and generateName),
//     writing through fakeapi's Server.Client; SetIntercept injects write
//     failures. These run in well under a second and are what plain
//     `go test -short` runs.
//   - Integration tests against a real server (bbolt, loopback HTTPS) stay
//     beside them and skip under -short.
package controller
