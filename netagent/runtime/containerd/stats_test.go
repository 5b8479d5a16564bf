package containerd

import (
	"testing"

	v1 "github.com/containerd/cgroups/v3/cgroup1/stats"
	"github.com/containerd/typeurl/v2"
)

func TestUsageOfCgroup1Metrics(t *testing.T) {
	for _, tc := range []struct {
		name          string
		m             *v1.Metrics
		cpu, workingS uint64
	}{
		{name: "working set is usage minus inactive file",
			m:   &v1.Metrics{CPU: &v1.CPUStat{Usage: &v1.CPUUsage{Total: 1234}}, Memory: &v1.MemoryStat{TotalInactiveFile: 100, Usage: &v1.MemoryEntry{Usage: 1100}}},
			cpu: 1234, workingS: 1000},
		{name: "inactive file above usage is 0",
			m:   &v1.Metrics{CPU: &v1.CPUStat{Usage: &v1.CPUUsage{Total: 1}}, Memory: &v1.MemoryStat{TotalInactiveFile: 5000, Usage: &v1.MemoryEntry{Usage: 1100}}},
			cpu: 1, workingS: 0},
		{name: "no memory", m: &v1.Metrics{CPU: &v1.CPUStat{Usage: &v1.CPUUsage{Total: 7}}}, cpu: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := typeurl.MarshalAny(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			u, err := usageOf(a)
			if err != nil {
				t.Fatal(err)
			}
			if u.CPUNanoseconds != tc.cpu || u.MemoryWorkingSetBytes != tc.workingS {
				t.Errorf("got %+v, want cpu %d, working set %d", u, tc.cpu, tc.workingS)
			}
		})
	}
	if _, err := usageOf(nil); err == nil {
		t.Error("no data gave no error")
	}
}
