package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/metricsapi/nodeapitest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// metricsNodeAPI serves /metrics/resource as a node agent does: pod
// default/web's containers app (250m, 64Mi) and side (50m, 16Mi); the
// node burns 1.5 cores and holds 2Gi.
func metricsNodeAPI(t *testing.T) *httptest.Server {
	t0 := time.Now()
	return nodeapitest.Start(t, func(_ *http.Request, now time.Time) (string, error) {
		el := now.Sub(t0).Seconds()
		var b strings.Builder
		nodeapitest.Container(&b, "default", "web", "app", 3+el*0.25, 64<<20, t0, now)
		nodeapitest.Container(&b, "default", "web", "side", 3+el*0.05, 16<<20, t0, now)
		nodeapitest.Node(&b, 100+el*1.5, 2<<30, now)
		return b.String(), nil
	})
}

// TestBrowserTopFigures: the pods page shows `kubectl top pod`'s CPU and
// memory of each pod (the sum of its containers: 300m, 80Mi) and the
// nodes page `kubectl top node`'s, with the share of the node's
// allocatable (1500m of 4 cores: 38%; 2048Mi of 8Gi: 25%), from the
// server's metrics.k8s.io, which scrapes the node's /metrics/resource
// (a test node API the node published, as an agent does).
func TestBrowserTopFigures(t *testing.T) {
	chromiumPath(t)
	opts := testOptions()
	opts.Config = func(cfg *config.Server) { cfg.MetricResolution = time.Second }
	ts := servertest.Start(t, opts)
	c := ts.Client()
	srv := metricsNodeAPI(t)
	if _, err := netagent.Join(ctxT(t, 10*time.Second), ts.URL(), ts.Bundle().CACertPEM, ts.Bundle().NodeToken, "top-node", "0123456789abcdef-top-password"); err != nil {
		t.Fatal(err)
	}
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: "top-node", Annotations: nodeapitest.Annotations(srv)}}
	if err := c.Create(ctxT(t, 10*time.Second), resNodes, "", n); err != nil {
		t.Fatal(err)
	}
	res := api.ResourceList{"cpu": "4", "memory": "8Gi"}
	deadline := time.Now().Add(10 * time.Second)
	for { // the controllers write the node too
		var cur api.Node
		err := c.Get(ctxT(t, 5*time.Second), resNodes, "", "top-node", &cur)
		if err == nil {
			cur.Status.Capacity, cur.Status.Allocatable = res, res
			cur.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: api.Now()}}
			if err = c.UpdateStatus(ctxT(t, 5*time.Second), resNodes, "", &cur); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node status: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.PodSpec{NodeName: "top-node",
		Containers: []api.Container{{Name: "app", Image: "netexec"}, {Name: "side", Image: "netexec"}}}}
	if err := c.Create(ctxT(t, 10*time.Second), resPods, "default", pod); err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	step(t, ctx, "open", chromedp.Navigate(ts.URL()+"/#/pods"))
	login(t, ctx, ts.Bundle().AdminToken)
	// The row of pod web; the figures arrive with the first poll that
	// finds two scrapes (the cells are empty before).
	row := `[...document.querySelectorAll('#pod-table tr')].find(r => r.querySelector('a[href="#/pods/default/web"]'))`
	waitJS(t, ctx, "pod web's memory 80Mi", `(`+row+`)?.children[8]?.textContent === '80Mi'`)
	cpu := eval[string](t, ctx, `(`+row+`).children[7].textContent`)
	var m int
	if _, err := fmt.Sscanf(cpu, "%dm", &m); err != nil || m < 270 || m > 330 {
		t.Errorf("pod web's CPU %q, want about 300m (250m + 50m)", cpu)
	}
	if h := eval[string](t, ctx, `[...document.querySelectorAll('#pod-table th')].map(h => h.textContent).join(',')`); !strings.Contains(h, "CPU,Memory") {
		t.Errorf("pods table header %q", h)
	}
	checkPage(t, ctx, "pods-top")

	goTo(t, ctx, "#/nodes")
	nrow := `[...document.querySelectorAll('#node-table tr')].find(r => r.children[0]?.textContent === 'top-node')`
	waitJS(t, ctx, "node top-node's memory", `(`+nrow+`)?.children[6]?.textContent === '2048Mi (25%)'`)
	if got := eval[string](t, ctx, `(`+nrow+`).children[5].textContent`); !strings.HasSuffix(got, "m (38%)") && !strings.HasSuffix(got, "m (37%)") {
		t.Errorf("node CPU cell %q, want about 1500m (38%%) of 4 cores", got)
	}
	checkPage(t, ctx, "nodes-top")
	shot(t, ctx, "nodes-top")
}
