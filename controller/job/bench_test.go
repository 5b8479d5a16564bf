package job

import (
	"fmt"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// BenchmarkReconcileIndexed is one sync of an Indexed Job of 10,000
// completions, 5,000 done and 1,000 running: the index bookkeeping must
// stay linear in the pods and indexes.
func BenchmarkReconcileIndexed(b *testing.B) {
	const completions, done, running = 10000, 5000, 1000
	j := newJob(func(j *api.Job) {
		j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptrTo(api.IndexedCompletion), ptrTo[int32](completions), ptrTo[int32](2000)
		j.Status.CompletedIndexes = fmt.Sprintf("0-%d", done-1)
		j.Status.Succeeded = done
	})
	var pods []*api.Pod
	for i := done; i < done+running; i++ {
		pods = append(pods, pod(fmt.Sprintf("p%d", i), api.PodRunning, index(i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		p := Reconcile(Input{Job: j, Pods: pods, Now: t0})
		if len(p.Creates) != 1000 || p.Creates[0].Index != done+running {
			b.Fatalf("creates %d, first %v", len(p.Creates), p.Creates[0])
		}
	}
}
