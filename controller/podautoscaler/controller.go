package podautoscaler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/labels"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// ControllerName is the controller's name for --disable-controller.
const ControllerName = "horizontalpodautoscaling"

// DefaultSyncPeriod is how often each autoscaler is looked at.
const DefaultSyncPeriod = 15 * time.Second

// Client is what the controller calls: the raw /scale reads and writes
// and the autoscaler's status. *client.Client satisfies it.
type Client interface {
	Do(ctx context.Context, method, path string, body, out any) error
	UpdateStatus(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
}

var _ Client = (*client.Client)(nil)

// Cache is what the controller reads of an informer.
type Cache interface {
	AddEventHandler(h client.EventHandler)
	HasSynced() bool
	Get(namespace, name string) (api.Object, bool)
	ByIndex(name, value string) []api.Object
}

var _ Cache = (*client.Informer)(nil)

// Metrics reads the resource metrics of a namespace's pods that a label
// selector selects, by pod name.
type Metrics interface {
	PodUsage(ctx context.Context, namespace, selector string) (map[string]PodUsage, error)
}

// Recorder records Events; *record.Recorder satisfies it.
type Recorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Deps are what the controller talks to.
type Deps struct {
	Client Client
	// HPAs and Pods are informers over every namespace.
	HPAs, Pods Cache
	// Metrics reads pod usage; nil reads the resource metrics API through
	// Client (APIMetrics).
	Metrics  Metrics
	Recorder Recorder
	Log      *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Options configure the controller; the zero value is valid.
type Options struct {
	// SyncPeriod between two looks at one autoscaler; default 15 s.
	SyncPeriod time.Duration
	// Workers syncing at once; default 2.
	Workers int
}

// Controller scales the targets of HorizontalPodAutoscalers. Build it
// with New, run it once with Run.
type Controller struct {
	client  Client
	hpas    Cache
	pods    Cache
	metrics Metrics
	rec     Recorder
	log     *slog.Logger
	now     func() time.Time
	opts    Options
	info    *api.ResourceInfo
	queue   *workqueue.Queue[string]

	mu      sync.Mutex
	history map[string]History
}

// New builds the controller and registers its handlers.
func New(deps Deps, opts Options) (*Controller, error) {
	if deps.Client == nil || deps.HPAs == nil || deps.Pods == nil {
		return nil, fmt.Errorf("podautoscaler: Client, HPAs and Pods are required")
	}
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = DefaultSyncPeriod
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	c := &Controller{
		client: deps.Client, hpas: deps.HPAs, pods: deps.Pods, metrics: deps.Metrics, rec: deps.Recorder,
		log: deps.Log, now: deps.Now, opts: opts,
		info:    api.Lookup(api.Resources(), "autoscaling/v2", "horizontalpodautoscalers"),
		queue:   workqueue.New[string](50*time.Millisecond, 30*time.Second),
		history: map[string]History{},
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("controller", ControllerName)
	if c.now == nil {
		c.now = time.Now
	}
	if c.metrics == nil {
		c.metrics = APIMetrics{Client: deps.Client}
	}
	enqueue := func(obj api.Object) { c.queue.Add(obj.GetObjectMeta().Namespace + "/" + obj.GetObjectMeta().Name) }
	c.hpas.AddEventHandler(client.HandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, obj api.Object) {
			// Its own status writes do not resync an autoscaler early.
			if old.GetObjectMeta().Generation != obj.GetObjectMeta().Generation {
				enqueue(obj)
			}
		},
		DeleteFunc: func(obj api.Object) {
			c.mu.Lock()
			delete(c.history, obj.GetObjectMeta().Namespace+"/"+obj.GetObjectMeta().Name)
			c.mu.Unlock()
		},
	})
	return c, nil
}

// Run waits for the caches and syncs autoscalers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !client.WaitForCacheSync(ctx, c.hpas.HasSynced, c.pods.HasSynced) {
		return nil
	}
	workqueue.Run(ctx, c.queue, c.sync, workqueue.Options[string]{
		Workers: c.opts.Workers, Log: c.log, KeyName: "hpa",
	})
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.hpas.Get(ns, name)
	if !ok {
		return nil
	}
	h, ok := obj.(*api.HorizontalPodAutoscaler)
	if !ok {
		return fmt.Errorf("podautoscaler: %s: unexpected type %T in the cache", key, obj)
	}
	h = api.DeepCopy(h)
	now := c.now()
	scalePath, scale, err := c.getScale(ctx, h)
	if err != nil {
		c.event(h, "Warning", "FailedGetScale", err.Error())
		st := h.Status
		st.Conditions = mergeConditions(st.Conditions, []condition{{api.HPAAbleToScale, api.ConditionFalse, "FailedGetScale",
			"the HPA controller was unable to get the target's current scale: " + err.Error()}}, now)
		if werr := c.writeStatus(ctx, h, st); werr != nil {
			return werr
		}
		return workqueue.RequeueAfter(c.opts.SyncPeriod)
	}
	in := Input{HPA: h, Current: scale.Spec.Replicas, Now: now}
	sel, err := labels.Parse(scale.Status.Selector)
	if err != nil || scale.Status.Selector == "" {
		in.UsageErr = fmt.Errorf("the target's scale has no valid selector %q", scale.Status.Selector)
	} else {
		for _, o := range c.pods.ByIndex(client.NamespaceIndex, ns) {
			if p, ok := o.(*api.Pod); ok && sel.Matches(p.Labels) {
				in.Pods = append(in.Pods, p)
			}
		}
		in.Usage, in.UsageErr = c.metrics.PodUsage(ctx, ns, scale.Status.Selector)
	}
	c.mu.Lock()
	in.History = c.history[key]
	c.mu.Unlock()

	plan := Reconcile(in)
	for _, e := range plan.Events {
		c.event(h, e.Type, e.Reason, e.Message)
	}
	st := plan.Status
	hist := plan.History
	if plan.Rescale {
		if err := c.putScale(ctx, h, scalePath, scale, plan.Desired); err != nil {
			c.event(h, "Warning", "FailedRescale", fmt.Sprintf("New size: %d; reason: %s; error: %v", plan.Desired, plan.Reason, err))
			st.Conditions = mergeConditions(st.Conditions, []condition{{api.HPAAbleToScale, api.ConditionFalse, "FailedUpdateScale",
				"the HPA controller was unable to update the target scale: " + err.Error()}}, now)
			st.DesiredReplicas = in.Current
		} else {
			c.event(h, "Normal", "SuccessfulRescale", fmt.Sprintf("New size: %d; reason: %s", plan.Desired, plan.Reason))
			st.Conditions = mergeConditions(st.Conditions, []condition{{api.HPAAbleToScale, api.ConditionTrue, "SucceededRescale",
				fmt.Sprintf("the HPA controller was able to update the target scale to %d", plan.Desired)}}, now)
			t := api.NewTime(now)
			st.LastScaleTime = &t
			hist = recordRescale(hist, h.Spec.Behavior, in.Current, plan.Desired, now)
			c.log.Info("rescaled", "hpa", key, "from", in.Current, "to", plan.Desired, "reason", plan.Reason)
		}
	}
	c.mu.Lock()
	c.history[key] = hist
	c.mu.Unlock()
	if err := c.writeStatus(ctx, h, st); err != nil {
		return err
	}
	return workqueue.RequeueAfter(c.opts.SyncPeriod)
}

