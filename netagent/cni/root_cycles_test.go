package cni_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/cni"
)

// openFDs lists the process's open file descriptors with their targets.
func openFDs(t testing.TB) map[string]string {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out[e.Name()] = target
	}
	return out
}

// TestCreateDeleteCyclesLeakNothing runs 1,000 AddPod/DelPod cycles (50
// with -short) from concurrent workers and checks that nothing is left:
// namespace files, veths on the bridge, host-local reservations, cached
// results, file descriptors, goroutines. Concurrent live pods never
// share an IP.
func TestCreateDeleteCyclesLeakNothing(t *testing.T) {
	cycles := 1000
	if testing.Short() {
		cycles = 50
	}
	const workers = 4
	tn := newTestNode(t, nil)
	tn.setup()
	// One cycle first, so that whatever is opened once and kept (the
	// host-local lock file's directory, the cache directory) is in the
	// baseline.
	tn.add("warm-up")
	tn.del("warm-up")
	tn.assertClean()
	fds := openFDs(t)
	goroutines := runtime.NumGoroutine()

	var (
		mu   sync.Mutex
		live = map[string]string{} // IP -> pod
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := w; i < cycles; i += workers {
				uid := fmt.Sprintf("cycle-%d", i)
				var pn cni.PodNetwork
				if err := tn.do(func() error {
					var err error
					pn, err = tn.net.AddPod(ctx, uid, "default", uid, nil)
					return err
				}); err != nil {
					fail(err)
					return
				}
				ip := pn.IP.String()
				mu.Lock()
				if other, dup := live[ip]; dup || !testPodCIDR.Contains(pn.IP) || pn.IP == tn.net.Gateway() {
					errs = append(errs, fmt.Errorf("%s got %s (held by %q)", uid, ip, other))
				}
				live[ip] = uid
				mu.Unlock()
				// Released before DelPod: after it the IP may be reused.
				mu.Lock()
				delete(live, ip)
				mu.Unlock()
				if err := tn.do(func() error { return tn.net.DelPod(ctx, uid) }); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		t.Error(err)
	}
	t.Logf("%d AddPod+DelPod cycles with %d workers in %v: %v per cycle",
		cycles, workers, elapsed.Round(time.Millisecond), (elapsed / time.Duration(cycles)).Round(time.Microsecond))

	tn.assertClean()
	if got := openFDs(t); len(got) > len(fds) {
		t.Errorf("open file descriptors %v -> %v", fds, got)
	}
	// Goroutines of finished plugin runs may take a moment to exit.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > goroutines {
		t.Errorf("goroutines %d -> %d", goroutines, got)
	}
}

// BenchmarkAddDelPod measures AddPod and DelPod on the real plugins in a
// node namespace: "cycle" is one AddPod+DelPod, "add" and "del" time
// each half alone, "add-hostport" an AddPod with a port mapping.
func BenchmarkAddDelPod(b *testing.B) {
	tn := newTestNode(b, nil)
	tn.setup()
	ctx := context.Background()
	add := func(uid string, ports ...cni.PortMapping) error {
		return tn.do(func() error {
			_, err := tn.net.AddPod(ctx, uid, "default", uid, ports)
			return err
		})
	}
	del := func(uid string) error {
		return tn.do(func() error { return tn.net.DelPod(ctx, uid) })
	}
	b.Run("cycle", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			uid := fmt.Sprintf("bench-%d", i)
			if err := add(uid); err != nil {
				b.Fatal(err)
			}
			if err := del(uid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("add", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			uid := fmt.Sprintf("bench-add-%d", i)
			if err := add(uid); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := del(uid); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("del", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			uid := fmt.Sprintf("bench-del-%d", i)
			b.StopTimer()
			if err := add(uid); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := del(uid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("add-hostport", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			uid := fmt.Sprintf("bench-hp-%d", i)
			if err := add(uid, cni.PortMapping{HostPort: 31000, ContainerPort: 80}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := del(uid); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}
