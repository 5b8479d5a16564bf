package daemonset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/daemonset"
	"github.com/skiff-dev/skiff/server/servertest"
)

const ns = "kube-system"

var (
	resources = api.Resources()
	podsRes   = api.Lookup(resources, "v1", "pods")
	nodesRes  = api.Lookup(resources, "v1", "nodes")
	dsRes     = api.Lookup(resources, "apps/v1", "daemonsets")
)

// env is a real server running its built-in DaemonSet controller (no
// scheduler or node lifecycle controller, so nothing else touches the
// pods), Node objects the test registers, and a fake kubelet: every pod
// bound to a registered node becomes Running and Ready, and a
// terminating pod is removed (a grace-0 delete).
type env struct {
	t *testing.T
	c *client.Client
}

func startEnv(t testing.TB) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("a real API server")
	}
	c := servertest.Start(t, servertest.Options{
		DisabledControllers: []string{"scheduler", "nodelifecycle"},
	}).Client()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { kubelet(ctx, c) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	e := &env{c: c}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
	}
	return e
}

func kubelet(ctx context.Context, c *client.Client) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var list api.PodList
		if err := c.List(ctx, podsRes, ns, client.ListOptions{}, &list); err != nil {
			continue
		}
		for i := range list.Items {
			p := &list.Items[i]
			switch {
			case p.DeletionTimestamp != nil:
				zero := int64(0)
				_ = c.Delete(ctx, podsRes, ns, p.Name, client.DeleteOptions{GracePeriodSeconds: &zero,
					Preconditions: &client.Preconditions{UID: p.UID}})
			case p.Spec.NodeName != "" && p.Status.Phase == "" || p.Status.Phase == api.PodPending:
				now := api.Now()
				p.Status.Phase = api.PodRunning
				p.Status.Conditions = []api.PodCondition{
					{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: now},
					{Type: api.ContainersReady, Status: api.ConditionTrue, LastTransitionTime: now},
					{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: now},
				}
				_ = c.UpdateStatus(ctx, podsRes, ns, p)
			}
		}
	}
}

func (e *env) fatalf(format string, args ...any) {
	if e.t != nil {
		e.t.Helper()
		e.t.Fatalf(format, args...)
	}
	panic(fmt.Sprintf(format, args...))
}

func (e *env) addNode(name string, mut ...func(*api.Node)) {
	now := api.Now()
	n := &api.Node{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: api.NodeStatus{
			Allocatable: api.ResourceList{"cpu": "4", "memory": "8Gi", "pods": "110"},
			Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
	for _, m := range mut {
		m(n)
	}
	if err := e.c.Create(context.Background(), nodesRes, "", n); err != nil {
		e.fatalf("create node %s: %v", name, err)
	}
}

func (e *env) createDS(name string, mut ...func(*api.DaemonSet)) *api.DaemonSet {
	ds := &api.DaemonSet{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.DaemonSetSpec{
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "agent:1"}}},
			},
		},
	}
	for _, m := range mut {
		m(ds)
	}
	if err := e.c.Create(context.Background(), dsRes, ns, ds); err != nil {
		e.fatalf("create daemonset: %v", err)
	}
	return ds
}

func (e *env) getDS(name string) *api.DaemonSet {
	var ds api.DaemonSet
	if err := e.c.Get(context.Background(), dsRes, ns, name, &ds); err != nil {
		e.fatalf("get daemonset: %v", err)
	}
	return &ds
}

// podsByNode are the live (not terminating) pods of DaemonSet app, by node.
func (e *env) podsByNode(app string) map[string][]api.Pod {
	m, err := e.livePods(app)
	if err != nil {
		e.fatalf("list pods: %v", err)
	}
	return m
}

func (e *env) livePods(app string) (map[string][]api.Pod, error) {
	var list api.PodList
	if err := e.c.List(context.Background(), podsRes, ns, client.ListOptions{LabelSelector: "app=" + app}, &list); err != nil {
		return nil, err
	}
	m := map[string][]api.Pod{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			m[p.Spec.NodeName] = append(m[p.Spec.NodeName], p)
		}
	}
	return m, nil
}

