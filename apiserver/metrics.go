package apiserver

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	watchers prometheus.Gauge
	inflight *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "API requests by verb, resource and HTTP code.",
		}, []string{"verb", "resource", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "API request latency by verb and resource (watches excluded).",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"verb", "resource"}),
		watchers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "apiserver_watchers",
			Help: "Open watch streams.",
		}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Requests being served that count against --max-requests-inflight (readOnly) and --max-mutating-requests-inflight (mutating).",
		}, []string{"request_kind"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.watchers, m.inflight} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("apiserver: registering metrics: %w", err)
		}
	}
	return m, nil
}
