package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// BenchmarkUpdateParallel measures group commit with fsync on: many
// goroutines each commit 2-key transactions. txn/commit is the mean number
// of transactions that shared one disk commit.
func BenchmarkUpdateParallel(b *testing.B) {
	s := storetest.MustOpenBoltAt(b, filepath.Join(b.TempDir(), "bench.db"), store.BoltOptions{})
	var commits atomic.Int64
	store.SetCommitHook(s, func(int64) { commits.Add(1) })
	ctx := testCtx(b)
	var next atomic.Int64
	value := make([]byte, 256)
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			if _, err := s.Update(ctx, func(tx store.Txn) error {
				if err := tx.Put(fmt.Sprintf("/bench/a/%d", n), value); err != nil {
					return err
				}
				return tx.Put(fmt.Sprintf("/bench/b/%d", n%1000), value)
			}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if c := commits.Load(); c > 0 {
		b.ReportMetric(float64(next.Load())/float64(c), "txn/commit")
	}
}

// BenchmarkUpdateSerial is BenchmarkUpdateParallel with one writer: one
// fsync per transaction, the baseline that group commit improves on.
func BenchmarkUpdateSerial(b *testing.B) {
	s := storetest.MustOpenBoltAt(b, filepath.Join(b.TempDir(), "bench.db"), store.BoltOptions{})
	ctx := testCtx(b)
	value := make([]byte, 256)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		if _, err := s.Update(ctx, func(tx store.Txn) error {
			if err := tx.Put(fmt.Sprintf("/bench/a/%d", n), value); err != nil {
				return err
			}
			return tx.Put(fmt.Sprintf("/bench/b/%d", n%1000), value)
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWatchLatency measures the time from a disk commit to its event's
// arrival at each of 100 watchers, with fsync on and 4 concurrent writers.
// p50-µs and p99-µs are over every (event, watcher) pair.
func BenchmarkWatchLatency(b *testing.B) {
	const watchers, writers = 100, 4
	s := storetest.MustOpenBoltAt(b, filepath.Join(b.TempDir(), "bench.db"), store.BoltOptions{WatchBuffer: 1 << 20})
	ctx := testCtx(b)
	base, _ := s.Revision(ctx)

	// committedAt[rev-base] is the time the commit of rev returned. The
	// commit hook writes it before the events are published, and a watch
	// channel receive orders the read after that write.
	committedAt := make([]time.Time, b.N+1)
	last := base
	store.SetCommitHook(s, func(rev int64) {
		now := time.Now()
		for r := last + 1; r <= rev; r++ {
			committedAt[r-base] = now
		}
		last = rev
	})

	lat := make([][]time.Duration, watchers)
	var wg sync.WaitGroup
	for w := range watchers {
		ch, err := s.Watch(ctx, "/lat/", 0, store.WatchOptions{})
		if err != nil {
			b.Fatal(err)
		}
		lat[w] = make([]time.Duration, 0, b.N)
		wg.Go(func() {
			for len(lat[w]) < b.N {
				ev, ok := <-ch
				if !ok || ev.Type != store.EventPut {
					b.Errorf("watcher %d: got %+v (open %v)", w, ev, ok)
					return
				}
				lat[w] = append(lat[w], time.Since(committedAt[ev.Revision-base]))
			}
		})
	}

	b.ResetTimer()
	var next atomic.Int64
	var writersWG sync.WaitGroup
	for range writers {
		writersWG.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				if _, err := s.Update(ctx, func(tx store.Txn) error {
					return tx.Put(fmt.Sprintf("/lat/%d", n%100), []byte("v"))
				}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	wg.Wait()
	b.StopTimer()

	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkList10k lists 10,000 keys of 100 bytes from one snapshot.
func BenchmarkList10k(b *testing.B) {
	const n = 10000
	s := storetest.MustOpenBolt(b)
	ctx := testCtx(b)
	value := make([]byte, 100)
	for start := 0; start < n; start += 1000 {
		if _, err := s.Update(ctx, func(tx store.Txn) error {
			for i := start; i < start+1000; i++ {
				if err := tx.Put(fmt.Sprintf("/registry/pods/default/pod-%05d", i), value); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	put(b, s, "/registry/services/default/svc", "outside the prefix")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := s.List(ctx, "/registry/pods/", store.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Items) != n {
			b.Fatalf("listed %d keys, want %d", len(res.Items), n)
		}
	}
}

// BenchmarkOpen13k opens a closed store of 13,584 keys of 1.5 KB, every
// one still in the watch history (the most the open-time checks read), and
// reports what each part of the open costs: verify-ms (VerifyFile), open-ms
// (OpenBolt, which includes VerifyFile and bbolt's own walk of the file)
// and check-ms (Check: bbolt's page checks and the store's invariants).
func BenchmarkOpen13k(b *testing.B) {
	const n = 13584
	path := filepath.Join(b.TempDir(), "s.db")
	ctx := testCtx(b)
	s, err := store.OpenBolt(ctx, path, store.BoltOptions{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 1500)
	for start := 0; start < n; start += 500 {
		if _, err := s.Update(ctx, func(tx store.Txn) error {
			for i := start; i < min(start+500, n); i++ {
				if err := tx.Put(fmt.Sprintf("/registry/services/ns-%02d/svc-%05d", i%50, i), value); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	var verify, open, check time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := store.VerifyFile(path); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		s, err := store.OpenBolt(ctx, path, store.BoltOptions{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := s.Check(ctx); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		verify, open, check = verify+t1.Sub(t0), open+t2.Sub(t1), check+t3.Sub(t2)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(verify), "verify-ms")
	b.ReportMetric(ms(open), "open-ms")
	b.ReportMetric(ms(check), "check-ms")
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	}
}