// getScale resolves the scale target to a resource with a scale
// subresource and reads its /scale.
func (c *Controller) getScale(ctx context.Context, h *api.HorizontalPodAutoscaler) (string, *api.Scale, error) {
	ref := h.Spec.ScaleTargetRef
	path, err := c.scalePath(ctx, h.Namespace, ref)
	if err != nil {
		return "", nil, err
	}
	var s api.Scale
	if err := c.client.Do(ctx, "GET", path, nil, &s); err != nil {
		return "", nil, err
	}
	return path, &s, nil
}

// scalePath is the /scale path of ref: a built-in kind from the resource
// table, else a kind the server's discovery lists for ref.apiVersion (a
// custom resource whose definition has the scale subresource), as
// upstream resolves it through its RESTMapper.
func (c *Controller) scalePath(ctx context.Context, ns string, ref api.CrossVersionObjectReference) (string, error) {
	for _, r := range api.Resources() {
		if r.Kind != ref.Kind || (ref.APIVersion != "" && r.GroupVersion() != ref.APIVersion) {
			continue
		}
		if !slices.Contains(r.Subresources, "scale") {
			return "", fmt.Errorf("%s %q has no scale subresource", r.Resource, ref.Name)
		}
		return client.ResourcePath(r, ns, ref.Name, "scale")
	}
	noMatch := fmt.Errorf("no matches for kind %q in version %q", ref.Kind, ref.APIVersion)
	if ref.APIVersion == "" || !strings.Contains(ref.APIVersion, "/") {
		return "", noMatch // the core group is all built in
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			Namespaced bool   `json:"namespaced"`
		} `json:"resources"`
	}
	if err := c.client.Do(ctx, "GET", "/apis/"+ref.APIVersion, nil, &list); err != nil {
		if client.IsNotFound(err) {
			return "", noMatch
		}
		return "", fmt.Errorf("discovery of %s: %w", ref.APIVersion, err)
	}
	names := map[string]bool{}
	for _, r := range list.Resources {
		names[r.Name] = true
	}
	for _, r := range list.Resources {
		if r.Kind != ref.Kind || strings.Contains(r.Name, "/") {
			continue
		}
		if !names[r.Name+"/scale"] {
			return "", fmt.Errorf("%s %q has no scale subresource", r.Name, ref.Name)
		}
		p := "/apis/" + ref.APIVersion
		if r.Namespaced {
			p += "/namespaces/" + url.PathEscape(ns)
		}
		return p + "/" + r.Name + "/" + url.PathEscape(ref.Name) + "/scale", nil
	}
	return "", noMatch
}

