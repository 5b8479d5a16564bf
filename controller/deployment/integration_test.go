package deployment_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
	"github.com/skiff-dev/skiff/controller/deployment"
	"github.com/skiff-dev/skiff/server/servertest"
)

const ns = "default"

// env is a real API server (bbolt, HTTPS on loopback) with the deployment
// controller under test and a simulated node.
type env struct {
	t      testing.TB
	ctx    context.Context
	c      *client.Client
	dInfo  *api.ResourceInfo
	pInfo  *api.ResourceInfo
	rsInfo *api.ResourceInfo
	rec    *recorder
	node   *nodeSim
	cancel context.CancelFunc
	wg     *sync.WaitGroup
}

func start(t testing.TB) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("a real API server; -short runs the tests on the fake API only")
	}
	// The test binds pods itself, as node and scheduler; the server's
	// ReplicaSet controller makes the pods.
	c := servertest.Start(t, servertest.Options{DisabledControllers: []string{"deployment", "scheduler"}}).Client()
	return startOn(t, c, c, deployment.Options{Workers: 2})
}

// startOn runs the controller under test against the server of c, its
// writes going through ctlClient.
func startOn(t testing.TB, c *client.Client, ctlClient deployment.Client, opts deployment.Options) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	res := api.Resources()
	e := &env{t: t, ctx: ctx, c: c, dInfo: api.Lookup(res, "apps/v1", "deployments"), pInfo: api.Lookup(res, "v1", "pods"),
		rsInfo: api.Lookup(res, "apps/v1", "replicasets"), rec: &recorder{}, cancel: cancel, wg: &sync.WaitGroup{}}

	log := slog.New(slog.DiscardHandler)
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	deploys := client.NewInformer(c, e.dInfo, client.InformerOptions{})
	pods := client.NewInformer(c, e.pInfo, client.InformerOptions{})
	rss := client.NewInformer(c, e.rsInfo, client.InformerOptions{})
	ctl := deployment.New(deployment.Deps{Client: ctlClient, Deployments: deploys, ReplicaSets: rss, Pods: pods, Recorder: e.rec, Log: log},
		opts)
	e.node = newNodeSim(c, e.pInfo)
	e.wg.Go(func() { deploys.Run(ctx) })
	e.wg.Go(func() { pods.Run(ctx) })
	e.wg.Go(func() { rss.Run(ctx) })
	e.wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	e.wg.Go(func() { e.node.run(ctx) })
	t.Cleanup(func() {
		cancel()
		e.wg.Wait()
	})
	return e
}

// recorder collects Events as "Type Reason: message".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s: %s", eventType, reason, fmt.Sprintf(format, args...)))
}

func (r *recorder) has(substr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

// nodeSim acts as the node agent and scheduler would: it binds pending
// pods to "node-1", reports them Running and Ready with an IP (when its
// policy allows, after the policy's delay), and finishes the deletion of
// terminating pods (grace period 0).
type nodeSim struct {
	c     *client.Client
	info  *api.ResourceInfo
	pods  *client.Informer
	queue *workqueue.Queue[string]

	mu        sync.Mutex
	policy    func(p *api.Pod) (delay time.Duration, ready bool)
	boundSeen map[string]time.Time
	ips       int
	// fakeReadyTimes: Ready lastTransitionTime is an hour ago plus one
	// second per pod readied, so readiness order is visible at second
	// precision.
	fakeReadyTimes bool
	readied        int
}

func newNodeSim(c *client.Client, info *api.ResourceInfo) *nodeSim {
	n := &nodeSim{c: c, info: info, queue: workqueue.New[string](20*time.Millisecond, time.Second),
		boundSeen: map[string]time.Time{},
		policy:    func(*api.Pod) (time.Duration, bool) { return 0, true }}
	n.pods = client.NewInformer(c, info, client.InformerOptions{Namespace: ns})
	enqueue := func(obj api.Object) { n.queue.Add(obj.GetObjectMeta().Name) }
	n.pods.AddEventHandler(client.HandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o api.Object) { enqueue(o) }})
	return n
}

// setPolicy changes when pods become ready and re-examines every pod.
func (n *nodeSim) setPolicy(f func(p *api.Pod) (time.Duration, bool)) {
	n.mu.Lock()
	n.policy = f
	n.mu.Unlock()
	for _, o := range n.pods.List() {
		n.queue.Add(o.GetObjectMeta().Name)
	}
}

