package endpointslice_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// BenchmarkFlip5000 measures one pod of a 5,000-pod Service flipping
// Ready against a real server (bbolt, HTTPS on 127.0.0.1), the test
// writing pod status as a node would:
//
//   - slices-written/flip: slice writes (watch events) per flip; the
//     goal is exactly 1;
//   - bytes/flip and bytes-all-slices: bytes of the slices written per
//     flip, against the bytes of every slice of the Service (objects as
//     stored and sent on the watch); write-ratio is their quotient, goal
//     at most 1/40 (0.025);
//   - p50-ms, p99-ms, max-ms: from just before the pod status PUT is sent
//     to the arrival, on a watch, of the slice update holding the new
//     condition (the status write itself is included);
//     p99-after-put-ms counts from the PUT's response instead.
//
// Sub-benchmarks run with the store's fsync on (as a real server) and off.
// Run: go test -run '^$' -bench Flip5000 -benchtime 300x ./controller/endpointslice/
func BenchmarkFlip5000(b *testing.B) {
	for _, tc := range []struct {
		name  string
		fsync bool
	}{{"fsync", true}, {"nosync", false}} {
		b.Run(tc.name, func(b *testing.B) { benchFlip(b, 5000, tc.fsync) })
	}
}

func benchFlip(b *testing.B, n int, fsync bool) {
	e := startEnv(b, envOptions{fsync: fsync, workers: 2})
	e.createNamespace("big")
	e.createService("big", "big-app", map[string]string{"app": "big"})
	pods := e.createPods("big", "big", n, map[string]string{"app": "big"}, allReady)
	e.startController()
	want := make(map[string]bool, n)
	for _, p := range pods {
		want[p.Name] = true
	}
	all := e.waitEndpoints("big", "big-app", want, 100)
	e.waitIdle()
	var total int
	for i := range all {
		data, err := json.Marshal(&all[i])
		if err != nil {
			b.Fatal(err)
		}
		total += len(data)
	}

	w := e.watchSlices("big")
	var lat, latWritten []time.Duration
	flips, next := 0, 0
	for b.Loop() {
		pod := pods[(flips*97)%n] // spread over the slices
		start := time.Now()
		if err := e.flip(pod); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		i := w.waitEvent(b, next, 30*time.Second, holds(pod.Name, api.IsPodReady(pod)))
		at := w.snapshot()[i].at
		lat = append(lat, at.Sub(start))
		latWritten = append(latWritten, max(0, at.Sub(written)))
		next = i + 1
		flips++
	}
	b.StopTimer()

	// Barrier: once the controller is idle, one more flip; every write
	// the measured flips caused is in the stream before its update.
	e.waitIdle()
	last := pods[(flips*97+1)%n]
	if err := e.flip(last); err != nil {
		b.Fatal(err)
	}
	barrier := w.waitEvent(b, next, 30*time.Second, holds(last.Name, api.IsPodReady(last)))
	evs := w.snapshot()[:barrier]
	written, bytes := 0, 0
	for _, ev := range evs {
		written++
		bytes += ev.size
		if ev.typ != client.EventModified {
			b.Errorf("unexpected %s of slice %s", ev.typ, ev.slice.Name)
		}
	}
	slices.Sort(lat)
	slices.Sort(latWritten)
	pct := func(lat []time.Duration, p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	perFlip := float64(written) / float64(flips)
	b.ReportMetric(perFlip, "slices-written/flip")
	b.ReportMetric(float64(bytes)/float64(flips), "bytes/flip")
	b.ReportMetric(float64(total), "bytes-all-slices")
	b.ReportMetric(float64(bytes)/float64(flips)/float64(total), "write-ratio")
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(pct(latWritten, 0.99), "p99-after-put-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(all)), "slices")
	if perFlip != 1 {
		b.Errorf("%d slice writes for %d flips, want exactly one each", written, flips)
	}
}
