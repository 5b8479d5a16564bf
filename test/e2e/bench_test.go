package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/internal/benchfloor"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
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
// After each cluster is gone it measures, in the same run, the floor of
// that figure on this machine (applyFloor): the pods the apply starts at
// once, started without Skiff. It reports the floor's first response as
// floor-s, its all-ready time as floor-all-s, and first-over-floor, the
// mean first response over the mean floor-s: the figure that holds from
// one machine to another (docs/performance.md, "Floors and ratios").
//
//	go test -run '^$' -bench ApplyToFirstResponse -benchtime 3x ./test/e2e/
func BenchmarkApplyToFirstResponse(b *testing.B) {
	for _, mode := range []string{"iptables", "nftables"} {
		b.Run(mode, func(b *testing.B) {
			sum := map[string]time.Duration{}
			var floor applyFloorSum
			for range b.N {
				for k, v := range applyToFirstResponse(b, mode) {
					sum[k] += v
				}
				floor.add(applyFloor(b, nil))
			}
			reportApply(b, sum, floor)
		})
	}
}

// reportApply reports the mean of each step over b.N runs, the floor's
// means and the ratio of the first response to the floor.
func reportApply(b *testing.B, sum map[string]time.Duration, floor applyFloorSum) {
	for _, s := range benchSteps {
		b.ReportMetric((sum[s] / time.Duration(b.N)).Seconds(), "s-"+s)
	}
	b.ReportMetric((floor.first / time.Duration(b.N)).Seconds(), "floor-s")
	b.ReportMetric((floor.all / time.Duration(b.N)).Seconds(), "floor-all-s")
	if floor.first > 0 {
		b.ReportMetric(float64(sum["first"])/float64(floor.first), "first-over-floor")
	}
	b.ReportMetric(0, "ns/op")
}

// examplePods is how many pods `skiff apply -f examples/` starts at once:
// the backend Deployment's 3, the client and web-0 (the web StatefulSet is
// OrderedReady: web-1, the apply's sixth pod, is created once web-0 is
// Ready). applyToFirstResponseIn fails when the apply made another count.
const examplePods = 5

// applyFloorSum adds up floor runs.
type applyFloorSum struct{ first, all time.Duration }

func (s *applyFloorSum) add(first, all time.Duration) { s.first += first; s.all += all }

// applyFloor measures the floor of one apply's first response on this
// machine (package internal/benchfloor): examplePods pods' networks added
// by the same CNI plugins in a node namespace of its own and their
// workload (the examples' `skiff netexec --http-port=8080
// --udp-port=8081`; start, when not nil, starts it instead: the
// containerd floor) started at once, with no API server, controller,
// agent, probe or proxy, each polled over HTTP from the node namespace.
// Pod 0 stands for the client and pods 1-3 for the backends: first is
// when the client and one backend both answer, the least the first
// response through backend-svc needs (the request itself, ~1 ms, is not
// in it); all is when every pod answers.
func applyFloor(b *testing.B, start func(ctx context.Context, i int, netnsPath string) (func() error, error)) (first, all time.Duration) {
	b.Helper()
	node := netnstest.NewNode(b)
	f, res, err := benchfloor.Run(context.Background(), benchfloor.Options{
		NodeNetNS: node.Path, DataDir: b.TempDir(), Pods: examplePods,
		Command: []string{os.Args[0], "netexec", "--http-port=8080", "--udp-port=8081"}, Start: start, Port: 8080,
	})
	if cerr := f.Close(); cerr != nil {
		b.Errorf("floor: close: %v", cerr)
	}
	if err != nil {
		b.Fatalf("floor: %v", err)
	}
	backend := slices.Min(res.ByPod[1:4])
	return max(res.ByPod[0], backend), res.All
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
	// The floor starts examplePods pods: check that the apply made as many
	// at once (and web-1 after them).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ps := c.pods("default", "")
		if slices.ContainsFunc(ps, func(p api.Pod) bool { return p.Name == "web-1" }) {
			if len(ps) != examplePods+1 {
				b.Fatalf("the apply made %d pods, not examplePods (%d) and web-1: update examplePods", len(ps), examplePods)
			}
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("web-1 not created 30 s after the apply; pods: %d", len(ps))
		}
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
