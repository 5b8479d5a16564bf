package metricsapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// nodeText is the /metrics/resource of a node running pods pods of two
// containers each.
func nodeText(ns string, pods int, cpu float64, ms int64) string {
	var b strings.Builder
	for p := range pods {
		for _, c := range []string{"app", "side"} {
			l := fmt.Sprintf("{container=%q,namespace=%q,pod=\"pod-%d\"}", c, ns, p)
			fmt.Fprintf(&b, "container_cpu_usage_seconds_total%s %g %d\n", l, cpu, ms)
			fmt.Fprintf(&b, "container_memory_working_set_bytes%s 4.194304e+07 %d\n", l, ms)
			fmt.Fprintf(&b, "container_start_time_seconds%s 1.7e+09 %d\n", l, ms)
		}
	}
	fmt.Fprintf(&b, "node_cpu_usage_seconds_total %g %d\nnode_memory_working_set_bytes 1e9 %d\n", cpu, ms, ms)
	return b.String()
}

// BenchmarkParse is the server's cost of one node's scrape (110 pods, the
// kubelet's default maximum, of two containers).
func BenchmarkParse(b *testing.B) {
	text := nodeText("ns", 110, 12.5, 1_700_000_000_000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(strings.NewReader(text), time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreAdd is adding one round of 10 such nodes and reading
// every pod's usage back.
func BenchmarkStoreAdd(b *testing.B) {
	batch := Batch{}
	for n := range 10 {
		ns, err := Parse(strings.NewReader(nodeText(fmt.Sprint("ns-", n), 110, 1, 1_700_000_000_000)), time.Now())
		if err != nil {
			b.Fatal(err)
		}
		batch[fmt.Sprint("node-", n)] = ns
	}
	s := NewStore()
	for b.Loop() {
		s.Add(batch)
		for p := range 110 {
			s.Pod(PodKey{"ns-0", fmt.Sprint("pod-", p)})
		}
	}
}
