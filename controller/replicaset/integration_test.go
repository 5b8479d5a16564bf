package replicaset_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/replicaset"
	"github.com/skiff-dev/skiff/server/servertest"
)

const ns = "default"

// env is a real API server (bbolt, HTTPS on loopback, the garbage
// collector and the Deployment controller running) with one controller of
// the package under test, run by the test so its Events are visible.
type env struct {
	t       testing.TB
	ctx     context.Context
	c       *client.Client
	kind    replicaset.Kind
	setInfo *api.ResourceInfo
	pInfo   *api.ResourceInfo
	rec     *recorder
}

func start(t testing.TB, kind replicaset.Kind) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("a real API server; not in -short")
	}
	// No scheduler: pods stay unscheduled and Pending, which the
	// controller handles as any other pods (and deletes at once). The
	// server runs the other kind's controller (the ReplicaSets of
	// Deployments need one).
	c := servertest.Start(t, servertest.Options{DisabledControllers: []string{kind.ControllerName, "scheduler"}}).Client()
	ctx, cancel := context.WithCancel(context.Background())
	res := api.Resources()
	var setInfo *api.ResourceInfo
	for _, r := range res {
		q := r.Resource
		if r.Group != "" {
			q += "." + r.Group
		}
		if q == kind.Resource {
			setInfo = r
		}
	}
	e := &env{t: t, ctx: ctx, c: c, kind: kind, setInfo: setInfo, pInfo: api.Lookup(res, "v1", "pods"), rec: &recorder{}}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	sets := client.NewInformer(c, setInfo, client.InformerOptions{})
	pods := client.NewInformer(c, e.pInfo, client.InformerOptions{})
	ctl := replicaset.New(replicaset.Deps{Client: c, Sets: sets, Pods: pods, Recorder: e.rec, Log: log},
		replicaset.Options{Kind: kind, Workers: 2})
	var wg sync.WaitGroup
	wg.Go(func() { sets.Run(ctx) })
	wg.Go(func() { pods.Run(ctx) })
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return e
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", obj.GetObjectMeta().Name, eventType, reason, fmt.Sprintf(format, args...)))
}

func (r *recorder) count(substr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if strings.Contains(e, substr) {
			n++
		}
	}
	return n
}

