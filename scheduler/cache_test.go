package scheduler

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func TestCacheAssumptions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step func(t *testing.T, c *cache)
	assume := func(name string, mods ...func(*api.Pod)) step {
		return func(t *testing.T, c *cache) {
			if d := c.scheduleAndAssume(newPodInfo(pod(name, mods...))); d.node == nil {
				t.Fatalf("assume %s: %s", name, d.message())
			}
		}
	}
	informerBound := func(name, node string, mods ...func(*api.Pod)) step {
		return func(t *testing.T, c *cache) { c.setBoundPod(pod(name, append(mods, boundTo(node))...)) }
	}
	tests := []struct {
		name      string
		steps     []step
		node      string
		wantPods  int64
		wantCPU   int64
		assumed   int
		confirmed int
	}{
		{name: "assumed pod counts at once",
			steps: []step{assume("p", requests("1", ""))}, node: "a", wantPods: 1, wantCPU: 1000, assumed: 1},
		{name: "informer confirms the assumption without double counting",
			steps: []step{assume("p", requests("1", "")), informerBound("p", "a", requests("1", ""))},
			node:  "a", wantPods: 1, wantCPU: 1000, confirmed: 1},
		{name: "failed bind forgets the assumption",
			steps: []step{assume("p", requests("1", "")), func(t *testing.T, c *cache) { c.forget("ns/p", "uid-p") }},
			node:  "a"},
		{name: "forget does not drop a pod the informer showed bound",
			steps: []step{assume("p"), informerBound("p", "a"), func(t *testing.T, c *cache) { c.forget("ns/p", "uid-p") }},
			node:  "a", wantPods: 1, confirmed: 1},
		{name: "bound assumption expires after its deadline",
			steps: []step{assume("p"), func(t *testing.T, c *cache) {
				c.bindDone("ns/p", "uid-p", t0.Add(time.Second))
				if n := c.expire(t0); n != 0 {
					t.Fatalf("expired %d before the deadline", n)
				}
				if n := c.expire(t0.Add(time.Second)); n != 1 {
					t.Fatalf("expired %d at the deadline, want 1", n)
				}
			}},
			node: "a"},
		{name: "an assumption whose bind is in flight never expires",
			steps: []step{assume("p"), func(t *testing.T, c *cache) {
				if n := c.expire(t0.Add(time.Hour)); n != 0 {
					t.Fatalf("expired %d", n)
				}
			}},
			node: "a", wantPods: 1, assumed: 1},
		{name: "deleted pod leaves",
			steps: []step{informerBound("p", "a", requests("1", "")), func(t *testing.T, c *cache) {
				if !c.removePod("ns/p", "uid-p") {
					t.Fatal("removePod reported nothing freed")
				}
			}},
			node: "a"},
		{name: "delete with another uid keeps the pod",
			steps: []step{informerBound("p", "a"), func(t *testing.T, c *cache) { c.removePod("ns/p", "other") }},
			node:  "a", wantPods: 1, confirmed: 1},
		{name: "pod turning terminal frees its node",
			steps: []step{informerBound("p", "a", requests("1", "")), func(t *testing.T, c *cache) {
				if !c.setBoundPod(pod("p", boundTo("a"), func(p *api.Pod) { p.Status.Phase = api.PodFailed })) {
					t.Fatal("terminal pod not reported freed")
				}
			}},
			node: "a"},
		{name: "deleted node keeps its pods' load for when it comes back",
			steps: []step{informerBound("p", "a", requests("1", "")), func(t *testing.T, c *cache) {
				c.removeNode("a")
				if len(c.order) != 0 {
					t.Fatalf("deleted node still a candidate")
				}
				c.setNode(node("a"))
			}},
			node: "a", wantPods: 1, wantCPU: 1000, confirmed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheWith([]*api.Node{node("a")}, nil)
			for _, s := range tt.steps {
				s(t, c)
			}
			l := c.load(tt.node)
			if l.Pods != tt.wantPods || l.CPU != tt.wantCPU || l.AssumedPods != tt.assumed || l.ConfirmedPods != tt.confirmed {
				t.Fatalf("load %+v, want pods=%d cpu=%d assumed=%d confirmed=%d", l, tt.wantPods, tt.wantCPU, tt.assumed, tt.confirmed)
			}
		})
	}
}

func TestSetNodeRelevance(t *testing.T) {
	tests := []struct {
		name   string
		update func(*api.Node)
		want   bool
	}{
		{name: "heartbeat only", update: func(n *api.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = api.NewTime(time.Unix(5000, 0))
		}, want: false},
		{name: "becomes not ready", update: func(n *api.Node) { n.Status.Conditions[0].Status = api.ConditionFalse }, want: true},
		{name: "cordoned", update: func(n *api.Node) { n.Spec.Unschedulable = true }, want: true},
		{name: "taint added", update: func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "k", Effect: "NoSchedule"}} }, want: true},
		{name: "PreferNoSchedule taint added", update: func(n *api.Node) {
			n.Spec.Taints = []api.Taint{{Key: "k", Effect: "PreferNoSchedule"}}
		}, want: false},
		{name: "label added", update: func(n *api.Node) { n.Labels["disk"] = "ssd" }, want: true},
		{name: "allocatable grows", update: func(n *api.Node) { n.Status.Allocatable["cpu"] = "8" }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache()
			if !c.setNode(node("a")) {
				t.Fatal("a new node is not relevant")
			}
			n := node("a")
			tt.update(n)
			if got := c.setNode(n); got != tt.want {
				t.Fatalf("relevant = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnschedulableBackoff(t *testing.T) {
	t0 := time.Unix(1000, 0)
	u := newUnschedulablePods(time.Second, 4*time.Second)
	gen := u.generation()
	if !u.add("ns/p", t0, gen) || !u.has("ns/p") {
		t.Fatal("not parked")
	}
	if got := u.takeDue(t0.Add(999 * time.Millisecond)); len(got) != 0 {
		t.Fatalf("due before the back-off: %v", got)
	}
	if got := u.takeDue(t0.Add(time.Second)); len(got) != 1 {
		t.Fatalf("not due after 1s: %v", got)
	}
	// Second and later failures double the wait, up to max.
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
		u.add("ns/p", t0, u.generation())
		if got := u.takeDue(t0.Add(want - time.Millisecond)); len(got) != 0 {
			t.Fatalf("failure %d: due before %v", i+2, want)
		}
		if got := u.takeDue(t0.Add(want)); len(got) != 1 {
			t.Fatalf("failure %d: not due at %v", i+2, want)
		}
	}
	// A wake between the decision and the parking: retry at once.
	gen = u.generation()
	u.takeAll()
	if u.add("ns/p", t0, gen) || u.has("ns/p") {
		t.Fatal("parked a pod whose decision raced with a wake")
	}
	u.add("ns/p", t0, u.generation())
	if got := u.takeAll(); len(got) != 1 || u.waiting() != 0 {
		t.Fatalf("wake took %v, %d still waiting", got, u.waiting())
	}
	u.remove("ns/p")
	u.add("ns/p", t0, u.generation())
	if got := u.takeDue(t0.Add(time.Second)); len(got) != 1 {
		t.Fatal("remove did not reset the back-off")
	}
}
