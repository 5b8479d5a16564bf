package metricsapi

import (
	"strings"
	"testing"
	"time"
)

const sample = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="ns1",pod="web"} 1.5 1700000000123
container_cpu_usage_seconds_total{container="nomem",namespace="ns1",pod="web"} 1 1700000000123
container_cpu_usage_seconds_total{container="neg",namespace="ns1",pod="web"} -1 1700000000123
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="ns1",pod="web"} 4096 1700000000123
container_memory_working_set_bytes{container="neg",namespace="ns1",pod="web"} 4096 1700000000123
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="ns1",pod="web"} 1.6999990005e+09 1699999000500
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 100.25
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.073741824e+09 1700000000123
# TYPE scrape_error gauge
scrape_error 0
`

func TestParse(t *testing.T) {
	at := time.UnixMilli(1_700_000_005_000)
	got, err := Parse(strings.NewReader(sample), at)
	if err != nil {
		t.Fatal(err)
	}
	if got.Node == nil || got.Node.CPUNanoseconds != 100_250_000_000 || got.Node.MemoryBytes != 1<<30 || !got.Node.Timestamp.Equal(at) {
		t.Errorf("node: %+v (a sample without a timestamp takes the scrape's)", got.Node)
	}
	app := ContainerKey{"ns1", "web", "app"}
	want := Point{Timestamp: time.UnixMilli(1_700_000_000_123), CPUNanoseconds: 1_500_000_000, MemoryBytes: 4096,
		StartTime: time.Unix(1_699_999_000, 500_000_000)}
	if p := got.Containers[app]; !p.Timestamp.Equal(want.Timestamp) || p.CPUNanoseconds != want.CPUNanoseconds ||
		p.MemoryBytes != want.MemoryBytes || p.StartTime.Sub(want.StartTime).Abs() > time.Millisecond {
		t.Errorf("app: %+v, want %+v", p, want)
	}
	if len(got.Containers) != 1 {
		t.Errorf("containers %v: one without memory and one negative must be dropped", got.Containers)
	}
	if _, err := Parse(strings.NewReader("node_cpu_usage_seconds_total{ 1\n"), at); err == nil {
		t.Error("bad text parsed")
	}
	empty, err := Parse(strings.NewReader(""), at)
	if err != nil || empty.Node != nil || len(empty.Containers) != 0 {
		t.Errorf("empty: %+v, %v", empty, err)
	}
}

func TestRates(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	start := t0.Add(-time.Hour)
	pt := func(sec float64, cpu uint64, mem uint64, started time.Time) Point {
		return Point{Timestamp: t0.Add(time.Duration(sec * float64(time.Second))), CPUNanoseconds: cpu, MemoryBytes: mem, StartTime: started}
	}
	for _, tc := range []struct {
		name   string
		points []Point // one scrape each
		want   *Usage  // nil: no usage
	}{
		{name: "one scrape is not enough", points: []Point{pt(0, 1e9, 10, start)}},
		{name: "two scrapes give the rate",
			points: []Point{pt(0, 1e9, 10, start), pt(15, 1e9+3e9, 20, start)},
			want:   &Usage{Timestamp: t0.Add(15 * time.Second), Window: 15 * time.Second, NanoCores: 200_000_000, MemoryBytes: 20}},
		{name: "the rate is over the last two",
			points: []Point{pt(0, 0, 1, start), pt(10, 10e9, 2, start), pt(20, 15e9, 3, start)},
			want:   &Usage{Timestamp: t0.Add(20 * time.Second), Window: 10 * time.Second, NanoCores: 500_000_000, MemoryBytes: 3}},
		{name: "a counter reset drops the pair",
			points: []Point{pt(0, 5e9, 1, start), pt(15, 1e9, 2, start)}},
		{name: "after a reset the next scrape pairs again",
			points: []Point{pt(0, 5e9, 1, start), pt(15, 1e9, 2, start), pt(30, 2.5e9, 3, start)},
			want:   &Usage{Timestamp: t0.Add(30 * time.Second), Window: 15 * time.Second, NanoCores: 100_000_000, MemoryBytes: 3}},
		{name: "a container restart drops the pair",
			points: []Point{pt(0, 5e9, 1, start), pt(15, 6e9, 2, t0.Add(10*time.Second))}},
		{name: "after a restart the next scrape pairs again",
			points: []Point{pt(0, 5e9, 1, start), pt(15, 1e9, 2, t0.Add(10*time.Second)), pt(30, 4e9, 3, t0.Add(10*time.Second))},
			want:   &Usage{Timestamp: t0.Add(30 * time.Second), Window: 15 * time.Second, NanoCores: 200_000_000, MemoryBytes: 3}},
		{name: "the same reading again keeps the previous",
			points: []Point{pt(0, 0, 1, start), pt(10, 10e9, 2, start), pt(10, 10e9, 2, start)},
			want:   &Usage{Timestamp: t0.Add(10 * time.Second), Window: 10 * time.Second, NanoCores: 1e9, MemoryBytes: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore()
			k := ContainerKey{"ns", "p", "c"}
			for _, p := range tc.points {
				n := p
				s.Add(Batch{"n1": {Node: &n, Containers: map[ContainerKey]Point{k: p}}})
			}
			nu, nok := s.Node("n1")
			pu, pok := s.Pod(PodKey{"ns", "p"})
			if tc.want == nil {
				if pok {
					t.Errorf("pod usage %+v, want none", pu)
				}
				return
			}
			if !pok || len(pu.Containers) != 1 || pu.Containers[0].Usage != *tc.want || pu.Window != tc.want.Window {
				t.Errorf("pod usage %+v (%v), want %+v", pu, pok, *tc.want)
			}
			// A node has no start time: the same rule without restarts.
			if !strings.Contains(tc.name, "restart") && (!nok || nu != *tc.want) {
				t.Errorf("node usage %+v (%v), want %+v", nu, nok, *tc.want)
			}
		})
	}
}

func TestPodNeedsEveryContainer(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	s := NewStore()
	a, b := ContainerKey{"ns", "p", "a"}, ContainerKey{"ns", "p", "b"}
	s.Add(Batch{"n1": {Containers: map[ContainerKey]Point{a: {Timestamp: t0}}}})
	s.Add(Batch{"n1": {Containers: map[ContainerKey]Point{a: {Timestamp: t0.Add(time.Second), CPUNanoseconds: 1}, b: {Timestamp: t0.Add(time.Second)}}}})
	if u, ok := s.Pod(PodKey{"ns", "p"}); ok {
		t.Errorf("pod with a new container has usage %+v", u)
	}
	s.Add(Batch{"n1": {Containers: map[ContainerKey]Point{a: {Timestamp: t0.Add(2 * time.Second), CPUNanoseconds: 2}, b: {Timestamp: t0.Add(2 * time.Second)}}}})
	if u, ok := s.Pod(PodKey{"ns", "p"}); !ok || len(u.Containers) != 2 || u.Containers[0].Name != "a" || u.Containers[0].NanoCores != 1 {
		t.Errorf("pod: %+v, %v", u, ok)
	}
	// A node that does not answer takes its pods along.
	s.Add(Batch{})
	if _, ok := s.Pod(PodKey{"ns", "p"}); ok {
		t.Error("pod of a silent node still has usage")
	}
}

func TestQuantities(t *testing.T) {
	for _, tc := range []struct {
		cpu  uint64
		want string
	}{{0, "0"}, {12345, "12345n"}, {5_000_000, "5m"}, {250_000_000, "250m"}, {2_000_000_000, "2"}, {1_500_000_000, "1500m"}, {7000, "7u"}} {
		if got := CPUQuantity(tc.cpu); got != tc.want {
			t.Errorf("CPUQuantity(%d) = %q, want %q", tc.cpu, got, tc.want)
		}
	}
	for _, tc := range []struct {
		mem  uint64
		want string
	}{{0, "0"}, {1000, "1000"}, {4096, "4Ki"}, {38170624, "37276Ki"}, {1 << 30, "1Gi"}, {1536, "1536"}} {
		if got := MemoryQuantity(tc.mem); got != tc.want {
			t.Errorf("MemoryQuantity(%d) = %q, want %q", tc.mem, got, tc.want)
		}
	}
}
