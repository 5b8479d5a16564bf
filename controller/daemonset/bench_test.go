package daemonset_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/client"
)

// BenchmarkConvergence50NodesJoin measures, on a real server, the time
// from 50 Nodes joining a cluster that already has a DaemonSet until each
// of them runs exactly one ready daemon pod and the status says so. Each
// iteration uses a DaemonSet and node names of its own; the nodes are
// deleted afterwards (and their pods with them).
func BenchmarkConvergence50NodesJoin(b *testing.B) {
	e := startEnv(b)
	ctx := context.Background()
	const n = 50
	for i := range b.N {
		app := fmt.Sprintf("agent-%d", i)
		b.StopTimer()
		e.createDS(app)
		names := make([]string, n)
		for j := range n {
			names[j] = fmt.Sprintf("bench-%d-%d", i, j)
		}
		b.StartTimer()
		for _, name := range names {
			e.addNode(name)
		}
		e.waitFor("a ready pod on every node", 2*time.Minute, func() bool {
			s := e.getDS(app).Status
			return s.NumberAvailable == n && s.DesiredNumberScheduled == n && e.onePodEach(app, "", names...)
		})
		b.StopTimer()
		for _, name := range names {
			if err := e.c.Delete(ctx, nodesRes, "", name, client.DeleteOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		e.waitFor("the nodes' pods gone", 2*time.Minute, func() bool { return e.onePodEach(app, "") })
		b.StartTimer()
	}
}
