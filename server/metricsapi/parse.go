package metricsapi

import (
	"fmt"
	"io"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Point is one reading of a node or a container.
type Point struct {
	Timestamp      time.Time
	CPUNanoseconds uint64 // cumulative
	MemoryBytes    uint64 // working set
	StartTime      time.Time
}

// ContainerKey names a container of a pod.
type ContainerKey struct{ Namespace, Pod, Container string }

// PodKey names a pod.
type PodKey struct{ Namespace, Name string }

// NodeScrape is what one node's /metrics/resource held.
type NodeScrape struct {
	Node       *Point // nil: the node reported no complete reading
	Containers map[ContainerKey]Point
}

// Parse reads the Prometheus text of /metrics/resource. A sample without
// a timestamp is stamped with scrapedAt. A node or container is kept only
// with both its cpu and its memory; a negative or non-finite value drops
// it.
func Parse(r io.Reader, scrapedAt time.Time) (NodeScrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return NodeScrape{}, fmt.Errorf("metricsapi: parse: %w", err)
	}
	type partial struct {
		p              Point
		haveCPU, haveM bool
		bad            bool
	}
	sample := func(m *dto.Metric) (float64, time.Time, bool) {
		var v float64
		switch {
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		default:
			return 0, time.Time{}, false
		}
		t := scrapedAt
		if m.TimestampMs != nil {
			t = time.UnixMilli(m.GetTimestampMs())
		}
		return v, t, !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
	}
	var node partial
	for _, m := range fams["node_cpu_usage_seconds_total"].GetMetric() {
		v, t, ok := sample(m)
		node.bad = node.bad || !ok
		node.p.CPUNanoseconds, node.p.Timestamp, node.haveCPU = uint64(math.Round(v*1e9)), t, true
	}
	for _, m := range fams["node_memory_working_set_bytes"].GetMetric() {
		v, _, ok := sample(m)
		node.bad = node.bad || !ok
		node.p.MemoryBytes, node.haveM = uint64(v), true
	}
	out := NodeScrape{Containers: map[ContainerKey]Point{}}
	if node.haveCPU && node.haveM && !node.bad {
		n := node.p
		out.Node = &n
	}
	cs := map[ContainerKey]*partial{}
	get := func(m *dto.Metric) (*partial, bool) {
		var k ContainerKey
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "namespace":
				k.Namespace = l.GetValue()
			case "pod":
				k.Pod = l.GetValue()
			case "container":
				k.Container = l.GetValue()
			}
		}
		if k.Namespace == "" || k.Pod == "" || k.Container == "" {
			return nil, false
		}
		c := cs[k]
		if c == nil {
			c = &partial{}
			cs[k] = c
		}
		return c, true
	}
	for _, m := range fams["container_cpu_usage_seconds_total"].GetMetric() {
		if c, ok := get(m); ok {
			v, t, good := sample(m)
			c.bad = c.bad || !good
			c.p.CPUNanoseconds, c.p.Timestamp, c.haveCPU = uint64(math.Round(v*1e9)), t, true
		}
	}
	for _, m := range fams["container_memory_working_set_bytes"].GetMetric() {
		if c, ok := get(m); ok {
			v, _, good := sample(m)
			c.bad = c.bad || !good
			c.p.MemoryBytes, c.haveM = uint64(v), true
		}
	}
	for _, m := range fams["container_start_time_seconds"].GetMetric() {
		if c, ok := get(m); ok {
			if v, _, good := sample(m); good {
				sec, frac := math.Modf(v)
				c.p.StartTime = time.Unix(int64(sec), int64(frac*1e9))
			}
		}
	}
	for k, c := range cs {
		if c.haveCPU && c.haveM && !c.bad {
			out.Containers[k] = c.p
		}
	}
	return out, nil
}
