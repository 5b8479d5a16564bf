package scheduler

import (
	"reflect"
	"slices"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// node builds a ready node with 4 cpu, 8Gi and 110 pods allocatable.
func node(name string, mods ...func(*api.Node)) *api.Node {
	n := &api.Node{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: api.NodeStatus{
			Allocatable: api.ResourceList{"cpu": "4", "memory": "8Gi", "pods": "110"},
			Conditions:  []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue}},
		},
	}
	for _, m := range mods {
		m(n)
	}
	return n
}

func pod(name string, mods ...func(*api.Pod)) *api.Pod {
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + name},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "i"}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func requests(cpu, mem string) func(*api.Pod) {
	return func(p *api.Pod) {
		r := api.ResourceList{}
		if cpu != "" {
			r["cpu"] = api.Quantity(cpu)
		}
		if mem != "" {
			r["memory"] = api.Quantity(mem)
		}
		p.Spec.Containers[0].Resources.Requests = r
	}
}

func ownedBy(uid string) func(*api.Pod) {
	return func(p *api.Pod) {
		t := true
		p.OwnerReferences = []api.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "o", UID: uid, Controller: &t}}
	}
}

func boundTo(n string) func(*api.Pod) { return func(p *api.Pod) { p.Spec.NodeName = n } }

// cacheWith builds a cache holding nodes and bound pods.
func cacheWith(nodes []*api.Node, pods []*api.Pod) *cache {
	c := newCache()
	for _, n := range nodes {
		c.setNode(n)
	}
	for _, p := range pods {
		c.setBoundPod(p)
	}
	return c
}

