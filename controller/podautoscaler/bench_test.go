package podautoscaler_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/metricsapi/nodeapitest"
	"github.com/skiff-dev/skiff/server/servertest"
)

var resNode = api.Lookup(res, "v1", "nodes")

// loadNode is a node agent's /metrics/resource for the pods bound to
// it: every container "app" burns idle cores until its pod's Deployment
// is set to burn, then busy cores (a counter that grows at that rate).
type loadNode struct {
	c          *client.Client
	node       string
	idle, busy float64
	mu         sync.Mutex
	burning    map[string]*burst // app label -> its load
	t0         time.Time
}

// burst is one load: from its start until end (zero: still on).
type burst struct{ start, end time.Time }

func (n *loadNode) burn(app string, at time.Time) {
	n.mu.Lock()
	n.burning[app] = &burst{start: at}
	n.mu.Unlock()
}

func (n *loadNode) calm(app string, at time.Time) {
	n.mu.Lock()
	n.burning[app].end = at
	n.mu.Unlock()
}

// cpuSeconds is a container's counter at now: it grows at the idle rate,
// and at the busy rate during its app's load (a counter that never goes
// back, as a cgroup's).
func (n *loadNode) cpuSeconds(app string, now time.Time) float64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	total := now.Sub(n.t0).Seconds() * n.idle
	if l := n.burning[app]; l != nil && now.After(l.start) {
		end := now
		if !l.end.IsZero() && l.end.Before(now) {
			end = l.end
		}
		total += end.Sub(l.start).Seconds() * (n.busy - n.idle)
	}
	return total
}

// metrics is the node's /metrics/resource at now.
func (n *loadNode) metrics(r *http.Request, now time.Time) (string, error) {
	var l api.PodList
	if err := n.c.List(r.Context(), resPod, "", client.ListOptions{FieldSelector: "spec.nodeName=" + n.node}, &l); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range l.Items {
		nodeapitest.Container(&b, p.Namespace, p.Name, "app", n.cpuSeconds(p.Labels["app"], now), 32<<20, n.t0, now)
	}
	nodeapitest.Node(&b, now.Sub(n.t0).Seconds(), 1<<30, now)
	return b.String(), nil
}

// BenchmarkHPAReaction is the HorizontalPodAutoscaler's reaction time as
// a user sees it, end to end on a real server: its metrics pipeline
// scrapes a node's /metrics/resource (a test node API; the pods' status
// is written as an agent would), the built-in controller syncs every
// 15 s, as upstream. Each iteration is a Deployment of one pod (request
// 100m, target 50%) idle at 10m until the load starts (500m); the figure
// is the time from the load's start to the Deployment's scale-up
// (s-to-scale-up, the mean), and to the pods' scale-down to one after
// the load ends with a 0 s down-scale window (s-to-scale-down). Both are
// bound by the scrape resolution (the rate needs two scrapes) plus the
// HPA's period; resolution=1s shows the controller's own share.
func BenchmarkHPAReaction(b *testing.B) {
	for _, res := range []time.Duration{15 * time.Second, time.Second} {
		b.Run("resolution="+res.String(), func(b *testing.B) { benchHPAReaction(b, res) })
	}
}

