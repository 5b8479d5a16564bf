package hardening

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	// patchMinWrites is the fewest writes a p99 is taken over.
	patchMinWrites = 50
	// patchBaseline is how long the loop runs alone first, and the least
	// it runs during the big patches.
	patchBaseline = 2 * time.Second
	// patchMaxRounds bounds the rounds of big patches, patchTimeout each
	// patch.
	patchMaxRounds = 8
	patchTimeout   = 15 * time.Second
	// patchP99 bounds the loop's p99 latency during the big patches, when
	// the machine is quiet enough to tell: a load average within the CPU
	// count and the loop alone at a p99 within patchQuietP99. With fewer
	// than patchCPUs CPUs the bound is patchSmallP99 (see the test).
	patchP99      = 50 * time.Millisecond
	patchSmallP99 = 100 * time.Millisecond
	patchCPUs     = 4
	patchQuietP99 = 15 * time.Millisecond
	// patchStallP99 bounds it always: a stalled commit loop (16.9 s
	// before the merge was made linear and moved out of it) fails it on
	// any machine, a busy one does not.
	patchStallP99 = 2 * time.Second
	// patchTooMany conditions make a Node bigger than the stored-object
	// limit (1.7 MB encoded); patchFits make a big one that fits (430 kB),
	// whose merge alone took a second in the commit loop before.
	patchTooMany = 20000
	patchFits    = 5000
)

// TestPatchBigListDoesNotStallWrites: a node patching its own status with
// a huge condition list must not stall every other write. The merge is
// linear and runs outside the store's commit loop, and an object over the
// stored-object limit is refused with 413. Lease renewals and Event
// creates, written on a fixed schedule meanwhile, keep a p99 latency
// under 50 ms. Before, their p99 was 15 s (the length of the wait).
//
// The patches, the loop and the server share the test's CPUs with
// whatever else runs. On a busy machine (a load average over the CPU
// count when the test starts, or the loop alone already at a p99 over 15 ms) the writes wait
// for CPU, not for the server, even while a patch that never reaches the
// store is computed, so only the 2 s bound, which any stall of the commit
// loop fails, is checked. On two CPUs the big patch's own computation and
// its garbage collection take about one of them, and each of a write's
// goroutine hand-offs may wait for a time slice: a quiet 2-CPU machine
// measured a p99 of 25-50 ms, so there the bound is 100 ms. The mechanism
// itself is checked without timing by TestPatchComputedOutsideCommitLoop
// and TestStrategicMergeLargeListIsLinear.
func TestPatchBigListDoesNotStallWrites(t *testing.T) {
	loadAvg, haveLoad := patchLoadAverage() // before the test's own load
	ts := startServer(t, servertest.Options{DisabledControllers: []string{"nodelifecycle"}})
	c := ts.Client()
	// The big patches on a connection of their own, as a node has.
	node, err := ts.Server().Client()
	if err != nil {
		t.Fatal(err)
	}
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
	// The loop alone, after its first writes (connection set-up).
	time.Sleep(200 * time.Millisecond)
	load.take()
	time.Sleep(patchBaseline)
	base := load.take()

	status, patched := patchRounds(ctx, t, node, nodes)
	lat := load.take()
	errs := load.stop()
	lat = append(lat, load.take()...) // the writes stop cut short
	if patched {
		var n api.Node
		if err := c.Get(ctx, nodes, "", "patch-big", &n); err != nil {
			t.Fatal(err)
		}
		if len(n.Status.Conditions) != patchFits || n.Status.Conditions[patchFits-1].Status != api.ConditionStatus(status) {
			t.Errorf("patched node has %d conditions, want %d with status %s", len(n.Status.Conditions), patchFits, status)
		}
	}
	for _, err := range errs {
		t.Errorf("concurrent write: %v", err)
	}
	baseP99 := patchP99Of(t, "alone", base)
	p99 := patchP99Of(t, "during the big patches", lat)
	if p99 > patchStallP99 {
		t.Errorf("concurrent writes' p99 latency is %v during the big patches, want under %v", p99, patchStallP99)
	}
	bound := patchP99
	if runtime.GOMAXPROCS(0) < patchCPUs {
		bound = patchSmallP99
	}
	switch {
	case haveLoad && loadAvg > float64(runtime.NumCPU()):
		t.Logf("the %v bound is not checked: the load average is %.1f on %d CPUs, the machine is too busy to tell",
			bound, loadAvg, runtime.NumCPU())
	case baseP99 > patchQuietP99:
		t.Logf("the %v bound is not checked: the loop alone already has a p99 of %v (over %v), the machine is too busy to tell",
			bound, baseP99, patchQuietP99)
	case p99 > bound:
		t.Errorf("concurrent writes' p99 latency is %v during the big patches, want under %v (%d CPUs)", p99, bound, runtime.GOMAXPROCS(0))
	}
}

