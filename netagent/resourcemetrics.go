package netagent

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/stats"
)

// GET /metrics/resource on the node API is the kubelet's resource
// metrics endpoint, what metrics-server (here: the server's metrics.k8s.io
// scraper) reads: the Prometheus text format with, for every running
// container of a pod of this node, container_cpu_usage_seconds_total
// (counter, cumulative core-seconds), container_memory_working_set_bytes
// and container_start_time_seconds (labels container, namespace, pod),
// pod_cpu_usage_seconds_total and pod_memory_working_set_bytes (the sums
// of the pod's containers, labels namespace, pod), the node's
// node_cpu_usage_seconds_total and node_memory_working_set_bytes, and
// scrape_error (1 when some reading failed). Every sample carries the
// time it was read at (ms), as upstream's, so the rate is computed over
// the readings' own times and not the scrape's. A container whose reading
// fails is left out (and scrape_error is 1); so is one of a pod the agent
// does not run.
//
// The readings come from the runtime (containerStatser: the process
// runtime's /proc process trees, containerd's cgroup metrics) and the
// node (nodeStatser: stats.Node, the root cgroup).

// containerLister lists the runtime's containers.
type containerLister interface {
	List(ctx context.Context) ([]runtime.ContainerStatus, error)
}

// containerStatser reads one container's usage (runtime/process,
// runtime/containerd).
type containerStatser interface {
	ContainerStats(ctx context.Context, id string) (stats.Usage, error)
}

// nodeStatser reads the node's usage.
type nodeStatser interface {
	Usage() (stats.Usage, error)
}

// podLister lists the pods bound to this node (the node-pods informer).
type podLister interface {
	List() []api.Object
}

// resourceMetrics reads what /metrics/resource serves.
type resourceMetrics struct {
	containers containerLister
	stats      containerStatser // nil: the runtime measures nothing
	node       nodeStatser
	pods       podLister
	now        func() time.Time
	log        *slog.Logger
}

// Descriptions as the kubelet's (k8s.io/kubernetes/pkg/kubelet/metrics/collectors/resource_metrics.go).
var (
	descNodeCPU = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	descNodeMem = prometheus.NewDesc("node_memory_working_set_bytes",
		"[STABLE] Current working set of the node in bytes", nil, nil)
	descContainerCPU = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	descContainerMem = prometheus.NewDesc("container_memory_working_set_bytes",
		"[STABLE] Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	descContainerStart = prometheus.NewDesc("container_start_time_seconds",
		"[STABLE] Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	descPodCPU = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	descPodMem = prometheus.NewDesc("pod_memory_working_set_bytes",
		"[STABLE] Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	descScrapeError = prometheus.NewDesc("scrape_error",
		"[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// resourceCollector is one scrape: a prometheus.Collector over one read.
type resourceCollector struct {
	ctx context.Context
	m   *resourceMetrics
}

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNodeCPU, descNodeMem, descContainerCPU, descContainerMem, descContainerStart, descPodCPU, descPodMem, descScrapeError} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	failed := false
	if m.node != nil {
		if u, err := m.node.Usage(); err == nil {
			t := m.now()
			ch <- prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(descNodeCPU, prometheus.CounterValue, seconds(u.CPUNanoseconds)))
			ch <- prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(descNodeMem, prometheus.GaugeValue, float64(u.MemoryWorkingSetBytes)))
		} else {
			failed = true
			m.log.Debug("resource metrics: node", "err", err)
		}
	}
	pods := map[string]*api.Pod{}
	for _, o := range m.pods.List() {
		if p, ok := o.(*api.Pod); ok {
			pods[p.UID] = p
		}
	}
	list, err := m.containers.List(c.ctx)
	if err != nil {
		failed = true
		m.log.Debug("resource metrics: list containers", "err", err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	type podSum struct {
		stats.Usage
		t time.Time
	}
	sums := map[*api.Pod]*podSum{}
	for _, cs := range list {
		pod := pods[cs.PodUID]
		if pod == nil || cs.State != runtime.StateRunning || m.stats == nil {
			continue
		}
		u, err := m.stats.ContainerStats(c.ctx, cs.ID)
		if err != nil {
			failed = true
			m.log.Debug("resource metrics: container", "id", cs.ID, "err", err)
			continue
		}
		t := m.now()
		lv := []string{cs.Name, pod.Name, pod.Namespace}
		ch <- prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(descContainerCPU, prometheus.CounterValue, seconds(u.CPUNanoseconds), lv...))
		ch <- prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(descContainerMem, prometheus.GaugeValue, float64(u.MemoryWorkingSetBytes), lv...))
		if !cs.StartedAt.IsZero() {
			ch <- prometheus.NewMetricWithTimestamp(cs.StartedAt, prometheus.MustNewConstMetric(descContainerStart, prometheus.GaugeValue,
				float64(cs.StartedAt.UnixNano())/1e9, lv...))
		}
		s := sums[pod]
		if s == nil {
			s = &podSum{}
			sums[pod] = s
		}
		s.CPUNanoseconds += u.CPUNanoseconds
		s.MemoryWorkingSetBytes += u.MemoryWorkingSetBytes
		s.t = t
	}
	for pod, s := range sums {
		ch <- prometheus.NewMetricWithTimestamp(s.t, prometheus.MustNewConstMetric(descPodCPU, prometheus.CounterValue, seconds(s.CPUNanoseconds), pod.Name, pod.Namespace))
		ch <- prometheus.NewMetricWithTimestamp(s.t, prometheus.MustNewConstMetric(descPodMem, prometheus.GaugeValue, float64(s.MemoryWorkingSetBytes), pod.Name, pod.Namespace))
	}
	v := 0.0
	if failed {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(descScrapeError, prometheus.GaugeValue, v)
}

func seconds(ns uint64) float64 { return float64(ns) / 1e9 }

// handler serves one /metrics/resource request (a registry of its own
// per request: the collector reads at Collect).
func (m *resourceMetrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewPedanticRegistry()
		if err := reg.Register(resourceCollector{ctx: r.Context(), m: m}); err != nil {
			writeNodeAPIError(w, err)
			return
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}

// newResourceMetrics reads containers from rt (their usage when rt can
// measure it), pods from pods and the node from the root cgroup.
func newResourceMetrics(rt runtime.Runtime, pods podLister, log *slog.Logger) *resourceMetrics {
	m := &resourceMetrics{containers: rt, pods: pods, node: stats.Node{}, now: time.Now, log: log}
	if s, ok := rt.(containerStatser); ok {
		m.stats = s
	}
	return m
}

// serveResourceMetrics is GET /metrics/resource.
func (a *Agent) serveResourceMetrics(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	m := a.resMetrics
	a.mu.Unlock()
	if m == nil {
		writeNodeAPIError(w, nodeAPIErrorf(http.StatusServiceUnavailable, "node %s is not ready yet", a.cfg.NodeName))
		return
	}
	m.handler().ServeHTTP(w, r)
}