func TestFits(t *testing.T) {
	tests := []struct {
		name  string
		node  *api.Node
		bound []*api.Pod
		pod   *api.Pod
		want  []string
	}{
		{name: "fits an empty ready node", node: node("a"), pod: pod("p")},
		{name: "node not ready", node: node("a", func(n *api.Node) { n.Status.Conditions[0].Status = api.ConditionUnknown }),
			pod: pod("p"), want: []string{reasonNotReady}},
		{name: "node without a Ready condition", node: node("a", func(n *api.Node) { n.Status.Conditions = nil }),
			pod: pod("p"), want: []string{reasonNotReady}},
		{name: "cordoned node", node: node("a", func(n *api.Node) { n.Spec.Unschedulable = true }),
			pod: pod("p"), want: []string{reasonUnschedulable}},
		{name: "cordoned node, pod tolerates unschedulable",
			node: node("a", func(n *api.Node) { n.Spec.Unschedulable = true }),
			pod: pod("p", func(p *api.Pod) {
				p.Spec.Tolerations = []api.Toleration{{Key: TaintNodeUnschedulable, Operator: "Exists", Effect: "NoSchedule"}}
			})},
		{name: "untolerated NoSchedule taint",
			node: node("a", func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}} }),
			pod:  pod("p"), want: []string{"node(s) had untolerated taint {dedicated: gpu}"}},
		{name: "untolerated NoExecute taint",
			node: node("a", func(n *api.Node) {
				n.Spec.Taints = []api.Taint{{Key: "node.kubernetes.io/unreachable", Effect: "NoExecute"}}
			}),
			pod: pod("p"), want: []string{"node(s) had untolerated taint {node.kubernetes.io/unreachable: }"}},
		{name: "PreferNoSchedule taint is ignored",
			node: node("a", func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "k", Effect: "PreferNoSchedule"}} }),
			pod:  pod("p")},
		{name: "taint tolerated with Equal",
			node: node("a", func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}} }),
			pod: pod("p", func(p *api.Pod) {
				p.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "gpu", Effect: "NoSchedule"}}
			})},
		{name: "toleration with another value does not tolerate",
			node: node("a", func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}} }),
			pod: pod("p", func(p *api.Pod) {
				p.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Value: "cpu"}}
			}), want: []string{"node(s) had untolerated taint {dedicated: gpu}"}},
		{name: "toleration for another effect does not tolerate",
			node: node("a", func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "k", Effect: "NoSchedule"}} }),
			pod: pod("p", func(p *api.Pod) {
				p.Spec.Tolerations = []api.Toleration{{Key: "k", Operator: "Exists", Effect: "NoExecute"}}
			}), want: []string{"node(s) had untolerated taint {k: }"}},
		{name: "empty key with Exists tolerates everything",
			node: node("a", func(n *api.Node) {
				n.Spec.Taints = []api.Taint{{Key: "a", Effect: "NoSchedule"}, {Key: "b", Value: "x", Effect: "NoExecute"}}
			}),
			pod: pod("p", func(p *api.Pod) { p.Spec.Tolerations = []api.Toleration{{Operator: "Exists"}} })},
		{name: "nodeSelector matches", node: node("a", func(n *api.Node) { n.Labels["disk"] = "ssd" }),
			pod: pod("p", func(p *api.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} })},
		{name: "nodeSelector value differs", node: node("a", func(n *api.Node) { n.Labels["disk"] = "hdd" }),
			pod:  pod("p", func(p *api.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }),
			want: []string{reasonSelector}},
		{name: "nodeSelector label missing", node: node("a"),
			pod:  pod("p", func(p *api.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }),
			want: []string{reasonSelector}},
		{name: "cpu fits exactly", node: node("a"), bound: []*api.Pod{pod("b", boundTo("a"), requests("3", ""))},
			pod: pod("p", requests("1000m", ""))},
		{name: "insufficient cpu", node: node("a"), bound: []*api.Pod{pod("b", boundTo("a"), requests("3500m", ""))},
			pod: pod("p", requests("600m", "")), want: []string{reasonInsufficientCPU}},
		{name: "insufficient memory", node: node("a"), bound: []*api.Pod{pod("b", boundTo("a"), requests("", "7Gi"))},
			pod: pod("p", requests("", "2Gi")), want: []string{reasonInsufficientMem}},
		{name: "insufficient cpu and memory", node: node("a"),
			pod: pod("p", requests("5", "9Gi")), want: []string{reasonInsufficientCPU, reasonInsufficientMem}},
		{name: "terminal pods do not count", node: node("a"),
			bound: []*api.Pod{pod("b", boundTo("a"), requests("4", ""), func(p *api.Pod) { p.Status.Phase = api.PodSucceeded })},
			pod:   pod("p", requests("1", ""))},
		{name: "limits count as requests when requests are absent", node: node("a"),
			pod:  pod("p", func(p *api.Pod) { p.Spec.Containers[0].Resources.Limits = api.ResourceList{"cpu": "5"} }),
			want: []string{reasonInsufficientCPU}},
		{name: "init container request above the containers' sum", node: node("a"),
			pod: pod("p", requests("1", ""), func(p *api.Pod) {
				p.Spec.InitContainers = []api.Container{{Name: "i", Resources: api.ResourceRequirements{Requests: api.ResourceList{"cpu": "4500m"}}}}
			}), want: []string{reasonInsufficientCPU}},
		{name: "pod count limit", node: node("a", func(n *api.Node) { n.Status.Allocatable["pods"] = "2" }),
			bound: []*api.Pod{pod("b1", boundTo("a")), pod("b2", boundTo("a"))},
			pod:   pod("p"), want: []string{reasonTooManyPods}},
		{name: "pods default to 110", node: node("a", func(n *api.Node) { delete(n.Status.Allocatable, "pods") }),
			bound: func() []*api.Pod {
				var out []*api.Pod
				for i := range 110 {
					out = append(out, pod("b"+string(rune('A'+i/26))+string(rune('a'+i%26)), boundTo("a")))
				}
				return out
			}(),
			pod: pod("p"), want: []string{reasonTooManyPods}},
		{name: "allocatable falls back to capacity", node: node("a", func(n *api.Node) {
			n.Status.Allocatable = nil
			n.Status.Capacity = api.ResourceList{"cpu": "500m", "memory": "1Gi"}
		}), pod: pod("p", requests("600m", "")), want: []string{reasonInsufficientCPU}},
		{name: "pod without requests fits a node without cpu or memory", node: node("a", func(n *api.Node) { n.Status.Allocatable = nil }),
			pod: pod("p")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheWith([]*api.Node{tt.node}, tt.bound)
			got := fits(newPodInfo(tt.pod), c.nodes[tt.node.Name])
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("fits = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*api.Node
		bound []*api.Pod
		pod   *api.Pod
		start int
		want  string // node name, "" = none
		msg   string // failure message when want is ""
	}{
		{name: "spread: fewest pods of the owner wins over a less loaded node",
			nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{
				pod("o1", boundTo("a"), ownedBy("rs1")),
				pod("x1", boundTo("b"), ownedBy("rs2")), pod("x2", boundTo("b"), ownedBy("rs2")), pod("x3", boundTo("b"), ownedBy("rs2")),
			},
			pod: pod("p", ownedBy("rs1")), want: "b"},
		{name: "least requested: without an owner the emptier node wins",
			nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{pod("x1", boundTo("a"), requests("1", "1Gi"))},
			pod:   pod("p"), want: "b"},
		{name: "least requested counts non-zero defaults for pods without requests",
			nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{pod("x1", boundTo("b")), pod("x2", boundTo("b"))},
			pod:   pod("p"), want: "a"},
		{name: "equal owner counts fall to least requested",
			nodes: []*api.Node{node("a"), node("b"), node("c")},
			bound: []*api.Pod{
				pod("o1", boundTo("a"), ownedBy("rs1")), pod("o2", boundTo("b"), ownedBy("rs1")),
				pod("o3", boundTo("c"), ownedBy("rs1")), pod("x", boundTo("a"), requests("2", "")),
			},
			pod: pod("p", ownedBy("rs1")), want: "b"},
		{name: "ties go to the first node from start", nodes: []*api.Node{node("a"), node("b"), node("c")},
			pod: pod("p"), start: 2, want: "c"},
		{name: "ties go to the first node from start, wrapping", nodes: []*api.Node{node("a"), node("b"), node("c")},
			pod: pod("p"), start: 0, want: "a"},
		{name: "infeasible nodes are skipped even when emptier",
			nodes: []*api.Node{node("a", func(n *api.Node) { n.Spec.Unschedulable = true }), node("b")},
			bound: []*api.Pod{pod("x1", boundTo("b"), requests("2", ""))},
			pod:   pod("p"), want: "b"},
		{name: "fits nowhere: Kubernetes message",
			nodes: []*api.Node{node("a", func(n *api.Node) { n.Labels["zone"] = "x" }), node("b"), node("c")},
			bound: []*api.Pod{pod("x1", boundTo("b"), requests("4", "")), pod("x2", boundTo("c"), requests("4", ""))},
			pod: pod("p", requests("1", ""), func(p *api.Pod) {
				p.Spec.NodeSelector = map[string]string{"zone": "x"}
				p.Spec.Containers[0].Resources.Requests["cpu"] = "5"
			}),
			msg: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."},
		{name: "fits nowhere: one node, several reasons",
			nodes: []*api.Node{node("a", func(n *api.Node) { n.Status.Allocatable["pods"] = "0" })},
			pod:   pod("p", requests("8", "10Gi")),
			msg:   "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods."},
		{name: "no nodes", pod: pod("p"), msg: "0/0 nodes are available: no nodes available to schedule pods."},
		{name: "pods on deleted nodes are not candidates",
			bound: []*api.Pod{pod("x", boundTo("gone"))},
			pod:   pod("p"), msg: "0/0 nodes are available: no nodes available to schedule pods."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheWith(tt.nodes, tt.bound)
			d := schedule(newPodInfo(tt.pod), c.order, tt.start)
			got := ""
			if d.node != nil {
				got = d.node.name
			}
			if got != tt.want {
				t.Fatalf("node = %q, want %q (failure %q)", got, tt.want, d.message())
			}
			if tt.want == "" && d.message() != tt.msg {
				t.Fatalf("message = %q, want %q", d.message(), tt.msg)
			}
		})
	}
}