func (n *nodeSim) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { n.pods.Run(ctx) })
	for range 4 {
		wg.Go(func() {
			for {
				name, ok := n.queue.Get()
				if !ok {
					return
				}
				err := n.sync(ctx, name)
				if err != nil && ctx.Err() == nil && !client.IsConflict(err) && !client.IsNotFound(err) {
					fmt.Fprintf(os.Stderr, "node sim: %s: %v\n", name, err)
				}
				if ctx.Err() == nil && (err != nil || n.needsRetry(name)) {
					n.queue.AddRateLimited(name)
				} else {
					n.queue.Forget(name)
				}
				n.queue.Done(name)
			}
		})
	}
	<-ctx.Done()
	n.queue.ShutDown()
	wg.Wait()
}

// needsRetry: the pod is still in the cache and not in its final state.
func (n *nodeSim) needsRetry(name string) bool {
	obj, ok := n.pods.Get(ns, name)
	if !ok {
		return false
	}
	p := obj.(*api.Pod)
	return p.DeletionTimestamp != nil || p.Spec.NodeName == ""
}

func (n *nodeSim) sync(ctx context.Context, name string) error {
	obj, ok := n.pods.Get(ns, name)
	if !ok {
		return nil
	}
	p := obj.(*api.Pod)
	if p.DeletionTimestamp != nil {
		zero := int64(0)
		return n.c.Delete(ctx, n.info, ns, name, client.DeleteOptions{GracePeriodSeconds: &zero,
			Preconditions: &client.Preconditions{UID: p.UID}})
	}
	if p.Spec.NodeName == "" {
		path, err := client.ResourcePath(n.info, ns, name, "binding")
		if err != nil {
			return err
		}
		b := api.Binding{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Binding"},
			ObjectMeta: api.ObjectMeta{Name: name, UID: p.UID},
			Target:     api.ObjectReference{APIVersion: "v1", Kind: "Node", Name: "node-1"}}
		return n.c.Do(ctx, "POST", path, b, nil)
	}
	if api.IsPodReady(p) {
		return nil
	}
	n.mu.Lock()
	delay, ready := n.policy(p)
	first, seen := n.boundSeen[p.UID]
	if !seen {
		first = time.Now()
		n.boundSeen[p.UID] = first
	}
	n.mu.Unlock()
	if !ready {
		return nil
	}
	if wait := time.Until(first.Add(delay)); wait > 0 {
		n.queue.AddAfter(name, wait)
		return nil
	}
	n.mu.Lock()
	n.ips++
	ip := fmt.Sprintf("10.244.%d.%d", n.ips/250, n.ips%250+2)
	now := api.Now()
	if n.fakeReadyTimes {
		n.readied++
		now = api.NewTime(time.Now().Add(-time.Hour).Add(time.Duration(n.readied) * time.Second))
	}
	n.mu.Unlock()
	q := api.DeepCopy(p)
	q.Status.Phase = api.PodRunning
	q.Status.PodIP, q.Status.PodIPs = ip, []api.PodIP{{IP: ip}}
	q.Status.HostIP = "192.168.0.10"
	q.Status.StartTime = &now
	q.Status.Conditions = []api.PodCondition{
		{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: now},
		{Type: api.PodInitialized, Status: api.ConditionTrue, LastTransitionTime: now},
		{Type: api.ContainersReady, Status: api.ConditionTrue, LastTransitionTime: now},
		{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: now},
	}
	return n.c.UpdateStatus(ctx, n.info, ns, q)
}

// ---- helpers ----

