package endpointslice

import (
	"testing"
	"time"
)

// BenchmarkReconcile5000Flip measures the compute step alone for a
// 5,000-pod Service (50 slices) where one pod flips Ready per call, with
// the controller's Memo.
// Run: go test -run '^$' -bench Reconcile5000 ./controller/endpointslice/
func BenchmarkReconcile5000Flip(b *testing.B) {
	svc := testService()
	pods := manyPods(5000)
	f := newFakeAPI()
	var memo Memo
	f.apply(b, Reconcile(Input{Service: svc, Pods: pods, Memo: &memo}))
	existing := f.list()
	if len(existing) != 50 {
		b.Fatalf("%d slices", len(existing))
	}
	ready := make([]bool, len(pods))
	for i := range ready {
		ready[i] = true
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		i := (n * 97) % len(pods)
		ready[i] = !ready[i]
		pods[i] = testPod(pods[i].Name, pods[i].Status.PodIP, ready[i])
		plan := Reconcile(Input{Service: svc, Pods: pods, Slices: existing, Memo: &memo, TriggerTime: time.Now()})
		if len(plan.Update) != 1 || len(plan.Create)+len(plan.Delete) != 0 {
			b.Fatalf("plan %d/%d/%d", len(plan.Create), len(plan.Update), len(plan.Delete))
		}
		// Flip back in the next round against the unchanged slices.
		ready[i] = !ready[i]
		pods[i] = testPod(pods[i].Name, pods[i].Status.PodIP, ready[i])
		n++
	}
}
