package cgroups

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// thisMachine is this development machine's /proc/self/mountinfo: cgroup
// v1 with cpu and cpuacct mounted apart and an empty v2 at
// /sys/fs/cgroup/unified (docs/platform.md).
const thisMachine = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestParseMountinfo(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Version
		mounts   map[string]string
	}{
		{"hybrid is v1", thisMachine, V1, map[string]string{
			"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct", "memory": "/sys/fs/cgroup/memory", "pids": "/sys/fs/cgroup/pids"}},
		{"cpu,cpuacct together", "30 23 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
			"31 23 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", V1, map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory"}},
		{"unified", "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", V2, map[string]string{"": "/sys/fs/cgroup"}},
		{"escaped mount point", `29 23 0:26 / /mnt/a\040b rw - cgroup2 cgroup2 rw` + "\n", V2, map[string]string{"": "/mnt/a b"}},
	} {
		fs, err := parseMountinfo(strings.NewReader(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if fs.Version() != tc.want || len(fs.mounts) != len(tc.mounts) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, fs.Version(), fs.mounts, tc.want, tc.mounts)
			continue
		}
		for k, v := range tc.mounts {
			if fs.mounts[k] != v {
				t.Errorf("%s: %s at %q, want %q", tc.name, k, fs.mounts[k], v)
			}
		}
	}
	if _, err := parseMountinfo(strings.NewReader("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n")); err == nil {
		t.Error("no cgroup mount: no error")
	}
}

func TestKubeletValues(t *testing.T) {
	for _, tc := range []struct {
		milli  int64
		shares uint64
		quota  int64
	}{{0, 2, 0}, {1, 2, 1000}, {5, 5, 1000}, {100, 102, 10000}, {250, 256, 25000}, {1000, 1024, 100000}, {300000, 262144, 30000000}} {
		if got := MilliCPUToShares(tc.milli); got != tc.shares {
			t.Errorf("shares(%d) = %d, want %d", tc.milli, got, tc.shares)
		}
		if got := MilliCPUToQuota(tc.milli, QuotaPeriod); got != tc.quota {
			t.Errorf("quota(%d) = %d, want %d", tc.milli, got, tc.quota)
		}
	}
	for shares, weight := range map[uint64]uint64{2: 1, 1024: 39, 262144: 10000} {
		if got := SharesToWeight(shares); got != weight {
			t.Errorf("weight(%d) = %d, want %d", shares, got, weight)
		}
	}
}

func ctr(name string, req, lim api.ResourceList) api.Container {
	return api.Container{Name: name, Resources: api.ResourceRequirements{Requests: req, Limits: lim}}
}

