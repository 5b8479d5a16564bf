package server_test

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/metricsapi"
	"github.com/skiff-dev/skiff/server/servertest"
)

// fakeNodeAPI serves /metrics/resource as an agent does, for pods web
// (two containers, each burning half a core) and other (a tenth), and one
// pod the store does not have; the node burns 1.5 cores. It answers only
// the server's client certificate.
func fakeNodeAPI(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t0 := time.Now()
	var scrapes atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != netagent.NodeAPIClientName {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/metrics/resource" {
			http.NotFound(w, r)
			return
		}
		scrapes.Add(1)
		now := time.Now()
		el, ms := now.Sub(t0).Seconds(), now.UnixMilli()
		start := float64(t0.Unix())
		var b strings.Builder
		fmt.Fprintf(&b, "# TYPE container_cpu_usage_seconds_total counter\n")
		for _, c := range []struct {
			pod, name string
			cores     float64
		}{{"web", "app", 0.5}, {"web", "side", 0.5}, {"other", "app", 0.1}, {"ghost", "app", 1}} {
			fmt.Fprintf(&b, "container_cpu_usage_seconds_total{container=%q,namespace=\"default\",pod=%q} %g %d\n", c.name, c.pod, 10+el*c.cores, ms)
			fmt.Fprintf(&b, "container_memory_working_set_bytes{container=%q,namespace=\"default\",pod=%q} 4096 %d\n", c.name, c.pod, ms)
			fmt.Fprintf(&b, "container_start_time_seconds{container=%q,namespace=\"default\",pod=%q} %g %d\n", c.name, c.pod, start, t0.UnixMilli())
		}
		fmt.Fprintf(&b, "node_cpu_usage_seconds_total %g %d\n", 1000+el*1.5, ms)
		fmt.Fprintf(&b, "node_memory_working_set_bytes %d %d\n", 1<<30, ms)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(b.String()))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &scrapes
}