func newDeployment(name string, replicas int32, image string) *api.Deployment {
	labels := map[string]string{"app": name}
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: api.DeploymentSpec{
			Replicas: &replicas,
			Selector: &api.LabelSelector{MatchLabels: labels},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: labels},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

func (e *env) create(d *api.Deployment) *api.Deployment {
	e.t.Helper()
	if err := e.c.Create(e.ctx, e.dInfo, ns, d); err != nil {
		e.t.Fatalf("create deployment: %v", err)
	}
	return d
}

func (e *env) get(name string) *api.Deployment {
	e.t.Helper()
	d := &api.Deployment{}
	if err := e.c.Get(e.ctx, e.dInfo, ns, name, d); err != nil {
		e.t.Fatalf("get deployment: %v", err)
	}
	return d
}

// mutate applies f to the latest version of the Deployment, retrying on
// conflicts with the controller's own writes.
func (e *env) mutate(name string, f func(d *api.Deployment)) *api.Deployment {
	e.t.Helper()
	for range 20 {
		d := e.get(name)
		f(d)
		err := e.c.Update(e.ctx, e.dInfo, ns, d)
		if err == nil {
			return d
		}
		if !client.IsConflict(err) {
			e.t.Fatalf("update deployment: %v", err)
		}
	}
	e.t.Fatal("update deployment: too many conflicts")
	return nil
}

// listReplicaSets lists the ReplicaSets controlled by Deployment name,
// oldest revision first.
func (e *env) listReplicaSets(name string) []api.ReplicaSet {
	e.t.Helper()
	var l api.ReplicaSetList
	if err := e.c.List(e.ctx, e.rsInfo, ns, client.ListOptions{}, &l); err != nil {
		e.t.Fatalf("list replica sets: %v", err)
	}
	var out []api.ReplicaSet
	for _, rs := range l.Items {
		if ref := api.ControllerRef(&rs.ObjectMeta); ref != nil && ref.Kind == "Deployment" && ref.Name == name {
			out = append(out, rs)
		}
	}
	slices.SortFunc(out, func(a, b api.ReplicaSet) int {
		ra, _ := strconv.Atoi(a.Annotations[deployment.AnnotationRevision])
		rb, _ := strconv.Atoi(b.Annotations[deployment.AnnotationRevision])
		return ra - rb
	})
	return out
}

func (e *env) listPods(name string) []api.Pod {
	e.t.Helper()
	var l api.PodList
	if err := e.c.List(e.ctx, e.pInfo, ns, client.ListOptions{LabelSelector: "app=" + name}, &l); err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	return l.Items
}

// live are the non-terminating pods.
func live(pods []api.Pod) []api.Pod {
	return slices.DeleteFunc(slices.Clone(pods), func(p api.Pod) bool { return p.DeletionTimestamp != nil })
}

func podNames(pods []api.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// waitFor polls cond every 20ms until it holds or timeout passes.
func (e *env) waitFor(what string, timeout time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, detail := cond()
		if ok {
			return
		}
		last = detail
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s; last: %s\nevents:\n%s", timeout, what, last, e.rec)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func condition(d *api.Deployment, t string) *api.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// waitComplete waits until the Deployment has rolled out completely: every
// pod of the current template, Ready and available, status converged
// with Available=True and Progressing=True/NewReplicaSetAvailable, and no
// terminating pods left.
func (e *env) waitComplete(name string, replicas int32) *api.Deployment {
	e.t.Helper()
	var d *api.Deployment
	e.waitFor(fmt.Sprintf("%s complete with %d replicas", name, replicas), 30*time.Second, func() (bool, string) {
		d = e.get(name)
		hash := deployment.TemplateHash(&d.Spec.Template)
		pods := e.listPods(name)
		st := d.Status
		detail := fmt.Sprintf("gen %d observed %d status %+v pods %d", d.Generation, st.ObservedGeneration,
			struct{ R, U, Rd, A, Un int32 }{st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas, st.UnavailableReplicas}, len(pods))
		if st.ObservedGeneration != d.Generation || st.Replicas != replicas || st.UpdatedReplicas != replicas ||
			st.ReadyReplicas != replicas || st.AvailableReplicas != replicas || st.UnavailableReplicas != 0 {
			return false, detail
		}
		if len(pods) != int(replicas) {
			return false, detail
		}
		for _, p := range pods {
			if p.DeletionTimestamp != nil || p.Labels[deployment.LabelPodTemplateHash] != hash || !api.IsPodReady(&p) {
				return false, detail + " pod " + p.Name + " not current"
			}
			if ref := api.ControllerRef(&p.ObjectMeta); ref == nil || ref.Kind != "ReplicaSet" || ref.Name != name+"-"+hash {
				return false, detail + " pod " + p.Name + " not owned by the new replica set"
			}
		}
		for _, rs := range e.listReplicaSets(name) {
			if want := int32(0); rs.Name != name+"-"+hash && (rs.Spec.Replicas == nil || *rs.Spec.Replicas != want) {
				return false, detail + " old replica set " + rs.Name + " not scaled to 0"
			}
		}
		a, p := condition(d, api.DeploymentAvailable), condition(d, api.DeploymentProgressing)
		if a == nil || a.Status != api.ConditionTrue || a.Reason != deployment.ReasonMinimumReplicasAvailable {
			return false, fmt.Sprintf("%s Available %+v", detail, a)
		}
		if p == nil || p.Status != api.ConditionTrue || p.Reason != deployment.ReasonNewReplicaSetAvailable {
			return false, fmt.Sprintf("%s Progressing %+v", detail, p)
		}
		return true, ""
	})
	return d
}

// invariants watches the pods of one Deployment through an informer and
// checks every state it sees: non-terminating pods <= maxTotal and Ready
// non-terminating pods >= minReady.
type invariants struct {
	mu        sync.Mutex
	armed     bool
	minReady  int
	maxTotal  int
	states    int
	seenMax   int
	seenMin   int
	violation []string
}

func (e *env) watchInvariants(name string) *invariants {
	inv := &invariants{seenMin: 1 << 30}
	inf := client.NewInformer(e.c, e.pInfo, client.InformerOptions{Namespace: ns, LabelSelector: "app=" + name})
	check := func(api.Object) {
		total, ready := 0, 0
		for _, o := range inf.List() {
			p := o.(*api.Pod)
			if p.DeletionTimestamp != nil {
				continue
			}
			total++
			if api.IsPodReady(p) {
				ready++
			}
		}
		inv.mu.Lock()
		defer inv.mu.Unlock()
		if !inv.armed {
			return
		}
		inv.states++
		inv.seenMax = max(inv.seenMax, total)
		inv.seenMin = min(inv.seenMin, ready)
		if total > inv.maxTotal || ready < inv.minReady {
			inv.violation = append(inv.violation, fmt.Sprintf("total %d (max %d), ready %d (min %d)", total, inv.maxTotal, ready, inv.minReady))
		}
	}
	inf.AddEventHandler(client.HandlerFuncs{AddFunc: check, UpdateFunc: func(_, o api.Object) { check(o) }, DeleteFunc: check})
	e.wg.Go(func() { inf.Run(e.ctx) })
	if !client.WaitForCacheSync(e.ctx, inf.HasSynced) {
		e.t.Fatal("invariant informer did not sync")
	}
	return inv
}

func (inv *invariants) arm(minReady, maxTotal int) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.armed, inv.minReady, inv.maxTotal = true, minReady, maxTotal
	inv.states, inv.seenMax, inv.seenMin = 0, 0, 1<<30
}

func (inv *invariants) report(t *testing.T) (states, seenMax, seenMin int) {
	t.Helper()
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if len(inv.violation) > 0 {
		t.Errorf("invariants violated %d times, first: %s", len(inv.violation), inv.violation[0])
	}
	return inv.states, inv.seenMax, inv.seenMin
}

// ---- tests ----

func TestCreateAndScale(t *testing.T) {
	e := start(t)
	e.node.mu.Lock()
	e.node.fakeReadyTimes = true
	e.node.mu.Unlock()
	inv := e.watchInvariants("web")
	inv.arm(0, 3) // creating 3 pods never makes more than 3
	e.create(newDeployment("web", 3, "nginx:1"))
	d := e.waitComplete("web", 3)
	if states, _, _ := inv.report(t); states == 0 {
		t.Fatal("the invariant checker saw nothing")
	}
	if d.Annotations[deployment.AnnotationRevision] != "1" {
		t.Errorf("revision annotation %q, want 1", d.Annotations[deployment.AnnotationRevision])
	}
	hash := deployment.TemplateHash(&d.Spec.Template)
	rss := e.listReplicaSets("web")
	if len(rss) != 1 || rss[0].Name != "web-"+hash || rss[0].Spec.Selector.MatchLabels[deployment.LabelPodTemplateHash] != hash ||
		rss[0].Annotations[deployment.AnnotationRevision] != "1" || rss[0].Annotations[deployment.AnnotationDesiredReplicas] != "3" ||
		rss[0].Annotations[deployment.AnnotationMaxReplicas] != "4" {
		t.Fatalf("replica sets %+v", rss)
	}
	if ref := api.ControllerRef(&rss[0].ObjectMeta); ref == nil || ref.UID != d.UID || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("replica set owner %+v", rss[0].OwnerReferences)
	}
	for _, p := range e.listPods("web") {
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref == nil || ref.UID != rss[0].UID || ref.Kind != "ReplicaSet" {
			t.Errorf("pod %s owner %+v", p.Name, p.OwnerReferences)
		}
		prefix := "web-" + hash + "-"
		if !strings.HasPrefix(p.Name, prefix) || len(p.Name) != len(prefix)+5 {
			t.Errorf("pod name %q, want %s<5 chars>", p.Name, prefix)
		}
	}
	original := podNames(e.listPods("web"))

	// Scale to 5; the node keeps the new pods from becoming Ready.
	e.node.setPolicy(func(p *api.Pod) (time.Duration, bool) { return 0, false })
	inv.arm(3, 5)
	e.mutate("web", func(d *api.Deployment) { *d.Spec.Replicas = 5 })
	e.waitFor("5 pods, 3 ready", 20*time.Second, func() (bool, string) {
		d := e.get("web")
		pods := live(e.listPods("web"))
		return len(pods) == 5 && d.Status.Replicas == 5 && d.Status.ReadyReplicas == 3 && d.Status.AvailableReplicas == 3 &&
				d.Status.UnavailableReplicas == 2 && d.Status.ObservedGeneration == d.Generation,
			fmt.Sprintf("%d pods, status %+v", len(pods), d.Status)
	})
	if a := condition(e.get("web"), api.DeploymentAvailable); a == nil || a.Status != api.ConditionFalse ||
		a.Reason != deployment.ReasonMinimumReplicasUnavailable {
		// 3 available < 5 - maxUnavailable (25% of 5, rounded down: 1).
		t.Errorf("Available = %+v", a)
	}

	// Scale to 2: the two not-ready pods go first (the ReplicaSet
	// controller's deletion order), then one of the original three.
	inv.arm(2, 5)
	e.mutate("web", func(d *api.Deployment) { *d.Spec.Replicas = 2 })
	e.waitFor("2 pods", 20*time.Second, func() (bool, string) {
		pods := e.listPods("web")
		return len(pods) == 2, fmt.Sprintf("pods %v", podNames(pods))
	})
	for _, n := range podNames(e.listPods("web")) {
		if !slices.Contains(original, n) {
			t.Errorf("after scale-down pod %s is left, not one of the original %v", n, original)
		}
	}
	e.waitComplete("web", 2)
	inv.report(t)
	for _, ev := range []string{
		"Normal ScalingReplicaSet: Scaled up replica set web-" + hash + " from 0 to 3",
		"Normal ScalingReplicaSet: Scaled up replica set web-" + hash + " from 3 to 5",
		"Normal ScalingReplicaSet: Scaled down replica set web-" + hash + " from 5 to 2",
	} {
		if !e.rec.has(ev) {
			t.Errorf("no event %q; events:\n%s", ev, e.rec)
		}
	}
}

func TestRollingUpdateAndRollback(t *testing.T) {
	e := start(t)
	inv := e.watchInvariants("web")
	d := newDeployment("web", 4, "nginx:1")
	one := api.FromInt32(1)
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &one}}
	e.create(d)
	d = e.waitComplete("web", 4)
	hash1 := deployment.TemplateHash(&d.Spec.Template)

	// New pods become Ready only 300ms after they are bound.
	e.node.setPolicy(func(p *api.Pod) (time.Duration, bool) { return 300 * time.Millisecond, true })
	inv.arm(3, 5)
	e.mutate("web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	d = e.waitComplete("web", 4)
	hash2 := deployment.TemplateHash(&d.Spec.Template)
	if hash2 == hash1 {
		t.Fatal("the template hash did not change")
	}
	states, seenMax, seenMin := inv.report(t)
	t.Logf("rolling update: %d states checked, max pods %d, min ready %d", states, seenMax, seenMin)
	if states < 16 || seenMax != 5 {
		t.Errorf("checked %d states with at most %d pods; want a surge to 5 observed", states, seenMax)
	}
	if got := d.Annotations[deployment.AnnotationRevision]; got != "2" {
		t.Errorf("revision %q, want 2", got)
	}
	rss := e.listReplicaSets("web")
	if len(rss) != 2 || rss[0].Name != "web-"+hash1 || rss[1].Name != "web-"+hash2 ||
		rss[0].Annotations[deployment.AnnotationRevision] != "1" || rss[1].Annotations[deployment.AnnotationRevision] != "2" ||
		*rss[0].Spec.Replicas != 0 || rss[0].Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("replica sets after the rollout: %s", rsSummary(rss))
	}

	// Roll back to revision 1 as kubectl rollout undo does, client-side:
	// the template of that revision's ReplicaSet without the hash label.
	inv.arm(3, 5)
	e.mutate("web", func(d *api.Deployment) {
		d.Spec.Template = rss[0].Spec.Template
		d.Spec.Template.Labels = maps.Clone(d.Spec.Template.Labels)
		delete(d.Spec.Template.Labels, deployment.LabelPodTemplateHash)
	})
	d = e.waitComplete("web", 4)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "nginx:1" {
		t.Errorf("image after rollback %q", got)
	}
	if got := d.Annotations[deployment.AnnotationRevision]; got != "3" {
		t.Errorf("revision after rollback %q, want 3", got)
	}
	rss = e.listReplicaSets("web")
	if len(rss) != 2 || rss[0].Name != "web-"+hash2 || rss[1].Name != "web-"+hash1 ||
		rss[1].Annotations[deployment.AnnotationRevision] != "3" || rss[1].Annotations[deployment.AnnotationRevisionHistory] != "1" {
		t.Errorf("replica sets after the rollback: %s", rsSummary(rss))
	}
	inv.report(t)
}