func TestPodAndContainerResources(t *testing.T) {
	g := api.ResourceList{"cpu": "500m", "memory": "64Mi"}
	for _, tc := range []struct {
		name     string
		spec     api.PodSpec
		pod, c0  runtime.Resources
		wantPath string
	}{
		{"guaranteed", api.PodSpec{Containers: []api.Container{ctr("a", g, g), ctr("b", nil, g)}},
			runtime.Resources{CPUShares: 1024, CPUQuota: 100000, CPUPeriod: QuotaPeriod, MemoryLimit: 128 << 20},
			runtime.Resources{CPUShares: 512, CPUQuota: 50000, CPUPeriod: QuotaPeriod, MemoryLimit: 64 << 20},
			"/kubepods/pod1"},
		{"burstable, one without limits", api.PodSpec{Containers: []api.Container{ctr("a", api.ResourceList{"cpu": "250m"}, g), ctr("b", nil, nil)}},
			runtime.Resources{CPUShares: 256},
			runtime.Resources{CPUShares: 256, CPUQuota: 50000, CPUPeriod: QuotaPeriod, MemoryLimit: 64 << 20},
			"/kubepods/burstable/pod1"},
		{"init container larger", api.PodSpec{
			InitContainers: []api.Container{ctr("i", nil, api.ResourceList{"cpu": "2", "memory": "1Gi"})},
			Containers:     []api.Container{ctr("a", nil, g)}},
			runtime.Resources{CPUShares: 2048, CPUQuota: 200000, CPUPeriod: QuotaPeriod, MemoryLimit: 1 << 30},
			runtime.Resources{CPUShares: 512, CPUQuota: 50000, CPUPeriod: QuotaPeriod, MemoryLimit: 64 << 20},
			"/kubepods/pod1"}, // every container limits both, requests = limits
		{"best effort", api.PodSpec{Containers: []api.Container{ctr("a", nil, nil)}},
			runtime.Resources{CPUShares: 2}, runtime.Resources{CPUShares: 2}, "/kubepods/besteffort/pod1"},
	} {
		qos := api.PodQOSClass(&tc.spec)
		if got := PodResources(&tc.spec, qos); got != tc.pod {
			t.Errorf("%s: pod %+v, want %+v", tc.name, got, tc.pod)
		}
		if got := ContainerResources(&tc.spec.Containers[0]); got != tc.c0 {
			t.Errorf("%s: container %+v, want %+v", tc.name, got, tc.c0)
		}
		if got := PodParent("/", qos, "1"); got != tc.wantPath {
			t.Errorf("%s: path %s, want %s", tc.name, got, tc.wantPath)
		}
	}
	if got := PodParent("/skiff", api.PodQOSGuaranteed, "u"); got != "/skiff/kubepods/podu" {
		t.Errorf("under a cgroup root: %s", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// fakeV2 is a cgroup2 tree as the kernel shows it in a temporary
// directory: each cgroup on the path has cgroup.controllers (what its
// parent enabled: here everything, as on a v2 host) and an empty
// cgroup.subtree_control.
func fakeV2(t *testing.T, cg string) string {
	t.Helper()
	root := t.TempDir()
	dir := root
	for _, p := range append([]string{""}, strings.Split(strings.Trim(cg, "/"), "/")...) {
		dir = filepath.Join(dir, p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{"cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc", "cgroup.subtree_control": ""} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestEnsureV2(t *testing.T) {
	cg := "/kubepods/burstable/podu/c1"
	root := fakeV2(t, cg)
	fs := newFS(V2, map[string]string{"": root})
	if err := fs.Ensure(cg, runtime.Resources{CPUShares: 512, CPUQuota: 50000, CPUPeriod: QuotaPeriod, MemoryLimit: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "kubepods/burstable/podu/c1")
	for f, want := range map[string]string{"cpu.weight": "20", "cpu.max": "50000 100000", "memory.max": "67108864"} {
		if got := readFile(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	for _, anc := range []string{"", "kubepods", "kubepods/burstable", "kubepods/burstable/podu"} {
		if got := readFile(t, filepath.Join(root, anc, "cgroup.subtree_control")); got != "+cpu +memory +pids" {
			t.Errorf("%s/cgroup.subtree_control = %q", anc, got)
		}
	}
	if got := readFile(t, filepath.Join(dir, "cgroup.subtree_control")); got != "" {
		t.Errorf("the leaf enabled controllers for children: %q", got)
	}
	if err := fs.Ensure(cg, runtime.Resources{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "cpu.max")) + "|" + readFile(t, filepath.Join(dir, "memory.max")); got != "max 100000|max" {
		t.Errorf("limits not reset: %s", got)
	}
	if fs.V2Dir(cg) != dir {
		t.Errorf("V2Dir %s", fs.V2Dir(cg))
	}
}

func TestEnsureV2ControllerMissing(t *testing.T) {
	root := fakeV2(t, "/kubepods")
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("hugetlb"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := newFS(V2, map[string]string{"": root})
	// The kernel makes no cpu.max where cpu is not enabled; the fake's
	// directory has none either, but a plain file write would create
	// one: refuse it by making the leaf's cpu.weight a directory.
	if err := os.MkdirAll(filepath.Join(root, "kubepods", "cpu.weight"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.Ensure("/kubepods", runtime.Resources{CPUShares: 2}); err == nil {
		t.Error("no error where cpu.weight cannot be written")
	}
	if got := readFile(t, filepath.Join(root, "cgroup.subtree_control")); got != "" {
		t.Errorf("enabled controllers the root does not have: %q", got)
	}
}

func TestStatsV1FromFiles(t *testing.T) {
	root := t.TempDir()
	m := map[string]string{}
	for _, c := range []string{"cpu", "cpuacct", "memory", "pids"} {
		m[c] = filepath.Join(root, c)
	}
	fs := newFS(V1, m)
	dir := func(c string) string { return filepath.Join(root, c, "kubepods", "podu", "c") }
	for f, v := range map[string]string{
		dir("cpuacct") + "/cpuacct.usage":        "123456789\n",
		dir("cpu") + "/cpu.stat":                 "nr_periods 10\nnr_throttled 4\nthrottled_time 5000\n",
		dir("memory") + "/memory.usage_in_bytes": "1000000\n",
		dir("memory") + "/memory.stat":           "cache 10\ntotal_inactive_file 400000\n",
		dir("memory") + "/memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := fs.Stats("/kubepods/podu/c")
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{CPUUsageNanos: 123456789, MemoryUsage: 1000000, WorkingSet: 600000, OOMKills: 2, ThrottledPeriods: 4, ThrottledNanos: 5000}
	if s != want {
		t.Errorf("stats %+v, want %+v", s, want)
	}
	if len(fs.Dirs("/kubepods/podu/c")) != 4 {
		t.Errorf("dirs %v", fs.Dirs("/kubepods/podu/c"))
	}
}
