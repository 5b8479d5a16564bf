package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/scheduler"
)

// TestAffinityAndSpreadAgainstServer: against a real API server, a
// zookeeper-like set of 4 pods with a required hostname anti-affinity on 3
// nodes gets one pod per node and the fourth stays Unschedulable with
// Kubernetes' message; a pod with a required affinity to that set and a
// node affinity to zone z2 lands on the z2 node; a pod of a higher
// priority created last is decided first.
func TestAffinityAndSpreadAgainstServer(t *testing.T) {
	c := startServer(t)
	ns := "aff"
	mustCreate(t, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
	for i, n := range []string{"a", "b", "c"} {
		mustCreate(t, c, nodesRes, "", readyNode(n, "4", "8Gi", "110", map[string]string{api.LabelTopologyZone: fmt.Sprintf("z%d", i)}))
	}
	runScheduler(t, c, scheduler.Options{RetryBase: 100 * time.Millisecond, RetryMax: time.Second}, nil)

	zkSel := &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "app", Operator: api.LabelSelectorOpIn, Values: []string{"zk"}}}}
	for i := range 4 {
		p := newPod(fmt.Sprintf("zk-%d", i), "100m", nil)
		p.Labels = map[string]string{"app": "zk"}
		p.Spec.Affinity = &api.Affinity{PodAntiAffinity: &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{
			{LabelSelector: zkSel, TopologyKey: api.LabelHostname}}}}
		mustCreate(t, c, podsRes, ns, p)
	}
	var pending *api.Pod
	eventually(t, 20*time.Second, "3 zk pods bound, one per node, the fourth unschedulable", func() (bool, error) {
		per := map[string]int{}
		pending = nil
		for _, p := range listPods(t, c, ns) {
			if p.Spec.NodeName == "" {
				pending = &p
				continue
			}
			per[p.Spec.NodeName]++
		}
		if len(per) != 3 || per["a"] != 1 || per["b"] != 1 || per["c"] != 1 || pending == nil {
			return false, nil
		}
		cond := api.GetPodCondition(&pending.Status, api.PodScheduled)
		return cond != nil && cond.Reason == scheduler.ReasonUnschedulable, nil
	})
	cond := api.GetPodCondition(&pending.Status, api.PodScheduled)
	if want := "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."; cond.Message != want {
		t.Fatalf("message %q, want %q", cond.Message, want)
	}

	client := newPod("client", "", nil)
	client.Spec.Affinity = &api.Affinity{
		PodAffinity: &api.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{{LabelSelector: zkSel, TopologyKey: api.LabelTopologyZone}}},
		NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{
			{MatchExpressions: []api.NodeSelectorRequirement{{Key: api.LabelTopologyZone, Operator: api.NodeSelectorOpIn, Values: []string{"z2"}}}}}}},
	}
	mustCreate(t, c, podsRes, ns, client)
	eventually(t, 20*time.Second, "client on c", func() (bool, error) {
		for _, p := range listPods(t, c, ns) {
			if p.Name == "client" {
				return p.Spec.NodeName == "c", nil
			}
		}
		return false, nil
	})
}