// updateDS changes DaemonSet name with mut, retrying on a Conflict with
// the controller's status writes.
func (e *env) updateDS(name string, mut func(*api.DaemonSet)) {
	for i := 0; ; i++ {
		ds := e.getDS(name)
		mut(ds)
		err := e.c.Update(context.Background(), dsRes, ns, ds)
		if err == nil {
			return
		}
		if !client.IsConflict(err) || i > 20 {
			e.fatalf("update daemonset: %v", err)
		}
	}
}

func (e *env) waitFor(what string, timeout time.Duration, cond func() bool) {
	if e.t != nil {
		e.t.Helper()
	}
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// onePodEach reports whether exactly the nodes have one live pod each
// (at template hash, when hash is set) and no other node has any.
func (e *env) onePodEach(app, hash string, nodes ...string) bool {
	m := e.podsByNode(app)
	if len(m) != len(nodes) {
		return false
	}
	for _, n := range nodes {
		if len(m[n]) != 1 || (hash != "" && m[n][0].Labels[api.DefaultDaemonSetUniqueLabelKey] != hash) {
			return false
		}
	}
	return true
}

func TestDaemonSetNodesJoinAndLeave(t *testing.T) {
	e := startEnv(t)
	ctx := context.Background()
	for _, n := range []string{"n1", "n2", "n3"} {
		e.addNode(n)
	}
	e.addNode("cp", func(n *api.Node) {
		n.Spec.Taints = []api.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: api.TaintEffectNoSchedule}}
	})
	e.createDS("agent")
	e.waitFor("a pod on n1..n3, none on the tainted cp", 30*time.Second, func() bool { return e.onePodEach("agent", "", "n1", "n2", "n3") })

	pods := e.podsByNode("agent")
	ds := e.getDS("agent")
	p := pods["n1"][0]
	if !strings.HasPrefix(p.Name, "agent-") || api.ControllerRef(&p.ObjectMeta) == nil || api.ControllerRef(&p.ObjectMeta).UID != ds.UID {
		t.Fatalf("pod %s: owner %+v", p.Name, p.OwnerReferences)
	}
	tols := map[string]bool{}
	for _, tol := range p.Spec.Tolerations {
		tols[tol.Key+":"+tol.Effect] = true
	}
	for _, want := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unschedulable:NoSchedule"} {
		if !tols[want] {
			t.Errorf("pod tolerations %v lack %s", p.Spec.Tolerations, want)
		}
	}
	e.waitFor("status 3 desired, 3 available", 30*time.Second, func() bool {
		s := e.getDS("agent").Status
		return s.DesiredNumberScheduled == 3 && s.CurrentNumberScheduled == 3 && s.NumberReady == 3 &&
			s.NumberAvailable == 3 && s.UpdatedNumberScheduled == 3 && s.NumberUnavailable == 0 && s.ObservedGeneration == ds.Generation
	})

	// A node joins: it gets a pod. A node leaves: its pod goes.
	e.addNode("n4")
	if err := e.c.Delete(ctx, nodesRes, "", "n2", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("pods on n1, n3, n4", 30*time.Second, func() bool { return e.onePodEach("agent", "", "n1", "n3", "n4") })

	// An untolerated NoExecute taint evicts the pod; desired drops.
	var n3 api.Node
	if err := e.c.Get(ctx, nodesRes, "", "n3", &n3); err != nil {
		t.Fatal(err)
	}
	n3.Spec.Taints = []api.Taint{{Key: "maintenance", Effect: api.TaintEffectNoExecute}}
	if err := e.c.Update(ctx, nodesRes, "", &n3); err != nil {
		t.Fatal(err)
	}
	e.waitFor("n3's pod evicted", 30*time.Second, func() bool { return e.onePodEach("agent", "", "n1", "n4") })
	e.waitFor("status 2 desired", 30*time.Second, func() bool {
		s := e.getDS("agent").Status
		return s.DesiredNumberScheduled == 2 && s.CurrentNumberScheduled == 2 && s.NumberMisscheduled == 0
	})

	// A pod relabelled out of the selector is released and replaced.
	var rel api.Pod
	relName := e.podsByNode("agent")["n4"][0].Name
	if err := e.c.Get(ctx, podsRes, ns, relName, &rel); err != nil {
		t.Fatal(err)
	}
	rel.Labels["app"] = "debug"
	if err := e.c.Update(ctx, podsRes, ns, &rel); err != nil {
		t.Fatal(err)
	}
	e.waitFor("n4's relabelled pod released and replaced", 30*time.Second, func() bool {
		var p api.Pod
		if err := e.c.Get(ctx, podsRes, ns, relName, &p); err != nil || api.ControllerRef(&p.ObjectMeta) != nil {
			return false
		}
		m := e.podsByNode("agent")
		return len(m["n4"]) == 1 && m["n4"][0].Name != relName
	})

	// A pod deleted by hand comes back.
	old := e.podsByNode("agent")["n1"][0]
	if err := e.c.Delete(ctx, podsRes, ns, old.Name, client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("n1's pod replaced", 30*time.Second, func() bool {
		m := e.podsByNode("agent")
		return len(m["n1"]) == 1 && m["n1"][0].UID != old.UID
	})
}

func TestDaemonSetRollingUpdate(t *testing.T) {
	e := startEnv(t)
	nodes := []string{"n1", "n2", "n3", "n4"}
	for _, n := range nodes {
		e.addNode(n)
	}
	e.createDS("agent")
	e.waitFor("a pod on every node", 30*time.Second, func() bool { return e.onePodEach("agent", "", nodes...) })
	e.waitFor("every pod available", 30*time.Second, func() bool { return e.getDS("agent").Status.NumberAvailable == 4 })

	// Watch for a moment with two live pods on a node, or more than
	// maxUnavailable (1) nodes without a ready pod, while the update runs.
	stop := make(chan struct{})
	violations := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			m, err := e.livePods("agent")
			if err != nil {
				continue
			}
			down := 0
			for _, n := range nodes {
				if len(m[n]) > 1 {
					select {
					case violations <- fmt.Sprintf("node %s had %d live pods", n, len(m[n])):
					default:
					}
				}
				if len(m[n]) == 0 || !api.IsPodReady(&m[n][0]) {
					down++
				}
			}
			if down > 1 {
				select {
				case violations <- fmt.Sprintf("%d nodes without a ready pod (maxUnavailable 1)", down):
				default:
				}
			}
		}
	})

	e.updateDS("agent", func(ds *api.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	hash, err := daemonset.TemplateHash(e.getDS("agent"))
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor("every pod at the new template", 60*time.Second, func() bool { return e.onePodEach("agent", hash, nodes...) })
	e.waitFor("status updated 4", 30*time.Second, func() bool {
		s := e.getDS("agent").Status
		return s.UpdatedNumberScheduled == 4 && s.NumberAvailable == 4
	})
	close(stop)
	wg.Wait()
	select {
	case v := <-violations:
		t.Fatal(v)
	default:
	}
	for _, ps := range e.podsByNode("agent") {
		if ps[0].Spec.Containers[0].Image != "agent:2" {
			t.Fatalf("pod %s runs %s", ps[0].Name, ps[0].Spec.Containers[0].Image)
		}
	}
}

var revsRes = api.Lookup(resources, "apps/v1", "controllerrevisions")

// revisions are the DaemonSet's ControllerRevisions, oldest first, as
// "<hash>:<revision>".
func (e *env) revisions(name string) []string {
	var list api.ControllerRevisionList
	if err := e.c.List(context.Background(), revsRes, ns, client.ListOptions{}, &list); err != nil {
		e.fatalf("list revisions: %v", err)
	}
	ds := e.getDS(name)
	var revs []*api.ControllerRevision
	for i := range list.Items {
		if ref := api.ControllerRef(&list.Items[i].ObjectMeta); ref != nil && ref.UID == ds.UID {
			revs = append(revs, &list.Items[i])
		}
	}
	slices.SortFunc(revs, func(a, b *api.ControllerRevision) int { return int(a.Revision - b.Revision) })
	var out []string
	for _, r := range revs {
		out = append(out, fmt.Sprintf("%s:%d", r.Labels[api.LabelControllerRevisionHash], r.Revision))
	}
	return out
}

// TestDaemonSetRevisions: every template a DaemonSet had is a
// ControllerRevision named <ds>-<hash>, numbered in order; what `kubectl
// rollout undo ds` does (the revision's data as a strategic merge patch
// of the DaemonSet) brings the pods back to that template and renumbers
// its revision as the newest instead of making another; the history is
// cut to revisionHistoryLimit; deleting the DaemonSet deletes them all.
func TestDaemonSetRevisions(t *testing.T) {
	e := startEnv(t)
	e.addNode("n1")
	e.createDS("agent", func(ds *api.DaemonSet) { limit := int32(2); ds.Spec.RevisionHistoryLimit = &limit })
	hashes := []string{}
	for i, image := range []string{"agent:1", "agent:2", "agent:3"} {
		if i > 0 {
			e.updateDS("agent", func(ds *api.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = image })
		}
		h, err := daemonset.TemplateHash(e.getDS("agent"))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
		e.waitFor("the pod at "+image, 30*time.Second, func() bool { return e.onePodEach("agent", h, "n1") })
	}
	want := []string{hashes[0] + ":1", hashes[1] + ":2", hashes[2] + ":3"}
	e.waitFor(fmt.Sprintf("revisions %v", want), 30*time.Second, func() bool { return slices.Equal(e.revisions("agent"), want) })
	var r1 api.ControllerRevision
	if err := e.c.Get(context.Background(), revsRes, ns, "agent-"+hashes[0], &r1); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Patch(context.Background(), dsRes, ns, "agent", client.StrategicMergePatchType, r1.Data, nil); err != nil {
		t.Fatal(err)
	}
	if img := e.getDS("agent").Spec.Template.Spec.Containers[0].Image; img != "agent:1" {
		t.Fatalf("after the undo patch the template runs %s", img)
	}
	e.waitFor("the pod back at agent:1", 30*time.Second, func() bool { return e.onePodEach("agent", hashes[0], "n1") })
	want = []string{hashes[1] + ":2", hashes[2] + ":3", hashes[0] + ":4"}
	e.waitFor(fmt.Sprintf("revisions %v", want), 30*time.Second, func() bool { return slices.Equal(e.revisions("agent"), want) })

	e.updateDS("agent", func(ds *api.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "agent:4" })
	h4, _ := daemonset.TemplateHash(e.getDS("agent"))
	e.waitFor("the pod at agent:4", 30*time.Second, func() bool { return e.onePodEach("agent", h4, "n1") })
	want = []string{hashes[2] + ":3", hashes[0] + ":4", h4 + ":5"} // limit 2 besides the current
	e.waitFor(fmt.Sprintf("revisions %v", want), 30*time.Second, func() bool { return slices.Equal(e.revisions("agent"), want) })

	uid := e.getDS("agent").UID
	if err := e.c.Delete(context.Background(), dsRes, ns, "agent", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the revisions collected", 30*time.Second, func() bool {
		var list api.ControllerRevisionList
		if err := e.c.List(context.Background(), revsRes, ns, client.ListOptions{}, &list); err != nil {
			return false
		}
		for _, r := range list.Items {
			if ref := api.ControllerRef(&r.ObjectMeta); ref != nil && ref.UID == uid {
				return false
			}
		}
		return true
	})
}