// patchLoadAverage is the one-minute load average, where the system
// reports one (/proc/loadavg).
func patchLoadAverage() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// patchP99Of is the p99 of the latencies of one phase of the loop.
func patchP99Of(t *testing.T, phase string, lat []time.Duration) time.Duration {
	t.Helper()
	if len(lat) < patchMinWrites {
		// Too few to tell a p99 (as when the writes stalled); the
		// slowest still counts.
		t.Errorf("only %d concurrent writes ran %s, want at least %d", len(lat), phase, patchMinWrites)
		if len(lat) == 0 {
			return 0
		}
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("concurrent writes %s: %d, p50 %v, p99 %v, max %v", phase, len(lat), lat[len(lat)/2], p99, lat[len(lat)-1])
	return p99
}

// patchRounds sends rounds of one patch over the limit and one that fits,
// for at least patchBaseline, and returns the status the last one set; ok
// is false when a patch failed (the test has failed then).
func patchRounds(ctx context.Context, t *testing.T, node *client.Client, nodes *api.ResourceInfo) (status string, ok bool) {
	t.Helper()
	tooMany := patchConditions(patchTooMany, "True")
	send := func(body []byte) error {
		ctx, cancel := context.WithTimeout(ctx, patchTimeout)
		defer cancel()
		return node.Patch(ctx, nodes, "", "patch-big", client.StrategicMergePatchType, body, nil, "status")
	}
	phase := time.Now()
	for round := 0; round < patchMaxRounds && (round < 2 || time.Since(phase) < patchBaseline); round++ {
		start := time.Now()
		err := send(tooMany)
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("patch with %d conditions: got %v after %v, want 413 RequestEntityTooLarge", patchTooMany, err, time.Since(start))
			return "", false
		}
		t.Logf("patch with %d conditions: %v in %v", patchTooMany, err, time.Since(start))

		start, status = time.Now(), []string{"True", "False"}[round%2]
		if err := send(patchConditions(patchFits, status)); err != nil {
			t.Errorf("patch with %d conditions: %v after %v", patchFits, err, time.Since(start))
			return "", false
		}
		t.Logf("patch with %d conditions (%s): %v", patchFits, status, time.Since(start))
	}
	return status, true
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
					// A slot stop found waiting: it waited at least this.
					l.mu.Lock()
					l.lat = append(l.lat, time.Since(at))
					l.mu.Unlock()
					continue
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
				switch {
				case err == nil:
					l.lat = append(l.lat, d)
				case ctx.Err() != nil:
					// Cut short by stop: it waited at least d.
					l.lat = append(l.lat, d)
				default:
					l.errs = append(l.errs, err)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// take returns the latencies of the writes that ended since the last
// take.
func (l *patchLoad) take() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	lat := l.lat
	l.lat = nil
	return lat
}

// stop ends the loop and returns the errors of the writes that failed; the
// latencies of the writes it cut short are left for take.
func (l *patchLoad) stop() []error {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errs
}