// newSet builds a set of the env's kind selecting app=<name>.
func (e *env) newSet(name string, replicas int32, mutate func(*api.PodSpec)) api.Object {
	labels := map[string]string{"app": name}
	tmpl := api.PodTemplateSpec{
		ObjectMeta: api.ObjectMeta{Labels: labels},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx"}}},
	}
	if mutate != nil {
		mutate(&tmpl.Spec)
	}
	if e.kind.Name == "ReplicaSet" {
		return &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
			Spec: api.ReplicaSetSpec{Replicas: &replicas, Selector: &api.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	}
	return &api.ReplicationController{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: api.ReplicationControllerSpec{Replicas: &replicas, Selector: labels, Template: &tmpl}}
}

func (e *env) getSet(name string) (uid string, st api.ReplicaSetStatus, gen int64) {
	e.t.Helper()
	obj := e.setInfo.New()
	if err := e.c.Get(e.ctx, e.setInfo, ns, name, obj); err != nil {
		e.t.Fatalf("get %s: %v", name, err)
	}
	switch o := obj.(type) {
	case *api.ReplicaSet:
		return o.UID, o.Status, o.Generation
	case *api.ReplicationController:
		s := o.Status
		st = api.ReplicaSetStatus{Replicas: s.Replicas, FullyLabeledReplicas: s.FullyLabeledReplicas, ReadyReplicas: s.ReadyReplicas,
			AvailableReplicas: s.AvailableReplicas, ObservedGeneration: s.ObservedGeneration}
		for _, c := range s.Conditions {
			st.Conditions = append(st.Conditions, api.ReplicaSetCondition(c))
		}
		return o.UID, st, o.Generation
	}
	e.t.Fatalf("object %T", obj)
	return
}

func (e *env) pods(selector string) []api.Pod {
	e.t.Helper()
	var l api.PodList
	if err := e.c.List(e.ctx, e.pInfo, ns, client.ListOptions{LabelSelector: selector}, &l); err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	return slices.DeleteFunc(l.Items, func(p api.Pod) bool { return p.DeletionTimestamp != nil })
}

// ownedBy are the pods whose controller reference has uid.
func ownedBy(pods []api.Pod, uid string) []api.Pod {
	return slices.DeleteFunc(slices.Clone(pods), func(p api.Pod) bool {
		ref := api.ControllerRef(&p.ObjectMeta)
		return ref == nil || ref.UID != uid
	})
}

func podNames(pods []api.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func (e *env) waitFor(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s: %s", what, detail)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitOwned waits until the set owns exactly n live pods and its status
// says so for its current generation.
func (e *env) waitOwned(name, uid string, n int) []api.Pod {
	e.t.Helper()
	var got []api.Pod
	e.waitFor(fmt.Sprintf("%d pods of %s", n, name), func() (bool, string) {
		got = ownedBy(e.pods("app="+name), uid)
		_, st, gen := e.getSet(name)
		return len(got) == n && st.Replicas == int32(n) && st.ObservedGeneration == gen,
			fmt.Sprintf("pods %v, status %+v, generation %d", podNames(got), st, gen)
	})
	return got
}

// TestReplicaSetLifecycle and TestReplicationControllerLifecycle run the
// same story against a real server for each kind.
func TestReplicaSetLifecycle(t *testing.T) { lifecycle(t, replicaset.ReplicaSetKind) }

func TestReplicationControllerLifecycle(t *testing.T) {
	lifecycle(t, replicaset.ReplicationControllerKind)
}

func lifecycle(t *testing.T, kind replicaset.Kind) {
	e := start(t, kind)
	const name = "web"

	// A Deployment's pod (its ReplicaSet's) carrying the set's labels:
	// never adopted.
	one := int32(1)
	dl := map[string]string{"app": name, "owner": "deploy"}
	deployInfo := api.Lookup(api.Resources(), "apps/v1", "deployments")
	if err := e.c.Create(e.ctx, deployInfo, ns, &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "d", Namespace: ns},
		Spec: api.DeploymentSpec{Replicas: &one, Selector: &api.LabelSelector{MatchLabels: dl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: dl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx"}}}}}}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	var deployPod api.Pod
	e.waitFor("the Deployment's pod", func() (bool, string) {
		ps := e.pods("owner=deploy")
		if len(ps) == 1 {
			deployPod = ps[0]
		}
		return len(ps) == 1, fmt.Sprint(podNames(ps))
	})

	// 1. Three replicas: three pods, each controlled by the set.
	if err := e.c.Create(e.ctx, e.setInfo, ns, e.newSet(name, 3, nil)); err != nil {
		t.Fatalf("create %s: %v", kind.Name, err)
	}
	uid, _, _ := e.getSet(name)
	pods := e.waitOwned(name, uid, 3)
	for _, p := range pods {
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref.Kind != kind.Name || ref.APIVersion != kind.APIVersion || ref.Name != name ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion || !strings.HasPrefix(p.Name, name+"-") {
			t.Fatalf("pod %s: controller ref %+v", p.Name, ref)
		}
	}
	if n := e.rec.count(name + " Normal SuccessfulCreate"); n != 3 {
		t.Fatalf("%d SuccessfulCreate events, want 3", n)
	}

	// 2. A deleted pod is replaced.
	victim := pods[0].Name
	if err := e.c.Delete(e.ctx, e.pInfo, ns, victim, client.DeleteOptions{}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	e.waitFor("a replacement", func() (bool, string) {
		got := ownedBy(e.pods("app="+name), uid)
		return len(got) == 3 && !slices.Contains(podNames(got), victim), fmt.Sprint(podNames(got))
	})

	// 3. /scale to 1: two pods deleted.
	if err := e.c.Patch(e.ctx, e.setInfo, ns, name, client.MergePatchType, []byte(`{"spec":{"replicas":1}}`), nil, "scale"); err != nil {
		t.Fatalf("scale: %v", err)
	}
	e.waitOwned(name, uid, 1)
	if n := e.rec.count(name + " Normal SuccessfulDelete"); n != 2 {
		t.Fatalf("%d SuccessfulDelete events, want 2", n)
	}

	// 4. A matching orphan is adopted. It costs more to delete, so the
	// surplus pod that goes is the other one.
	orphan := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": name},
		Annotations: map[string]string{replicaset.AnnotationPodDeletionCost: "1000"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx"}}}}
	if err := e.c.Create(e.ctx, e.pInfo, ns, orphan); err != nil {
		t.Fatalf("create orphan: %v", err)
	}
	e.waitFor("the orphan adopted, the other pod deleted", func() (bool, string) {
		got := ownedBy(e.pods("app="+name), uid)
		return slices.Equal(podNames(got), []string{"orphan"}), fmt.Sprint(podNames(got))
	})

	// 5. Relabelling a pod releases it; a new one takes its place.
	if err := e.c.Patch(e.ctx, e.pInfo, ns, "orphan", client.MergePatchType, []byte(`{"metadata":{"labels":{"app":"debug"}}}`), nil); err != nil {
		t.Fatalf("relabel: %v", err)
	}
	e.waitFor("the relabelled pod released", func() (bool, string) {
		p := &api.Pod{}
		if err := e.c.Get(e.ctx, e.pInfo, ns, "orphan", p); err != nil {
			return false, err.Error()
		}
		return len(p.OwnerReferences) == 0, fmt.Sprintf("%+v", p.OwnerReferences)
	})
	replacement := e.waitOwned(name, uid, 1)
	if replacement[0].Name == "orphan" {
		t.Fatal("the released pod is still counted")
	}

	// The Deployment's pod was never taken.
	p := &api.Pod{}
	if err := e.c.Get(e.ctx, e.pInfo, ns, deployPod.Name, p); err != nil {
		t.Fatalf("get the Deployment's pod: %v", err)
	}
	if ref, was := api.ControllerRef(&p.ObjectMeta), api.ControllerRef(&deployPod.ObjectMeta); ref == nil || was == nil ||
		ref.UID != was.UID || !strings.HasPrefix(ref.Name, "d-") || len(p.OwnerReferences) != 1 {
		t.Fatalf("the Deployment's pod has owners %+v", p.OwnerReferences)
	}
	if _, st, _ := e.getSet(name); len(st.Conditions) != 0 || st.FullyLabeledReplicas != 1 {
		t.Fatalf("status %+v", st)
	}

	// 6. Deleting the set: the garbage collector deletes its pods, not the
	// released one.
	if err := e.c.Delete(e.ctx, e.setInfo, ns, name, client.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", kind.Name, err)
	}
	e.waitFor("the set's pods collected", func() (bool, string) {
		got := ownedBy(e.pods("app="+name), uid)
		return len(got) == 0, fmt.Sprint(podNames(got))
	})
	if err := e.c.Get(e.ctx, e.pInfo, ns, "orphan", &api.Pod{}); err != nil {
		t.Fatalf("the released pod: %v", err)
	}
}

// TestReplicaFailure: pods the API refuses (403: their ServiceAccount does
// not exist) give the ReplicaFailure condition with the API's message;
// once they can be created it goes.
func TestReplicaFailure(t *testing.T) {
	e := start(t, replicaset.ReplicaSetKind)
	set := e.newSet("nosa", 2, func(s *api.PodSpec) { s.ServiceAccountName = "missing" })
	if err := e.c.Create(e.ctx, e.setInfo, ns, set); err != nil {
		t.Fatalf("create: %v", err)
	}
	e.waitFor("ReplicaFailure", func() (bool, string) {
		_, st, _ := e.getSet("nosa")
		for _, c := range st.Conditions {
			if c.Type == api.ReplicaSetReplicaFailure && c.Status == api.ConditionTrue && c.Reason == replicaset.ReasonFailedCreate &&
				strings.Contains(c.Message, "forbidden") && strings.Contains(c.Message, "missing") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", st)
	})
	// Slow start: the first batch (one pod) failed, so no second batch
	// was tried in that round.
	if n := e.rec.count("FailedCreate"); n < 1 {
		t.Fatalf("%d FailedCreate events", n)
	}
	saInfo := api.Lookup(api.Resources(), "v1", "serviceaccounts")
	if err := e.c.Create(e.ctx, saInfo, ns, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "missing", Namespace: ns}}); err != nil {
		t.Fatalf("create ServiceAccount: %v", err)
	}
	uid, _, _ := e.getSet("nosa")
	e.waitOwned("nosa", uid, 2)
	e.waitFor("ReplicaFailure gone", func() (bool, string) {
		_, st, _ := e.getSet("nosa")
		return len(st.Conditions) == 0, fmt.Sprintf("%+v", st)
	})
}

// TestNoAdoptionWhileDeleting: a ReplicaSet held by a finalizer after its
// deletion adopts no orphan and replaces no pod.
func TestNoAdoptionWhileDeleting(t *testing.T) {
	e := start(t, replicaset.ReplicaSetKind)
	set := e.newSet("held", 1, nil).(*api.ReplicaSet)
	set.Finalizers = []string{"skiff.dev/test-hold"}
	if err := e.c.Create(e.ctx, e.setInfo, ns, set); err != nil {
		t.Fatal(err)
	}
	uid, _, _ := e.getSet("held")
	pods := e.waitOwned("held", uid, 1)
	if err := e.c.Delete(e.ctx, e.setInfo, ns, "held", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.c.Patch(context.Background(), e.setInfo, ns, "held", client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), nil)
	})
	orphan := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "stray", Namespace: ns, Labels: map[string]string{"app": "held"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx"}}}}
	if err := e.c.Create(e.ctx, e.pInfo, ns, orphan); err != nil {
		t.Fatal(err)
	}
	// The set's own pod goes (a replacement must not come).
	if err := e.c.Delete(e.ctx, e.pInfo, ns, pods[0].Name, client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	got := e.pods("app=held")
	if names := podNames(got); !slices.Equal(names, []string{"stray"}) {
		t.Fatalf("pods %v, want only the stray one", names)
	}
	if len(got[0].OwnerReferences) != 0 {
		t.Fatalf("stray pod adopted: %+v", got[0].OwnerReferences)
	}
}
