package hardening

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// Bounds of TestPatchBigListDoesNotStallWrites.
const (
	// patchWriteEvery is the schedule of the concurrent writes; each one's
	// latency counts from its slot, so a write queued behind a stalled
	// commit loop counts the whole stall (no coordinated omission).
	patchWriteEvery = 10 * time.Millisecond
	// patchWriters bounds the writes in flight.
	patchWriters = 8
	// patchMaxWrites bounds the loop (15 s of slots).
	patchMaxWrites = 1500
	// patchMinWrites is the fewest writes the p99 is taken over.
	patchMinWrites = 100
	// patchP99 is the bound on the concurrent writes' p99 latency.
	patchP99 = 50 * time.Millisecond
	// patchTooMany conditions make a Node bigger than the stored-object
	// limit; patchFits make one that fits (about 1.3 MB stored).
	patchTooMany = 20000
	patchFits    = 15000
)

// TestPatchBigListDoesNotStallWrites: a node patching its own status with
// a huge condition list must not stall every other write. The merge is
// linear, runs outside the store's commit loop, and an object over the
// stored-object limit is refused with 413; meanwhile Lease renewals and
// Event creates, written on a fixed schedule, keep a p99 under 50 ms.
func TestPatchBigListDoesNotStallWrites(t *testing.T) {
	ts := startServer(t, servertest.Options{DisabledControllers: []string{"nodelifecycle"}})
	c := ts.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := api.Resources()
	nodes := api.Lookup(res, "v1", "nodes")
	leases := api.Lookup(res, "coordination.k8s.io/v1", "leases")
	events := api.Lookup(res, "v1", "events")

	if err := c.Create(ctx, nodes, "", &api.Node{ObjectMeta: api.ObjectMeta{Name: "patch-big"}}); err != nil {
		t.Fatal(err)
	}
	holder := "patch-other"
	if err := c.Create(ctx, leases, "default", &api.Lease{
		ObjectMeta: api.ObjectMeta{Name: "patch-other"},
		Spec:       api.LeaseSpec{HolderIdentity: &holder},
	}); err != nil {
		t.Fatal(err)
	}

	load := patchStartLoad(ctx, c, leases, events)

	// Let the loop run alone for a moment, so that its first writes
	// (connection set-up) are not what the bound measures.
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	err := c.Patch(ctx, nodes, "", "patch-big", client.StrategicMergePatchType,
		patchConditions(patchTooMany, "True"), nil, "status")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("patch with %d conditions: got %v, want 413 RequestEntityTooLarge", patchTooMany, err)
	}
	t.Logf("patch with %d conditions: %v in %v", patchTooMany, err, time.Since(start))

	for _, status := range []string{"True", "False"} {
		start := time.Now()
		var n api.Node
		if err := c.Patch(ctx, nodes, "", "patch-big", client.StrategicMergePatchType,
			patchConditions(patchFits, status), &n, "status"); err != nil {
			t.Fatalf("patch with %d conditions: %v", patchFits, err)
		}
		if len(n.Status.Conditions) != patchFits || n.Status.Conditions[patchFits-1].Status != api.ConditionStatus(status) {
			t.Errorf("patched node has %d conditions, want %d with status %s", len(n.Status.Conditions), patchFits, status)
		}
		t.Logf("patch with %d conditions (%s): %v", patchFits, status, time.Since(start))
	}

	lat, errs := load.stop()
	for _, err := range errs {
		t.Errorf("concurrent write: %v", err)
	}
	if len(lat) < patchMinWrites {
		t.Fatalf("only %d concurrent writes ran, want at least %d", len(lat), patchMinWrites)
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("concurrent writes: %d, p50 %v, p99 %v, max %v", len(lat), lat[len(lat)/2], p99, lat[len(lat)-1])
	if p99 > patchP99 {
		t.Errorf("concurrent writes' p99 latency is %v, want under %v", p99, patchP99)
	}
}

// patchConditions is a strategic merge patch of a Node's status that sets
// n conditions of the given status.
func patchConditions(n int, status string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":{"conditions":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"c%05d","status":%q}`, i, status)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// patchLoad is the concurrent write loop of the test: one write per slot
// of patchWriteEvery, alternately a Lease renewal (merge patch) and an
// Event create, by patchWriters workers.
type patchLoad struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	lat    []time.Duration
	errs   []error
}

func patchStartLoad(ctx context.Context, c *client.Client, leases, events *api.ResourceInfo) *patchLoad {
	ctx, cancel := context.WithCancel(ctx)
	l := &patchLoad{cancel: cancel}
	slots := make(chan time.Time, patchMaxWrites)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(slots)
		tick := time.NewTicker(patchWriteEvery)
		defer tick.Stop()
		for range patchMaxWrites {
			select {
			case <-ctx.Done():
				return
			case at := <-tick.C:
				slots <- at
			}
		}
	}()
	for w := range patchWriters {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			i := 0
			for at := range slots {
				if ctx.Err() != nil {
					return
				}
				i++
				var err error
				if i%2 == 0 {
					err = c.Patch(ctx, leases, "default", "patch-other", client.MergePatchType,
						fmt.Appendf(nil, `{"spec":{"leaseTransitions":%d}}`, w*patchMaxWrites+i), nil)
				} else {
					err = c.Create(ctx, events, "default", &api.Event{
						ObjectMeta:     api.ObjectMeta{GenerateName: "patch-"},
						InvolvedObject: api.ObjectReference{Kind: "Node", Name: "patch-other"},
						Reason:         "Probe",
					})
				}
				d := time.Since(at)
				l.mu.Lock()
				if err != nil && ctx.Err() == nil {
					l.errs = append(l.errs, err)
				} else if err == nil {
					l.lat = append(l.lat, d)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// stop ends the loop and returns the latencies of the writes that ran
// and the errors of those that failed.
func (l *patchLoad) stop() ([]time.Duration, []error) {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lat, l.errs
}
