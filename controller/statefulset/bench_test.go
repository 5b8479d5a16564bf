package statefulset

import (
	"github.com/skiff-dev/skiff/api"
	"testing"
)

// BenchmarkComputePlan is one plan of a settled 1,000-pod set in the middle
// of a rolling update (the walk visits every pod).
func BenchmarkComputePlan(b *testing.B) {
	set := testSet(1000, partition(0))
	var ps []*api.Pod
	for i := range 1000 {
		rev := revB
		if i == 0 {
			rev = revA
		}
		ps = append(ps, mkPod(i, rev, "ready"))
	}
	rev := revisions{current: revA, update: revB}
	b.ReportAllocs()
	for b.Loop() {
		plan := computePlan(set, ps, rev, testNow)
		if len(plan.Actions) != 1 {
			b.Fatalf("actions %v", plan.Actions)
		}
	}
}