// TestScheduleSpreadsReplicas places replicas one after another through
// the assume cache: they spread evenly, and each lands before the next is
// decided.
func TestScheduleSpreadsReplicas(t *testing.T) {
	tests := []struct {
		name     string
		nodes    int
		replicas int
		owners   int
	}{
		{name: "one owner, 3 nodes, 9 replicas", nodes: 3, replicas: 9, owners: 1},
		{name: "one owner, 4 nodes, 10 replicas", nodes: 4, replicas: 10, owners: 1},
		{name: "three owners interleaved, 5 nodes", nodes: 5, replicas: 15, owners: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*api.Node
			for i := range tt.nodes {
				nodes = append(nodes, node(string(rune('a'+i))))
			}
			c := cacheWith(nodes, nil)
			for i := range tt.replicas * tt.owners {
				owner := string(rune('A' + i%tt.owners))
				p := pod("p"+string(rune('a'+i/26))+string(rune('a'+i%26)), ownedBy(owner))
				if d := c.scheduleAndAssume(newPodInfo(p)); d.node == nil {
					t.Fatalf("pod %d unschedulable: %s", i, d.message())
				}
			}
			for o := range tt.owners {
				owner := string(rune('A' + o))
				var counts []int
				for _, n := range nodes {
					counts = append(counts, c.load(n.Name).Owners[owner])
				}
				lo, hi := slices.Min(counts), slices.Max(counts)
				if hi-lo > 1 {
					t.Fatalf("owner %s spread unevenly: %v", owner, counts)
				}
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name                   string
		pod                    *api.Pod
		cpu, mem, nzCPU, nzMem int64
	}{
		{name: "no requests", pod: pod("p"), nzCPU: 100, nzMem: 200 << 20},
		{name: "requests", pod: pod("p", requests("250m", "64Mi")), cpu: 250, mem: 64 << 20, nzCPU: 250, nzMem: 64 << 20},
		{name: "fractional cpu rounds up", pod: pod("p", requests("0.0001", "")), cpu: 1, nzCPU: 1, nzMem: 200 << 20},
		{name: "two containers add up", pod: pod("p", requests("1", "1Gi"), func(p *api.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, api.Container{Name: "d",
				Resources: api.ResourceRequirements{Requests: api.ResourceList{"cpu": "500m"}}})
		}), cpu: 1500, mem: 1 << 30, nzCPU: 1500, nzMem: 1<<30 + 200<<20},
		{name: "explicit zero request is zero for scoring", pod: pod("p", requests("0", "0")), nzCPU: 0, nzMem: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpu, mem, nzCPU, nzMem := podRequests(&tt.pod.Spec)
			if cpu != tt.cpu || mem != tt.mem || nzCPU != tt.nzCPU || nzMem != tt.nzMem {
				t.Fatalf("got cpu=%d mem=%d nzCPU=%d nzMem=%d, want %d %d %d %d", cpu, mem, nzCPU, nzMem, tt.cpu, tt.mem, tt.nzCPU, tt.nzMem)
			}
		})
	}
}
