package scheduler

import (
	"fmt"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// BenchmarkDecideAntiAffinitySpread times the decisions alone (no API):
// 100 nodes in 4 zones, 100 owners of 100 pods with hostname
// anti-affinity and a zone spread, each decision assumed before the next.
// Reports decisions/s. Run:
//
//	go test -run '^$' -bench DecideAntiAffinitySpread -benchtime 1x ./scheduler
func BenchmarkDecideAntiAffinitySpread(b *testing.B) {
	const nodes, owners = 100, 100
	for range b.N {
		b.StopTimer()
		var ns []*api.Node
		for i := range nodes {
			ns = append(ns, node(fmt.Sprintf("n%03d", i), zoned(fmt.Sprintf("z%d", i%4)), func(n *api.Node) {
				n.Status.Allocatable["cpu"] = "32"
			}))
		}
		c := cacheWith(ns, nil)
		var infos []*podInfo
		for i := range owners * nodes {
			app := fmt.Sprintf("app-%d", i%owners)
			sel := appSel(app)
			p := pod(fmt.Sprintf("p%05d", i), labeled("app", app), requests("100m", ""),
				podAff(true, true, 0, api.PodAffinityTerm{LabelSelector: sel, TopologyKey: api.LabelHostname}),
				func(p *api.Pod) {
					p.Spec.TopologySpreadConstraints = []api.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: api.LabelTopologyZone, WhenUnsatisfiable: api.DoNotSchedule, LabelSelector: sel}}
				})
			infos = append(infos, newPodInfo(p))
		}
		b.StartTimer()
		for _, info := range infos {
			if d := c.scheduleAndAssume(info); d.node == nil {
				b.Fatalf("%s fits nowhere: %s", info.key, d.message())
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(len(infos))/b.Elapsed().Seconds(), "decisions/s")
	}
}

// BenchmarkDecideDefault times the decisions alone for the default
// plugins: 100 nodes, 10,000 pods of 10 owners requesting 100m each, no
// affinity or spread. Reports decisions/s. Run:
//
//	go test -run '^$' -bench DecideDefault -benchtime 1x ./scheduler
func BenchmarkDecideDefault(b *testing.B) {
	const nodes, pods, owners = 100, 10000, 10
	for range b.N {
		b.StopTimer()
		var ns []*api.Node
		for i := range nodes {
			ns = append(ns, node(fmt.Sprintf("n%03d", i), func(n *api.Node) { n.Status.Allocatable["cpu"] = "32" }))
		}
		c := cacheWith(ns, nil)
		infos := make([]*podInfo, 0, pods)
		for i := range pods {
			infos = append(infos, newPodInfo(pod(fmt.Sprintf("p%05d", i), requests("100m", ""), ownedBy(fmt.Sprintf("rs%d", i%owners)))))
		}
		b.StartTimer()
		for _, info := range infos {
			if d := c.scheduleAndAssume(info); d.node == nil {
				b.Fatalf("%s fits nowhere: %s", info.key, d.message())
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(len(infos))/b.Elapsed().Seconds(), "decisions/s")
	}
}