func rsSummary(rss []api.ReplicaSet) string {
	var b strings.Builder
	for _, rs := range rss {
		fmt.Fprintf(&b, "%s replicas=%d rev=%s history=%s; ", rs.Name, *rs.Spec.Replicas,
			rs.Annotations[deployment.AnnotationRevision], rs.Annotations[deployment.AnnotationRevisionHistory])
	}
	return b.String()
}

func TestRestartedAtRollsOut(t *testing.T) {
	e := start(t)
	d := e.waitCompleteAfterCreate(newDeployment("web", 2, "nginx:1"), 2)
	before := podNames(d.pods)
	e.mutate("web", func(d *api.Deployment) {
		d.Spec.Template.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": time.Now().Format(time.RFC3339)}
	})
	after := e.waitComplete("web", 2)
	if after.Annotations[deployment.AnnotationRevision] != "2" {
		t.Errorf("revision %q", after.Annotations[deployment.AnnotationRevision])
	}
	for _, n := range podNames(e.listPods("web")) {
		if slices.Contains(before, n) {
			t.Errorf("pod %s survived the restart", n)
		}
	}
}

type created struct {
	d    *api.Deployment
	pods []api.Pod
}

func (e *env) waitCompleteAfterCreate(d *api.Deployment, replicas int32) created {
	e.t.Helper()
	e.create(d)
	got := e.waitComplete(d.Name, replicas)
	return created{d: got, pods: e.listPods(d.Name)}
}

