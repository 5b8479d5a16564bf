package endpoints_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/controller/endpoints"
	"github.com/skiff-dev/skiff/controller/endpointslice"
)

// BenchmarkEndpointsVsSlicesBytesPerFlip measures what one pod readiness
// flip makes the controllers write to the store, at 5,000 ready pods of
// one Service: the JSON size of the objects each controller writes.
//
//   - endpoints-B/flip: the whole Endpoints, rewritten on every flip. The
//     controller caps it at 1,000 addresses (api.MaxEndpointsAddresses,
//     as Kubernetes), so 4,000 pods are not in it at all.
//   - endpoints-uncapped-B/flip: what the Endpoints would be with all
//     5,000 addresses (the cost the cap avoids, and why Kubernetes
//     deprecated the kind for large Services).
//   - slices-B/flip: the EndpointSlices written (one slice of at most 100
//     endpoints: the one holding the pod).
func BenchmarkEndpointsVsSlicesBytesPerFlip(b *testing.B) {
	const n = 5000
	svc := service("web", httpPort(api.FromInt32(8080)))
	svc.UID = "svc-uid"
	pods := make([]*api.Pod, n)
	for i := range pods {
		pods[i] = pod(fmt.Sprintf("web-%05d", i), fmt.Sprintf("10.%d.%d.%d", 1+i/65536, (i/256)%256, i%256), true)
	}
	size := func(objs ...api.Object) int {
		total := 0
		for _, o := range objs {
			data, err := json.Marshal(o)
			if err != nil {
				b.Fatal(err)
			}
			total += len(data)
		}
		return total
	}

	// The state before the flip, as stored.
	ep := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: pods}).Create
	ep.ResourceVersion = "1"
	created := endpointslice.Reconcile(endpointslice.Input{Service: svc, Pods: pods, MaxEndpointsPerSlice: 100}).Create
	for i, s := range created {
		s.Name = fmt.Sprintf("web-%05d", i)
		s.ResourceVersion = "1"
		s.UID = fmt.Sprintf("slice-%d", i)
	}
	if len(created) != n/100 {
		b.Fatalf("%d slices, want %d", len(created), n/100)
	}

	// The flip: web-00000 (10.1.0.0, among the 1,000 addresses kept)
	// turns not ready.
	flipped := make([]*api.Pod, n)
	copy(flipped, pods)
	p := api.DeepCopy(pods[0])
	p.Status.Conditions[0].Status = api.ConditionFalse
	flipped[0] = p
	uncapped := &api.Endpoints{ObjectMeta: ep.ObjectMeta}

	var epBytes, uncappedBytes, sliceBytes int
	b.ReportAllocs()
	for b.Loop() {
		plan := endpoints.Reconcile(endpoints.Input{Service: svc, Pods: flipped, Current: ep})
		if plan.Update == nil {
			b.Fatal("the flip wrote no Endpoints")
		}
		epBytes = size(plan.Update)
		uncapped.Subsets, _ = endpoints.Subsets(svc, flipped)
		uncappedBytes = size(uncapped)
		sp := endpointslice.Reconcile(endpointslice.Input{Service: svc, Pods: flipped, Slices: created, MaxEndpointsPerSlice: 100})
		if len(sp.Update) != 1 || len(sp.Create) != 0 || len(sp.Delete) != 0 {
			b.Fatalf("slice plan: %d updates, %d creates, %d deletes", len(sp.Update), len(sp.Create), len(sp.Delete))
		}
		sliceBytes = size(sp.Update[0])
	}
	b.ReportMetric(float64(epBytes), "endpoints-B/flip")
	b.ReportMetric(float64(uncappedBytes), "endpoints-uncapped-B/flip")
	b.ReportMetric(float64(sliceBytes), "slices-B/flip")
}
