package dns

import (
	"fmt"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// Label values of skiff_dns_requests_total. Query types and rcodes outside
// these lists count as "other", so the number of series stays bounded
// whatever clients send.
var (
	metricTypes = []uint16{
		mdns.TypeA, mdns.TypeAAAA, mdns.TypeSRV, mdns.TypePTR, mdns.TypeCNAME, mdns.TypeTXT,
		mdns.TypeSOA, mdns.TypeNS, mdns.TypeMX, mdns.TypeANY, mdns.TypeHTTPS,
	}
	metricRcodes = []int{
		mdns.RcodeSuccess, mdns.RcodeNameError, mdns.RcodeServerFailure, mdns.RcodeRefused,
		mdns.RcodeFormatError, mdns.RcodeNotImplemented, mdns.RcodeBadVers,
	}
)

const (
	typeOther = iota + 11 // index of "other" in type labels (after metricTypes)
	typeNone              // no question was read
	numTypes
)

const (
	rcodeOther = 7 // index of "other" (after metricRcodes)
	numRcodes  = 8
)

// Sources of skiff_dns_request_duration_seconds.
const (
	srcCluster  = iota // answered from the Store
	srcForward         // forwarded, from the cache or an upstream
	srcRejected        // REFUSED, FORMERR, NOTIMP, BADVERS before any lookup
	numSources
)

var sourceNames = [numSources]string{"cluster", "forward", "rejected"}

type metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	cacheHits   prometheus.Counter
	cacheMisses prometheus.Counter
	upstream    *prometheus.CounterVec
	malformed   prometheus.Counter
	cacheSize   prometheus.GaugeFunc

	// counters caches requests' children, created on first use so that only
	// combinations that happen are exported.
	counters [numTypes * numRcodes]atomic.Pointer[prometheus.Counter]
	// observers are duration's children, one per source.
	observers [numSources]prometheus.Observer
}

func newMetrics(cacheLen func() float64) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skiff_dns_requests_total",
			Help: "DNS requests answered, by query type and response code.",
		}, []string{"type", "rcode"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "skiff_dns_request_duration_seconds",
			Help: "Time from a request's arrival in the handler to its response being written, by source: cluster (the Store), forward (cache or upstream), rejected.",
			Buckets: []float64{
				0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
			},
		}, []string{"source"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skiff_dns_forward_cache_hits_total",
			Help: "Forwarded questions answered from the cache.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skiff_dns_forward_cache_misses_total",
			Help: "Forwarded questions not in the cache (sent upstream, or joined to an identical question in flight).",
		}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skiff_dns_forward_upstream_responses_total",
			Help: "Exchanges with upstream servers, by upstream and response code (\"error\" for timeouts and transport errors).",
		}, []string{"upstream", "rcode"}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skiff_dns_malformed_requests_total",
			Help: "Messages that could not be unpacked (answered FORMERR when the header was readable).",
		}),
		cacheSize: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skiff_dns_forward_cache_entries",
			Help: "Answers in the forward cache.",
		}, cacheLen),
	}
	for i := range numSources {
		m.observers[i] = m.duration.WithLabelValues(sourceNames[i])
	}
	return m
}

func (m *metrics) register(r prometheus.Registerer) error {
	if r == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.cacheHits, m.cacheMisses, m.upstream, m.malformed, m.cacheSize} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("dns: register metrics: %w", err)
		}
	}
	return nil
}

func typeIndex(qtype uint16) int {
	for i, t := range metricTypes {
		if t == qtype {
			return i
		}
	}
	return typeOther
}

func typeLabel(i int) string {
	switch {
	case i < len(metricTypes):
		return mdns.TypeToString[metricTypes[i]]
	case i == typeNone:
		return "none"
	}
	return "other"
}

func rcodeIndex(rcode int) int {
	for i, r := range metricRcodes {
		if r == rcode {
			return i
		}
	}
	return rcodeOther
}

func rcodeLabel(i int) string {
	if i < len(metricRcodes) {
		return mdns.RcodeToString[metricRcodes[i]]
	}
	return "other"
}

// observe counts one answered request.
func (m *metrics) observe(typeIdx, rcode, source int, d time.Duration) {
	ri := rcodeIndex(rcode)
	slot := &m.counters[typeIdx*numRcodes+ri]
	c := slot.Load()
	if c == nil {
		cc := m.requests.WithLabelValues(typeLabel(typeIdx), rcodeLabel(ri))
		slot.Store(&cc)
		c = &cc
	}
	(*c).Inc()
	m.observers[source].Observe(d.Seconds())
}
