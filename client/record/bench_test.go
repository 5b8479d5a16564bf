package record

import (
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// BenchmarkEventf is the caller's cost of one event (built and queued; the
// queue is drained by a reader standing in for Run).
func BenchmarkEventf(b *testing.B) {
	r := newRecorder(newFakeWriter(), "bench", nil)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-r.incoming:
			case <-done:
				return
			}
		}
	}()
	defer close(done)
	pod := testPod()
	b.ReportAllocs()
	for b.Loop() {
		r.Eventf(pod, api.EventTypeNormal, "SuccessfulCreate", "create Pod %s in StatefulSet %s successful", "web-0", "web")
	}
	if r.Dropped() > 0 {
		b.Logf("dropped %d", r.Dropped())
	}
}
