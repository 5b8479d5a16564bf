package statefulset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/controller/statefulset"
	"github.com/skiff-dev/skiff/server/servertest"
)

const ns = "default"

var (
	setsInfo   = lookup("apps", "statefulsets")
	podsInfo   = lookup("", "pods")
	revsInfo   = lookup("apps", "controllerrevisions")
	eventsInfo = lookup("", "events")
)

func lookup(group, resource string) *api.ResourceInfo {
	for _, r := range api.Resources() {
		if r.Group == group && r.Resource == resource {
			return r
		}
	}
	panic("no resource " + resource)
}

// tlog sends slog records to the test log.
type tlog struct{ t *testing.T }

func (w tlog) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(b[:len(b)-1]))
	return len(b), nil
}

// env is a real API server, the controller under test with its own
// informers and recorder, a fake node and a history of pod events.
type env struct {
	t       *testing.T
	c       *client.Client
	node    *fakeNode
	history *history
}

// startEnv starts everything; t.Cleanup stops it and checks that every
// goroutine returned nil.
func startEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("a real API server; -short runs the tests on the fake API only")
	}
	// The test runs its own controller and plays the node itself: it
	// binds pods and reports their status, so no scheduler or node
	// lifecycle controller may act on them.
	c := servertest.Start(t, servertest.Options{
		DisabledControllers: []string{"statefulset", "scheduler", "nodelifecycle"},
	}).Client()
	log := slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	sets := client.NewInformer(c, setsInfo, client.InformerOptions{})
	pods := client.NewInformer(c, podsInfo, client.InformerOptions{})
	revs := client.NewInformer(c, revsInfo, client.InformerOptions{})
	rec := record.NewRecorder(c, "statefulset-controller", log)
	ctl := statefulset.New(statefulset.Deps{Client: c, StatefulSets: sets, Pods: pods, Revisions: revs, Recorder: rec, Log: log},
		statefulset.Options{Workers: 2, BackoffBase: 20 * time.Millisecond, BackoffMax: time.Second})

	e := &env{t: t, c: c, node: newFakeNode(c), history: &history{}}
	if err := e.history.start(ctx, c); err != nil {
		cancel()
		t.Fatalf("history: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 7)
	for name, run := range map[string]func(context.Context) error{
		"sets informer": sets.Run, "pods informer": pods.Run, "revisions informer": revs.Run, "recorder": rec.Run,
		"controller": ctl.Run,
		"node":       e.node.run, "history": e.history.run,
	} {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("goroutines did not stop within 10s of cancel")
		}
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
	return e
}

// waitFor polls cond until it holds or 30s pass.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) createSet(name string, replicas int32, mutate func(*api.StatefulSet)) *api.StatefulSet {
	e.t.Helper()
	set := &api.StatefulSet{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: api.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "nginx",
			Selector:    &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if mutate != nil {
		mutate(set)
	}
	if err := e.c.Create(context.Background(), setsInfo, ns, set); err != nil {
		e.t.Fatalf("create statefulset: %v", err)
	}
	return set
}

func (e *env) getSet(name string) *api.StatefulSet {
	e.t.Helper()
	var set api.StatefulSet
	if err := e.c.Get(context.Background(), setsInfo, ns, name, &set); err != nil {
		e.t.Fatalf("get statefulset: %v", err)
	}
	return &set
}

func (e *env) patchSet(name, patch string) {
	e.t.Helper()
	if err := e.c.Patch(context.Background(), setsInfo, ns, name, client.MergePatchType, []byte(patch), nil); err != nil {
		e.t.Fatalf("patch statefulset %s: %v", patch, err)
	}
}

func (e *env) pods() map[string]*api.Pod {
	e.t.Helper()
	var list api.PodList
	if err := e.c.List(context.Background(), podsInfo, ns, client.ListOptions{}, &list); err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	out := map[string]*api.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// readyPods reports whether exactly names exist, all Running and Ready and
// not terminating.
func (e *env) readyPods(names ...string) bool {
	pods := e.pods()
	if len(pods) != len(names) {
		return false
	}
	for _, n := range names {
		p, ok := pods[n]
		if !ok || p.DeletionTimestamp != nil || p.Status.Phase != api.PodRunning || !api.IsPodReady(p) {
			return false
		}
	}
	return true
}

func (e *env) events(reason string) []api.Event {
	e.t.Helper()
	var list api.EventList
	if err := e.c.List(context.Background(), eventsInfo, ns, client.ListOptions{FieldSelector: "reason=" + reason}, &list); err != nil {
		e.t.Fatalf("list events: %v", err)
	}
	return list.Items
}

func (e *env) hasEvent(reason, message string) bool {
	for _, ev := range e.events(reason) {
		if ev.Message == message && ev.InvolvedObject.Kind == "StatefulSet" {
			return true
		}
	}
	return false
}

// fakeNode plays the node agent: it binds new pods to itself, reports
// them Running (not Ready), then Ready after readyDelay (unless autoReady
// is off), and removes terminating pods (a grace-0 delete) after
// finalizeDelay. It polls the API every 10ms.
type fakeNode struct {
	c             *client.Client
	readyDelay    time.Duration
	finalizeDelay time.Duration
	autoReady     atomic.Bool

	mu          sync.Mutex // protects the maps and nextIP
	runningAt   map[string]time.Time
	terminating map[string]time.Time
	nextIP      int
}

func newFakeNode(c *client.Client) *fakeNode {
	n := &fakeNode{
		c: c, readyDelay: 150 * time.Millisecond, finalizeDelay: 150 * time.Millisecond,
		runningAt: map[string]time.Time{}, terminating: map[string]time.Time{},
	}
	n.autoReady.Store(true)
	return n
}

func (n *fakeNode) run(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var list api.PodList
		if err := n.c.List(ctx, podsInfo, ns, client.ListOptions{}, &list); err != nil {
			continue
		}
		for i := range list.Items {
			n.step(ctx, &list.Items[i])
		}
	}
}

func (n *fakeNode) step(ctx context.Context, p *api.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	switch {
	case p.DeletionTimestamp != nil:
		since, ok := n.terminating[p.UID]
		if !ok {
			n.terminating[p.UID] = now
			return
		}
		if now.Sub(since) >= n.finalizeDelay {
			zero := int64(0)
			_ = n.c.Delete(ctx, podsInfo, ns, p.Name, client.DeleteOptions{GracePeriodSeconds: &zero,
				Preconditions: &client.Preconditions{UID: p.UID}})
		}
	case p.Spec.NodeName == "":
		b := api.Binding{
			TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Binding"},
			ObjectMeta: api.ObjectMeta{Name: p.Name, UID: p.UID},
			Target:     api.ObjectReference{Kind: "Node", Name: "node-1"},
		}
		_ = n.c.Do(ctx, "POST", "/api/v1/namespaces/"+ns+"/pods/"+p.Name+"/binding", b, nil)
	case p.Status.Phase == api.PodPending:
		n.nextIP++
		ip := "10.244.0." + strconv.Itoa(n.nextIP%250+2)
		p.Status.Phase = api.PodRunning
		p.Status.PodIP, p.Status.PodIPs = ip, []api.PodIP{{IP: ip}}
		p.Status.Conditions = []api.PodCondition{
			{Type: api.PodScheduled, Status: api.ConditionTrue},
			{Type: api.PodReady, Status: api.ConditionFalse, LastTransitionTime: api.Now()},
		}
		if n.c.UpdateStatus(ctx, podsInfo, ns, p) == nil {
			n.runningAt[p.UID] = now
		}
	case p.Status.Phase == api.PodRunning && !api.IsPodReady(p) && n.autoReady.Load():
		at, ok := n.runningAt[p.UID]
		if !ok || now.Sub(at) < n.readyDelay {
			return
		}
		api.GetPodCondition(&p.Status, api.PodReady).Status = api.ConditionTrue
		api.GetPodCondition(&p.Status, api.PodReady).LastTransitionTime = api.Now()
		_ = n.c.UpdateStatus(ctx, podsInfo, ns, p)
	}
}

// hEvent is one pod watch event as the history keeps it.
type hEvent struct {
	typ, name, uid string
	rv             int64
	phase          string
	ready          bool
	terminating    bool
	revision       string
	at             time.Time
}

func (h hEvent) String() string {
	return fmt.Sprintf("rv=%d %s %s phase=%s ready=%v terminating=%v", h.rv, h.typ, h.name, h.phase, h.ready, h.terminating)
}

// history records every pod watch event of the namespace in the
// server's order (by resourceVersion).
type history struct {
	mu     sync.Mutex
	events []hEvent
	rv     string
	watch  *client.Watcher
	c      *client.Client
}

func (h *history) start(ctx context.Context, c *client.Client) error {
	var list api.PodList
	if err := c.List(ctx, podsInfo, ns, client.ListOptions{}, &list); err != nil {
		return err
	}
	h.rv = list.ResourceVersion
	w, err := c.Watch(ctx, podsInfo, ns, client.ListOptions{ResourceVersion: h.rv})
	if err != nil {
		return err
	}
	h.watch = w
	h.c = c
	return nil
}

func (h *history) run(ctx context.Context) error {
	for {
		for ev := range h.watch.ResultChan() {
			if err := ev.Err(); err != nil {
				return err
			}
			var p api.Pod
			if err := json.Unmarshal(ev.Object, &p); err != nil {
				return err
			}
			rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
			h.mu.Lock()
			h.events = append(h.events, hEvent{
				typ: ev.Type, name: p.Name, uid: p.UID, rv: rv, phase: p.Status.Phase,
				ready: p.Status.Phase == api.PodRunning && api.IsPodReady(&p), terminating: p.DeletionTimestamp != nil,
				revision: p.Labels[statefulset.RevisionLabel], at: time.Now(),
			})
			h.rv = p.ResourceVersion
			h.mu.Unlock()
		}
		if ctx.Err() != nil {
			return nil
		}
		w, err := h.c.Watch(ctx, podsInfo, ns, client.ListOptions{ResourceVersion: h.rv})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		h.watch = w
	}
}

// since returns the events recorded from index from on.
func (h *history) since(from int) []hEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hEvent(nil), h.events[from:]...)
}

func (h *history) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events)
}

// clientDeleteDefault is a delete with the pod's own grace period, as a
// user's `kubectl delete pod` (the node finishes it).
func clientDeleteDefault() client.DeleteOptions { return client.DeleteOptions{} }
