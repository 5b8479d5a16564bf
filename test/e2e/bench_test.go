package e2e

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// BenchmarkApplyToFirstResponse measures, on a fresh server and node per
// iteration, `skiff apply -f examples/` to the client pod's first
// successful request through backend-svc, and when each step on the way
// was first seen (all counted from the apply): all three backends have
// their IP (pod network) and their process running; the first backend is
// Ready (a passing readiness probe), its endpoint ready in the
// EndpointSlice, and in the kernel rules; the client pod is Ready; the
// first response.
//
//	go test -run '^$' -bench ApplyToFirstResponse -benchtime 3x ./test/e2e/
func BenchmarkApplyToFirstResponse(b *testing.B) {
	for _, mode := range []string{"iptables", "nftables"} {
		b.Run(mode, func(b *testing.B) {
			sum := map[string]time.Duration{}
			for range b.N {
				for k, v := range applyToFirstResponse(b, mode) {
					sum[k] += v
				}
			}
			for _, s := range benchSteps {
				b.ReportMetric((sum[s] / time.Duration(b.N)).Seconds(), "s-"+s)
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

var benchSteps = []string{"ips", "running", "ready1", "slice1", "rules1", "client", "first"}

// applyToFirstResponse runs one fresh cluster and returns when each step
// was first seen, counted from the apply. The steps are polled on one
// goroutine and the client's requests made on another, so that a slow
// request never delays seeing a step.
func applyToFirstResponse(b *testing.B, mode string) map[string]time.Duration {
	c := newCluster(b, mode)
	defer c.cleanup()
	return applyToFirstResponseIn(b, c, mode)
}

// applyToFirstResponseIn is applyToFirstResponse on a fresh cluster c.
func applyToFirstResponseIn(b *testing.B, c *cluster, mode string) map[string]time.Duration {
	var mu sync.Mutex
	at := map[string]time.Duration{}
	start := time.Now()
	seen := func(step string, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if _, done := at[step]; !done && ok {
			at[step] = time.Since(start)
		}
	}
	c.mustCLI("apply", "-f", examplesDir(b))
	clientIP := make(chan string, 1)
	firstDone := make(chan struct{})
	var lastTry time.Duration // how long the successful request took
	go func() {
		defer close(firstDone)
		ip := <-clientIP
		if ip == "" {
			return
		}
		c.clientIP.Store(ip)
		deadline := start.Add(60 * time.Second)
		for time.Now().Before(deadline) {
			t0 := time.Now()
			if _, err := c.spread("backend-svc", 80, 1); err == nil {
				lastTry = time.Since(t0)
				seen("first", true)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	deadline := start.Add(60 * time.Second)
	sent := false
	for {
		select {
		case <-firstDone:
		default:
			if time.Now().After(deadline) {
				b.Fatalf("no first response after 60s; steps seen: %v", at)
			}
			check(c, seen)
			if p := c.pod("default", "client"); api.IsPodReady(p) && !sent {
				seen("client", true)
				clientIP <- p.Status.PodIP
				sent = true
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		break
	}
	if !sent {
		clientIP <- ""
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := at["first"]; !ok {
		b.Fatalf("no first response after 60s; steps seen: %v", at)
	}
	var line []string
	for _, s := range benchSteps {
		line = append(line, fmt.Sprintf("%s %v", s, at[s].Round(time.Millisecond)))
	}
	b.Logf("%s: %s (the successful request took %v)", mode, strings.Join(line, ", "), lastTry.Round(time.Millisecond))
	return maps.Clone(at)
}

// check reports each step's state (but the client's and the response's).
func check(c *cluster, seen func(step string, ok bool)) {
	var ips, running, ready int
	for _, p := range c.pods("default", "app=backend") {
		if p.Status.PodIP != "" {
			ips++
		}
		if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Running != nil {
			running++
		}
		if api.IsPodReady(&p) {
			ready++
		}
	}
	seen("ips", ips == 3)
	seen("running", running == 3)
	seen("ready1", ready >= 1)
	r, _, _ := c.sliceEndpoints("default", "backend-svc")
	seen("slice1", len(r) >= 1)
	seen("rules1", c.ruleEndpoints("default", "backend-svc", "http") >= 1)
}