// publishNode makes node's Node publish srv as its node API and report
// Ready, as its agent would.
func publishNode(t *testing.T, ts *servertest.Server, node string, srv *httptest.Server, labels map[string]string) {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	nc := clientWith(t, ts, joinNode(t, ts, node, testPassword))
	sum := sha256.Sum256(srv.Certificate().Raw)
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: node, Labels: labels, Annotations: map[string]string{
		netagent.AnnotationNodeAPI: srv.URL, netagent.AnnotationNodeAPICert: hex.EncodeToString(sum[:])}}}
	if err := nc.Create(ctx, resNodes, "", n); err != nil {
		t.Fatal(err)
	}
	// A controller may write the new Node first (a 409): read it again.
	for i := 0; ; i++ {
		n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: api.Now()}}
		err := nc.UpdateStatus(ctx, resNodes, "", n)
		if err == nil {
			return
		}
		if !client.IsConflict(err) || i == 10 {
			t.Fatal(err)
		}
		if err := nc.Get(ctx, resNodes, "", node, n); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResourceMetricsAPI(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{Config: func(cfg *config.Server) {
		cfg.MetricResolution = 500 * time.Millisecond
		cfg.DisabledControllers = append(cfg.DisabledControllers, "nodelifecycle")
	}})
	ctx := ctxT(t, 60*time.Second)
	c := ts.Client()

	// Discovery lists the group and its two read-only resources.
	var rl struct {
		Resources []struct {
			Name       string   `json:"name"`
			Kind       string   `json:"kind"`
			Namespaced bool     `json:"namespaced"`
			Verbs      []string `json:"verbs"`
		} `json:"resources"`
	}
	if err := c.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1", nil, &rl); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rl.Resources); got != "[{nodes NodeMetrics false [get list]} {pods PodMetrics true [get list]}]" {
		t.Errorf("discovery: %s", got)
	}

	srv, scrapes := fakeNodeAPI(t)
	publishNode(t, ts, "n1", srv, map[string]string{"zone": "a"})
	for name, app := range map[string]string{"web": "web", "other": "other"} {
		p := boundPod(name, "n1")
		p.Labels = map[string]string{"app": app}
		if err := c.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}

	var pl metricsapi.PodMetricsList
	path := "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
	eventually(t, 30*time.Second, "pod metrics", func() (bool, error) {
		err := c.Do(ctx, "GET", path, nil, &pl)
		return err == nil && len(pl.Items) == 2, err
	})
	if n := scrapes.Load(); n < 2 {
		t.Errorf("metrics after %d scrapes, want two at least", n)
	}
	if pl.Kind != "PodMetricsList" || pl.APIVersion != "metrics.k8s.io/v1beta1" {
		t.Errorf("list type %s %s", pl.APIVersion, pl.Kind)
	}
	milli := func(q api.Quantity) int64 {
		v, ok := q.MilliValue()
		if !ok {
			t.Errorf("quantity %q", q)
		}
		return v
	}
	web := pl.Items[1]
	if web.Metadata.Name != "web" || web.Metadata.Labels["app"] != "web" || len(web.Containers) != 2 || web.Containers[0].Name != "app" {
		t.Fatalf("web: %+v", web)
	}
	for _, ct := range web.Containers {
		if m := milli(ct.Usage["cpu"]); m < 490 || m > 510 {
			t.Errorf("web/%s cpu %s, want 500m", ct.Name, ct.Usage["cpu"])
		}
		if ct.Usage["memory"] != "4Ki" {
			t.Errorf("web/%s memory %s", ct.Name, ct.Usage["memory"])
		}
	}
	if w, err := time.ParseDuration(web.Window); err != nil || w <= 0 || w > 5*time.Second {
		t.Errorf("window %q", web.Window)
	}
	if web.Timestamp.IsZero() || time.Since(web.Timestamp.Time) > time.Minute {
		t.Errorf("timestamp %v", web.Timestamp)
	}

	// labelSelector, get, NotFound, all namespaces.
	if err := c.Do(ctx, "GET", path+"?labelSelector=app%3Dother", nil, &pl); err != nil || len(pl.Items) != 1 || pl.Items[0].Metadata.Name != "other" {
		t.Errorf("selected: %+v, %v", pl.Items, err)
	}
	var pm metricsapi.PodMetrics
	if err := c.Do(ctx, "GET", path+"/other", nil, &pm); err != nil || pm.Kind != "PodMetrics" || milli(pm.Containers[0].Usage["cpu"]) > 110 {
		t.Errorf("get other: %+v, %v", pm, err)
	}
	if err := c.Do(ctx, "GET", path+"/ghost", nil, &pm); !client.IsNotFound(err) {
		t.Errorf("a pod the store lacks: %v, want NotFound", err)
	}
	if err := c.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/pods", nil, &pl); err != nil || len(pl.Items) != 2 {
		t.Errorf("all namespaces: %d, %v", len(pl.Items), err)
	}
	if err := c.Do(ctx, "GET", path+"?fieldSelector=metadata.name%3Dweb", nil, &pl); err != nil || len(pl.Items) != 1 || pl.Items[0].Metadata.Name != "web" {
		t.Errorf("field selected: %+v, %v", pl.Items, err)
	}
	if err := c.Do(ctx, "GET", path+"?fieldSelector=spec.nodeName%3Dn1", nil, &pl); !client.IsBadRequest(err) {
		t.Errorf("an unsupported field: %v", err)
	}
	if err := c.Do(ctx, "GET", path+"?labelSelector=a%3D%3D%3Db", nil, &pl); !client.IsBadRequest(err) {
		t.Errorf("a bad selector: %v", err)
	}
	if err := c.Do(ctx, "DELETE", path+"/web", nil, nil); err == nil {
		t.Error("DELETE of a PodMetrics succeeded")
	}

	// Nodes.
	var nl metricsapi.NodeMetricsList
	if err := c.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Da", nil, &nl); err != nil || len(nl.Items) != 1 {
		t.Fatalf("nodes: %+v, %v", nl, err)
	}
	if n := nl.Items[0]; n.Metadata.Name != "n1" || n.Usage["memory"] != "1Gi" || milli(n.Usage["cpu"]) < 1490 || milli(n.Usage["cpu"]) > 1510 {
		t.Errorf("n1: %+v", n)
	}
	if err := c.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db", nil, &nl); err != nil || len(nl.Items) != 0 {
		t.Errorf("nodes of zone b: %+v, %v", nl.Items, err)
	}
	var nm metricsapi.NodeMetrics
	if err := c.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/n1", nil, &nm); err != nil || nm.Kind != "NodeMetrics" {
		t.Errorf("get n1: %+v, %v", nm, err)
	}

	// Who may read: the read-only token may, a node may not.
	if err := clientWith(t, ts, ts.Bundle().DashboardToken).Do(ctx, "GET", path, nil, &pl); err != nil {
		t.Errorf("dashboard: %v", err)
	}
	if err := clientWith(t, ts, joinNode(t, ts, "n2", testPassword)).Do(ctx, "GET", path, nil, &pl); !client.IsForbidden(err) {
		t.Errorf("a node: %v, want Forbidden", err)
	}
}