func TestRecreate(t *testing.T) {
	e := start(t)
	d := newDeployment("web", 3, "nginx:1")
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RecreateDeploymentStrategyType}
	d = e.waitCompleteAfterCreate(d, 3).d
	hash1 := deployment.TemplateHash(&d.Spec.Template)

	// Old and new pods never exist together, terminating ones included.
	inf := client.NewInformer(e.c, e.pInfo, client.InformerOptions{Namespace: ns, LabelSelector: "app=web"})
	var mu sync.Mutex
	var mixed []string
	check := func(api.Object) {
		hashes := map[string]bool{}
		for _, o := range inf.List() {
			hashes[o.GetObjectMeta().Labels[deployment.LabelPodTemplateHash]] = true
		}
		if len(hashes) > 1 {
			mu.Lock()
			mixed = append(mixed, fmt.Sprint(hashes))
			mu.Unlock()
		}
	}
	inf.AddEventHandler(client.HandlerFuncs{AddFunc: check, UpdateFunc: func(_, o api.Object) { check(o) }, DeleteFunc: check})
	e.wg.Go(func() { inf.Run(e.ctx) })
	client.WaitForCacheSync(e.ctx, inf.HasSynced)

	e.mutate("web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	d = e.waitComplete("web", 3)
	if deployment.TemplateHash(&d.Spec.Template) == hash1 {
		t.Fatal("hash unchanged")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(mixed) > 0 {
		t.Errorf("old and new pods together %d times, first %s", len(mixed), mixed[0])
	}
}

func TestPausedScalesWithoutRollingOut(t *testing.T) {
	e := start(t)
	d := e.waitCompleteAfterCreate(newDeployment("web", 2, "nginx:1"), 2).d
	hash1 := deployment.TemplateHash(&d.Spec.Template)
	e.mutate("web", func(d *api.Deployment) {
		d.Spec.Paused = true
		d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	})
	e.waitFor("Progressing=Unknown/DeploymentPaused", 10*time.Second, func() (bool, string) {
		d := e.get("web")
		p := condition(d, api.DeploymentProgressing)
		return p != nil && p.Reason == deployment.ReasonDeploymentPaused && d.Status.ObservedGeneration == d.Generation,
			fmt.Sprintf("%+v", d.Status)
	})
	e.mutate("web", func(d *api.Deployment) { *d.Spec.Replicas = 3 })
	e.waitFor("3 ready pods of the old template", 10*time.Second, func() (bool, string) {
		d := e.get("web")
		pods := e.listPods("web")
		for _, p := range pods {
			if p.Labels[deployment.LabelPodTemplateHash] != hash1 {
				return false, "pod of the new template while paused: " + p.Name
			}
		}
		return len(pods) == 3 && d.Status.ReadyReplicas == 3 && d.Status.UpdatedReplicas == 0, fmt.Sprintf("%d pods, %+v", len(pods), d.Status)
	})
	for _, p := range e.listPods("web") {
		if p.Labels[deployment.LabelPodTemplateHash] != hash1 {
			t.Fatalf("paused deployment rolled out pod %s", p.Name)
		}
	}
	if got := e.get("web").Annotations[deployment.AnnotationRevision]; got != "1" {
		t.Errorf("paused deployment recorded revision %q", got)
	}
	e.mutate("web", func(d *api.Deployment) { d.Spec.Paused = false })
	d = e.waitComplete("web", 3)
	if deployment.TemplateHash(&d.Spec.Template) == hash1 || d.Annotations[deployment.AnnotationRevision] != "2" {
		t.Errorf("resumed deployment did not roll out: revision %q", d.Annotations[deployment.AnnotationRevision])
	}
}

func TestMinReadySeconds(t *testing.T) {
	e := start(t)
	d := newDeployment("web", 2, "nginx:1")
	d.Spec.MinReadySeconds = 2
	e.create(d)
	// Ready comes before available; available then comes without any
	// further event, from the controller's own re-check.
	sawLag := false
	e.waitFor("available after minReadySeconds", 20*time.Second, func() (bool, string) {
		d := e.get("web")
		if d.Status.ReadyReplicas == 2 && d.Status.AvailableReplicas < 2 {
			sawLag = true
		}
		return d.Status.AvailableReplicas == 2, fmt.Sprintf("%+v", d.Status)
	})
	if !sawLag {
		t.Error("never saw ready pods that were not yet available")
	}
	e.waitComplete("web", 2)
}

func TestProgressDeadline(t *testing.T) {
	e := start(t)
	e.node.setPolicy(func(*api.Pod) (time.Duration, bool) { return 0, false })
	d := newDeployment("web", 1, "nginx:1")
	deadline := int32(2)
	d.Spec.ProgressDeadlineSeconds = &deadline
	e.create(d)
	e.waitFor("ProgressDeadlineExceeded", 20*time.Second, func() (bool, string) {
		d := e.get("web")
		p := condition(d, api.DeploymentProgressing)
		a := condition(d, api.DeploymentAvailable)
		return p != nil && p.Status == api.ConditionFalse && p.Reason == deployment.ReasonProgressDeadlineExceeded &&
			a != nil && a.Status == api.ConditionFalse, fmt.Sprintf("%+v", d.Status.Conditions)
	})
	// Progress after the deadline: the pod becomes ready and the rollout
	// completes.
	e.node.setPolicy(func(*api.Pod) (time.Duration, bool) { return 0, true })
	e.waitComplete("web", 1)
}

func TestScaleSubresource(t *testing.T) {
	e := start(t)
	e.waitCompleteAfterCreate(newDeployment("web", 1, "nginx:1"), 1)
	path, err := client.ResourcePath(e.dInfo, ns, "web", "scale")
	if err != nil {
		t.Fatal(err)
	}
	var sc api.Scale
	if err := e.c.Do(e.ctx, "GET", path, nil, &sc); err != nil {
		t.Fatal(err)
	}
	if sc.Kind != "Scale" || sc.Spec.Replicas != 1 || sc.Status.Replicas != 1 || sc.Status.Selector != "app=web" {
		t.Fatalf("GET scale = %+v", sc)
	}

	sc.Spec.Replicas = 3
	if err := e.c.Do(e.ctx, "PUT", path, &sc, &sc); err != nil {
		t.Fatalf("PUT scale: %v", err)
	}
	if sc.Spec.Replicas != 3 {
		t.Errorf("PUT scale answered %+v", sc)
	}
	e.waitComplete("web", 3)

	var patched api.Scale
	if err := e.c.Patch(e.ctx, e.dInfo, ns, "web", client.MergePatchType, []byte(`{"spec":{"replicas":1}}`), &patched, "scale"); err != nil {
		t.Fatalf("PATCH scale: %v", err)
	}
	if patched.Spec.Replicas != 1 {
		t.Errorf("PATCH scale answered %+v", patched)
	}
	e.waitComplete("web", 1)
	e.waitFor("scale status", 5*time.Second, func() (bool, string) {
		var sc api.Scale
		if err := e.c.Do(e.ctx, "GET", path, nil, &sc); err != nil {
			return false, err.Error()
		}
		return sc.Spec.Replicas == 1 && sc.Status.Replicas == 1, fmt.Sprintf("%+v", sc)
	})
	// A stale resourceVersion on PUT is a conflict.
	sc.Spec.Replicas = 4
	if err := e.c.Do(e.ctx, "PUT", path, &sc, nil); !client.IsConflict(err) {
		t.Errorf("PUT scale with a stale resourceVersion: %v, want a conflict", err)
	}
}

// TestAdoptsOrphans: an orphan ReplicaSet matching the selector is
// adopted (and, of another template, scaled away as an old one); a
// controlled ReplicaSet whose labels stop matching is released.
func TestAdoptsOrphans(t *testing.T) {
	e := start(t)
	zero := int32(1)
	orphan := &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": "web", "v": "0"}},
		Spec: api.ReplicaSetSpec{Replicas: &zero,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web", "v": "0"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web", "v": "0"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx:0"}}}}},
	}
	if err := e.c.Create(e.ctx, e.rsInfo, ns, orphan); err != nil {
		t.Fatal(err)
	}
	d := e.create(newDeployment("web", 2, "nginx:1"))
	e.waitFor("the orphan to be adopted and scaled down", 20*time.Second, func() (bool, string) {
		rs := &api.ReplicaSet{}
		if err := e.c.Get(e.ctx, e.rsInfo, ns, "orphan", rs); err != nil {
			return false, err.Error()
		}
		ref := api.ControllerRef(&rs.ObjectMeta)
		return ref != nil && ref.UID == d.UID && *rs.Spec.Replicas == 0, fmt.Sprintf("owner %+v replicas %d", ref, *rs.Spec.Replicas)
	})
	e.waitComplete("web", 2)
	if !e.rec.has("Scaled down replica set orphan from 1 to 0") {
		t.Errorf("events:\n%s", e.rec)
	}
	// Relabel the adopted one: it no longer matches and is released.
	for range 10 {
		rs := &api.ReplicaSet{}
		if err := e.c.Get(e.ctx, e.rsInfo, ns, "orphan", rs); err != nil {
			t.Fatal(err)
		}
		rs.Labels = map[string]string{"app": "other", "v": "0"}
		if err := e.c.Update(e.ctx, e.rsInfo, ns, rs); err == nil {
			break
		} else if !client.IsConflict(err) {
			t.Fatal(err)
		}
	}
	e.waitFor("the relabeled replica set to be released", 20*time.Second, func() (bool, string) {
		rs := &api.ReplicaSet{}
		if err := e.c.Get(e.ctx, e.rsInfo, ns, "orphan", rs); err != nil {
			return false, err.Error()
		}
		return api.ControllerRef(&rs.ObjectMeta) == nil, fmt.Sprintf("owners %+v", rs.OwnerReferences)
	})
}

// BenchmarkScaleUp measures a Deployment going from 0 to 200 Ready pods
// against the real server, with the simulated node binding and readying
// each pod as soon as it appears: pods/s from create to complete status.
func BenchmarkScaleUp(b *testing.B) {
	const replicas = 200
	for i := range b.N {
		func() {
			e := start(b)
			name := fmt.Sprintf("bench-%d", i)
			begin := time.Now()
			if err := e.c.Create(e.ctx, e.dInfo, ns, newDeployment(name, replicas, "nginx:1")); err != nil {
				b.Fatal(err)
			}
			for {
				d := &api.Deployment{}
				if err := e.c.Get(e.ctx, e.dInfo, ns, name, d); err != nil {
					b.Fatal(err)
				}
				if d.Status.AvailableReplicas == replicas && d.Status.ObservedGeneration == d.Generation {
					break
				}
				if time.Since(begin) > 2*time.Minute {
					b.Fatalf("not complete: %+v", d.Status)
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.ReportMetric(float64(replicas)/time.Since(begin).Seconds(), "pods/s")
		}()
	}
}

// TestProportionalScaling: a Deployment scaled in the middle of a rollout
// that cannot progress (new pods never Ready) grows both ReplicaSets in
// proportion to their sizes, as upstream: 10 replicas, maxSurge 3,
// maxUnavailable 2 stall at old 8 + new 5 (max-replicas 13); scaled to 20
// (max 23), the old gets round(8*23/13) = 14 and the new the 4 left, 9.
func TestProportionalScaling(t *testing.T) {
	e := start(t)
	d := newDeployment("web", 10, "nginx:1")
	surge, unavail := api.FromInt32(3), api.FromInt32(2)
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}}
	e.create(d)
	e.waitComplete("web", 10)
	e.node.setPolicy(func(*api.Pod) (time.Duration, bool) { return 0, false })
	e.mutate("web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	sizes := func() (string, bool) {
		rss := e.listReplicaSets("web")
		if len(rss) != 2 {
			return rsSummary(rss), false
		}
		return rsSummary(rss), true
	}
	want := func(old, cur int32) func() (bool, string) {
		return func() (bool, string) {
			s, ok := sizes()
			if !ok {
				return false, s
			}
			rss := e.listReplicaSets("web")
			return *rss[0].Spec.Replicas == old && *rss[1].Spec.Replicas == cur, s
		}
	}
	e.waitFor("the rollout to stall at 8 old + 5 new", 20*time.Second, want(8, 5))
	time.Sleep(500 * time.Millisecond)
	if ok, s := want(8, 5)(); !ok {
		t.Fatalf("the stalled rollout moved: %s", s)
	}
	e.mutate("web", func(d *api.Deployment) { *d.Spec.Replicas = 20 })
	e.waitFor("proportional scaling to 14 old + 9 new", 20*time.Second, want(14, 9))
	for _, rs := range e.listReplicaSets("web") {
		if rs.Annotations[deployment.AnnotationDesiredReplicas] != "20" || rs.Annotations[deployment.AnnotationMaxReplicas] != "23" {
			t.Errorf("%s annotations %v", rs.Name, rs.Annotations)
		}
	}
	// The rollout then completes once new pods become Ready.
	e.node.setPolicy(func(*api.Pod) (time.Duration, bool) { return 0, true })
	e.waitComplete("web", 20)
}