// putScale writes replicas to the target's /scale; a conflict (the
// target's controller wrote its status meanwhile) is retried on a fresh
// read of the scale, a few times.
func (c *Controller) putScale(ctx context.Context, h *api.HorizontalPodAutoscaler, path string, scale *api.Scale, replicas int32) error {
	var err error
	for range 5 {
		scale.Spec.Replicas = replicas
		if err = c.client.Do(ctx, "PUT", path, scale, nil); err == nil || !client.IsConflict(err) {
			return err
		}
		if _, scale, err = c.getScale(ctx, h); err != nil {
			return err
		}
	}
	return err
}

// writeStatus writes st unless it is what the autoscaler already shows.
func (c *Controller) writeStatus(ctx context.Context, h *api.HorizontalPodAutoscaler, st api.HorizontalPodAutoscalerStatus) error {
	if reflect.DeepEqual(h.Status, st) {
		return nil
	}
	h.Status = st
	if err := c.client.UpdateStatus(ctx, c.info, h.Namespace, h); err != nil {
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("podautoscaler: status of %s/%s: %w", h.Namespace, h.Name, err)
	}
	return nil
}

func (c *Controller) event(h *api.HorizontalPodAutoscaler, typ, reason, msg string) {
	if c.rec != nil {
		c.rec.Eventf(h, typ, reason, "%s", msg)
	}
}

// APIMetrics reads pod usage from the resource metrics API
// (GET /apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods), as
// metrics-server serves it.
type APIMetrics struct {
	Client interface {
		Do(ctx context.Context, method, path string, body, out any) error
	}
}

// podMetricsList is metrics.k8s.io/v1beta1's PodMetricsList.
type podMetricsList struct {
	Items []struct {
		Metadata   api.ObjectMeta `json:"metadata"`
		Timestamp  api.Time       `json:"timestamp"`
		Window     string         `json:"window"`
		Containers []struct {
			Name  string           `json:"name"`
			Usage api.ResourceList `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

// PodUsage implements Metrics.
func (m APIMetrics) PodUsage(ctx context.Context, ns, selector string) (map[string]PodUsage, error) {
	path := "/apis/metrics.k8s.io/v1beta1/namespaces/" + url.PathEscape(ns) + "/pods?labelSelector=" + url.QueryEscape(selector)
	var raw []byte
	if err := m.Client.Do(ctx, "GET", path, nil, &raw); err != nil {
		if client.IsNotFound(err) {
			return nil, fmt.Errorf("unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)")
		}
		return nil, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	var l podMetricsList
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("unable to decode the resource metrics API's answer: %w", err)
	}
	out := make(map[string]PodUsage, len(l.Items))
	for _, it := range l.Items {
		w, _ := time.ParseDuration(it.Window)
		u := PodUsage{Timestamp: it.Timestamp.Time, Window: w, Containers: map[string]map[string]int64{}}
		for _, ct := range it.Containers {
			m := map[string]int64{}
			for res, q := range ct.Usage {
				if v, ok := q.MilliValue(); ok {
					m[res] = v
				}
			}
			u.Containers[ct.Name] = m
		}
		out[it.Metadata.Name] = u
	}
	return out, nil
}
