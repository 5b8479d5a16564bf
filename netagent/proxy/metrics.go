package proxy

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are kube-proxy's, under the same names (subsystem "kubeproxy").
type metrics struct {
	syncDuration        prometheus.Histogram
	syncFullDuration    prometheus.Histogram
	syncPartialDuration prometheus.Histogram
	lastSync            prometheus.Gauge
	lastQueued          prometheus.Gauge
	programming         prometheus.Histogram
	syncFailures        prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	syncBuckets := prometheus.ExponentialBuckets(0.001, 2, 15)
	m := &metrics{
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_duration_seconds",
			Help:    "SyncProxyRules latency in seconds",
			Buckets: syncBuckets,
		}),
		syncFullDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "sync_full_proxy_rules_duration_seconds",
			Help:    "SyncProxyRules latency in seconds for full resyncs",
			Buckets: syncBuckets,
		}),
		syncPartialDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "sync_partial_proxy_rules_duration_seconds",
			Help:    "SyncProxyRules latency in seconds for partial resyncs",
			Buckets: syncBuckets,
		}),
		lastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_last_timestamp_seconds",
			Help: "The last time proxy rules were successfully synced",
		}),
		lastQueued: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_last_queued_timestamp_seconds",
			Help: "The last time a sync of proxy rules was queued",
		}),
		programming: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubeproxy", Name: "network_programming_duration_seconds",
			Help: "In Cluster Network Programming Latency in seconds",
			Buckets: merge(
				prometheus.LinearBuckets(0.25, 0.25, 2), // 0.25s, 0.50s
				prometheus.LinearBuckets(1, 1, 59),      // 1s, 2s, 3s, ... 59s
				prometheus.LinearBuckets(60, 5, 12),     // 60s, 65s, 70s, ... 115s
				prometheus.LinearBuckets(120, 30, 7),    // 2min, 2.5min, 3min, ..., 5min
			),
		}),
		syncFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubeproxy", Name: "sync_proxy_rules_failures_total",
			Help: "Cumulative proxy rules sync failures",
		}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.syncDuration, m.syncFullDuration, m.syncPartialDuration,
		m.lastSync, m.lastQueued, m.programming, m.syncFailures} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("proxy: register metrics: %w", err)
	}
	return m, nil
}

func merge(slices ...[]float64) []float64 {
	var out []float64
	for _, s := range slices {
		out = append(out, s...)
	}
	return out
}
