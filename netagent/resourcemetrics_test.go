package netagent

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/stats"
)

type fakeContainers []runtime.ContainerStatus

func (f fakeContainers) List(context.Context) ([]runtime.ContainerStatus, error) { return f, nil }

type fakeStats map[string]stats.Usage

func (f fakeStats) ContainerStats(_ context.Context, id string) (stats.Usage, error) {
	u, ok := f[id]
	if !ok {
		return stats.Usage{}, errors.New("gone")
	}
	return u, nil
}

type fakeNode struct{ u stats.Usage }

func (f fakeNode) Usage() (stats.Usage, error) { return f.u, nil }

type fakePods []api.Object

func (f fakePods) List() []api.Object { return f }

func TestResourceMetricsExposition(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	started := time.Unix(1_699_999_000, 0)
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns1", UID: "u1"}}
	m := &resourceMetrics{
		containers: fakeContainers{
			{ID: "a", PodUID: "u1", Name: "app", State: runtime.StateRunning, StartedAt: started},
			{ID: "b", PodUID: "u1", Name: "side", State: runtime.StateRunning, StartedAt: started},
			{ID: "c", PodUID: "u1", Name: "old", State: runtime.StateExited},       // not running
			{ID: "d", PodUID: "other", Name: "x", State: runtime.StateRunning},     // no such pod
			{ID: "e", PodUID: "u1", Name: "vanished", State: runtime.StateRunning}, // reading fails
		},
		stats: fakeStats{"a": {CPUNanoseconds: 1_500_000_000, MemoryWorkingSetBytes: 4096},
			"b": {CPUNanoseconds: 500_000_000, MemoryWorkingSetBytes: 1024},
			"c": {CPUNanoseconds: 9}, "d": {CPUNanoseconds: 9}},
		node: fakeNode{stats.Usage{CPUNanoseconds: 100_000_000_000, MemoryWorkingSetBytes: 1 << 30}},
		pods: fakePods{pod},
		now:  func() time.Time { return now },
		log:  slog.New(slog.DiscardHandler),
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics/resource", nil)
	req.Header.Set("Accept", "text/plain")
	m.handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`container_cpu_usage_seconds_total{container="app",namespace="ns1",pod="web"} 1.5 1700000000123`,
		`container_cpu_usage_seconds_total{container="side",namespace="ns1",pod="web"} 0.5 1700000000123`,
		`container_memory_working_set_bytes{container="app",namespace="ns1",pod="web"} 4096 1700000000123`,
		`container_start_time_seconds{container="app",namespace="ns1",pod="web"} 1.699999e+09 1699999000000`,
		`node_cpu_usage_seconds_total 100 1700000000123`,
		`node_memory_working_set_bytes 1.073741824e+09 1700000000123`,
		`pod_cpu_usage_seconds_total{namespace="ns1",pod="web"} 2 1700000000123`,
		`pod_memory_working_set_bytes{namespace="ns1",pod="web"} 5120 1700000000123`,
		"scrape_error 1",
		"# TYPE container_cpu_usage_seconds_total counter",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("missing %q in\n%s", want, body)
		}
	}
	for _, bad := range []string{`container="old"`, `container="x"`, `container="vanished"`} {
		if strings.Contains(body, bad) {
			t.Errorf("%s is exposed:\n%s", bad, body)
		}
	}
	// The text parses as Prometheus text.
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(fams["container_cpu_usage_seconds_total"].GetMetric()) != 2 {
		t.Errorf("families: %v", fams)
	}
}

// The node API routes GET /metrics/resource: 503 before the pods run,
// the exposition after.
func TestNodeAPIServesResourceMetrics(t *testing.T) {
	a := &Agent{cfg: Config{NodeName: "n1"}, log: slog.New(slog.DiscardHandler)}
	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		a.nodeAPIHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics/resource", nil))
		return rec
	}
	if rec := get(); rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "not ready") {
		t.Errorf("before the pods run: %d %s", rec.Code, rec.Body)
	}
	a.resMetrics = &resourceMetrics{containers: fakeContainers{}, node: fakeNode{stats.Usage{CPUNanoseconds: 2e9, MemoryWorkingSetBytes: 8192}},
		pods: fakePods{}, now: time.Now, log: slog.New(slog.DiscardHandler)}
	rec := get()
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "node_cpu_usage_seconds_total 2 ") || !strings.Contains(rec.Body.String(), "scrape_error 0") {
		t.Errorf("after: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q", ct)
	}
}