func benchHPAReaction(b *testing.B, resolution time.Duration) {
	opts := servertest.Options{Config: func(cfg *config.Server) { cfg.MetricResolution = resolution }}
	srv := servertest.Start(b, opts)
	c := srv.Client()
	ln := &loadNode{c: c, node: "load-node", idle: 0.01, busy: 0.5, burning: map[string]*burst{}, t0: time.Now().Add(-10 * time.Minute)}
	hs := nodeapitest.Start(b, ln.metrics)
	if _, err := netagent.Join(b.Context(), srv.URL(), srv.Bundle().CACertPEM, srv.Bundle().NodeToken, ln.node, "0123456789abcdef-hpa-password"); err != nil {
		b.Fatal(err)
	}
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: ln.node, Annotations: nodeapitest.Annotations(hs)}}
	if err := c.Create(b.Context(), resNode, "", node); err != nil {
		b.Fatal(err)
	}
	// The node stays Ready: its heartbeat, as an agent's.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			var n api.Node
			if err := c.Get(b.Context(), resNode, "", ln.node, &n); err == nil {
				n.Status.Capacity = api.ResourceList{"cpu": "4", "memory": "8Gi", "pods": "110"}
				n.Status.Allocatable = n.Status.Capacity
				n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: api.Now()}}
				_ = c.UpdateStatus(b.Context(), resNode, "", &n)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
		}
	})
	b.Cleanup(func() { close(stop); wg.Wait() })

	var up, down time.Duration
	i := 0
	for b.Loop() {
		i++
		app := fmt.Sprintf("load-%d", i)
		d := deployment(1)
		d.Name = app
		d.Spec.Selector.MatchLabels = map[string]string{"app": app}
		d.Spec.Template.Labels = map[string]string{"app": app}
		if err := c.Create(b.Context(), resDeploy, "default", d); err != nil {
			b.Fatal(err)
		}
		zero := int32(0)
		h := hpa(1, 4, 50, &api.HorizontalPodAutoscalerBehavior{ScaleDown: &api.HPAScalingRules{StabilizationWindowSeconds: &zero}})
		h.Name, h.Spec.ScaleTargetRef.Name = app, app
		if err := c.Create(b.Context(), resHPA, "default", h); err != nil {
			b.Fatal(err)
		}
		// The pod runs and is Ready (an agent's status), then the HPA
		// has read it idle at least once.
		waitB(b, "the pod Running", func() bool { return runPods(b, c, app) == 1 })
		waitB(b, "the HPA's first idle reading", func() bool {
			var cur api.HorizontalPodAutoscaler
			return c.Get(b.Context(), resHPA, "default", app, &cur) == nil && len(cur.Status.CurrentMetrics) > 0
		})
		start := time.Now()
		ln.burn(app, start)
		waitB(b, "the scale-up", func() bool { return deployReplicas(b, c, app) > 1 })
		up += time.Since(start)
		runPods(b, c, app) // the new pods run (the scale-down wait marks later ones)
		// The load ends: it runs idle again from now on.
		end := time.Now()
		ln.calm(app, end)
		waitB(b, "the scale-down", func() bool { runPods(b, c, app); return deployReplicas(b, c, app) == 1 })
		down += time.Since(end)
		_ = c.Delete(b.Context(), resHPA, "default", app, client.DeleteOptions{})
		_ = c.Delete(b.Context(), resDeploy, "default", app, client.DeleteOptions{})
	}
	b.ReportMetric(up.Seconds()/float64(i), "s-to-scale-up")
	b.ReportMetric(down.Seconds()/float64(i), "s-to-scale-down")
	b.ReportMetric(0, "ns/op")
}

// runPods marks the app's pods Running and Ready, started ten minutes
// ago (trusted readings), as an agent would, and counts them.
func runPods(b *testing.B, c *client.Client, app string) int {
	var l api.PodList
	if err := c.List(b.Context(), resPod, "default", client.ListOptions{LabelSelector: "app=" + app}, &l); err != nil {
		return 0
	}
	start := api.NewTime(time.Now().Add(-10 * time.Minute))
	n := 0
	for i := range l.Items {
		p := &l.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		n++
		if p.Status.Phase == api.PodRunning || p.Spec.NodeName == "" {
			continue
		}
		p.Status.Phase, p.Status.StartTime = api.PodRunning, &start
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(start.Add(time.Minute))}}
		_ = c.UpdateStatus(b.Context(), resPod, "default", p)
	}
	return n
}

func deployReplicas(b *testing.B, c *client.Client, app string) int32 {
	var d api.Deployment
	if err := c.Get(b.Context(), resDeploy, "default", app, &d); err != nil || d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}

func waitB(b *testing.B, what string, f func() bool) {
	b.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !f() {
		if time.Now().After(deadline) {
			b.Fatalf("%s: not after 3 minutes", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
