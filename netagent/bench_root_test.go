package netagent_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/benchfloor"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

// buildSkiff builds cmd/skiff into a temp dir as `make build` does (static,
// CGO_ENABLED=0 -trimpath -tags grpcnotrace -ldflags '-s -w'), with the
// build tags in $SKIFF_BENCH_TAGS (e.g. skiff_nocontainerd) added.
func buildSkiff(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "skiff")
	tags := strings.Join(slices.DeleteFunc([]string{"grpcnotrace", os.Getenv("SKIFF_BENCH_TAGS")}, func(s string) bool { return s == "" }), ",")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-tags", tags, "-o", out, "../cmd/skiff")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("go build ./cmd/skiff: %v", err)
	}
	return out
}

// vmKB reads a /proc/<pid>/status field in kB.
func vmKB(pid int, field string) int64 { return procKB(pid, "status", field) }

// procKB reads a "Field: N kB" line of /proc/<pid>/<file> (status,
// smaps_rollup).
func procKB(pid int, file, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// binaryWorkingSetKB is how much of the process's executable mapping it
// touches in window: the accessed bits are cleared (/proc/<pid>/clear_refs,
// which changes nothing else), then the Referenced kB of the mappings of
// exe are summed from smaps. VmRSS counts every page of the binary mapped
// since the start, including the kernel's fault-around neighbours; this
// is what the process still uses.
func binaryWorkingSetKB(pid int, exe string, window time.Duration) int64 {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("1"), 0); err != nil {
		return 0
	}
	time.Sleep(window)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0
	}
	var kb int64
	inExe := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			inExe = len(f) == 6 && f[5] == exe
		case inExe && len(f) == 3 && f[0] == "Referenced:":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			kb += n
		}
	}
	return kb
}

// cpuTicks reads a process's utime+stime and its reaped children's
// cutime+cstime (clock ticks) from /proc/<pid>/stat.
func cpuTicks(pid int) (self, children int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	// Fields after the command: state is f[0]; utime is field 14 overall.
	return n(11) + n(12), n(13) + n(14)
}

// machineBusy is the busy ticks of all CPUs (/proc/stat).
func machineBusy() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy
}

// BenchmarkPodsReady100 creates 100 netexec pods (httpGet readiness probe,
// period 1s) for one node running `skiff agent --runtime process` as its
// own process, its network in a test-made node namespace, and reports the
// creation-to-Ready latency (p50, p99) and the agent's RSS with the 100
// pods running. Root only. Run:
//
//	go test -run '^$' -bench PodsReady100 -benchtime 1x ./netagent
//
// In the same run, with the agent stopped, it measures the floor this
// machine puts under that figure (package internal/benchfloor: the same
// 100 CNI adds and `skiff netexec` starts, each then polled over HTTP, with
// no API server, agent or probe worker) and reports it with the ratio
// p99-over-floor-p99, the figure that holds from one machine to another.
//
// and, for the agent built without the containerd runtime,
//
//	SKIFF_BENCH_TAGS=skiff_nocontainerd go test -run '^$' -bench PodsReady100 -benchtime 1x ./netagent
func BenchmarkPodsReady100(b *testing.B) {
	requireNode(b)
	const pods = 100
	bin := buildSkiff(b)
	s := startServer(b)
	admin, err := s.Client()
	if err != nil {
		b.Fatal(err)
	}
	ns := netnstest.NewNode(b)
	dir := b.TempDir()
	tokenFile, caFile := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(tokenFile, []byte(s.Bundle().NodeToken), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(caFile, s.Bundle().CACertPEM, 0o600); err != nil {
		b.Fatal(err)
	}
	var agentLog lockedBuffer
	agent := exec.Command(bin, "agent", "--server", s.URL(), "--token-file", tokenFile, "--server-ca", caFile,
		"--node-name", "bench", "--node-ip", "192.0.2.10", "--data-dir", filepath.Join(dir, "agent"),
		"--runtime", "process", "--netns", ns.Path, "--node-api-listen", "127.0.0.1:0",
		"--metrics-bind-address", "127.0.0.1:0", "--healthz-bind-address", "127.0.0.1:0")
	agent.Stdout, agent.Stderr = &agentLog, &agentLog
	if err := agent.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	stopAgent := func() {
		if stopped {
			return
		}
		stopped = true
		_ = agent.Process.Signal(syscall.SIGTERM)
		_ = agent.Wait()
	}
	b.Cleanup(stopAgent)
	ctx := context.Background()
	var node api.Node
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := admin.Get(ctx, resNodes, "", "bench", &node)
		if err == nil && len(node.Status.Conditions) > 0 && node.Status.Conditions[0].Status == api.ConditionTrue {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("agent not Ready: %v\n%s", err, agentLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	var p99 time.Duration
	for i := 0; i < b.N; i++ {
		var mu sync.Mutex
		created := map[string]time.Time{}
		ready := map[string]time.Time{}
		ictx, cancel := context.WithCancel(ctx)
		inf := client.NewInformer(admin, resPods, client.InformerOptions{Namespace: "default"})
		seen := func(obj api.Object) {
			p := obj.(*api.Pod)
			if podReady(p) {
				mu.Lock()
				if _, ok := ready[p.Name]; !ok {
					ready[p.Name] = time.Now()
				}
				mu.Unlock()
			}
		}
		inf.AddEventHandler(client.HandlerFuncs{AddFunc: seen, UpdateFunc: func(_, o api.Object) { seen(o) }})
		infDone := make(chan struct{})
		go func() { _ = inf.Run(ictx); close(infDone) }()
		client.WaitForCacheSync(ictx, inf.HasSynced)

		b.ResetTimer()
		stopPerf := perfTaskClock(b, agent.Process.Pid)
		self0, _ := cpuTicks(os.Getpid())
		cpu0, child0 := cpuTicks(agent.Process.Pid)
		busy0 := machineBusy()
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, 10)
		for k := range pods {
			name := fmt.Sprintf("bench-%d-%03d", i, k)
			p := netexecPod(name, "netexec", "--http-port=8080", "--udp-port=8081")
			p.Spec.Containers[0].Command = []string{bin, "netexec", "--http-port=8080", "--udp-port=8081"}
			p.Spec.NodeName = "bench"
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				t0 := time.Now()
				if err := admin.Create(ctx, resPods, "default", p); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				created[name] = t0
				mu.Unlock()
			})
		}
		wg.Wait()
		for {
			mu.Lock()
			n := len(ready)
			mu.Unlock()
			if n == pods {
				break
			}
			if time.Since(start) > 3*time.Minute {
				b.Fatalf("%d/%d pods Ready after 3m\n%s", n, pods, tail(agentLog.String(), 40))
			}
			time.Sleep(20 * time.Millisecond)
		}
		all := time.Since(start)
		b.StopTimer()
		if nodeCPU, ok := stopPerf(); ok {
			// The agent and everything it started: the CNI plugins, the
			// pods' processes (dead threads included).
			b.ReportMetric(nodeCPU.Seconds()*1000/pods, "node-cpu-ms/pod")
		}
		cpu1, child1 := cpuTicks(agent.Process.Pid)
		self1, _ := cpuTicks(os.Getpid())
		busy1 := machineBusy()
		var podCPU time.Duration
		for _, pid := range childPids(agent.Process.Pid) {
			podCPU += runTime(pid)
		}
		_ = podCPU
		b.ReportMetric(float64(cpu1-cpu0)/100, "agent-cpu-s")
		b.ReportMetric(float64(child1-child0)/100, "agent-children-cpu-s")
		// The pods' processes still running (netexec serving its probes
		// and what ran before an exec in the same thread).
		b.ReportMetric(podCPU.Seconds(), "pods-cpu-s")
		// The benchmark process: the API server and the measurement.
		b.ReportMetric(float64(self1-self0)/100, "server-cpu-s")
		b.ReportMetric(float64(busy1-busy0)/100, "machine-busy-cpu-s")
		var lat []time.Duration
		mu.Lock()
		for name, t := range ready {
			lat = append(lat, t.Sub(created[name]))
		}
		mu.Unlock()
		slices.Sort(lat)
		// Where the time goes: created -> the runtime started the
		// container (the agent's log) -> Ready.
		startedAt := logStarts(agentLog.String())
		var toStart, toReady []time.Duration
		mu.Lock()
		for name, t := range ready {
			if s, ok := startedAt[name]; ok {
				toStart = append(toStart, s.Sub(created[name]))
				toReady = append(toReady, t.Sub(s))
			}
		}
		mu.Unlock()
		if len(toStart) > 0 {
			slices.Sort(toStart)
			slices.Sort(toReady)
			b.ReportMetric(float64(toStart[len(toStart)/2].Milliseconds()), "started-p50-ms")
			b.ReportMetric(float64(toStart[len(toStart)*99/100].Milliseconds()), "started-p99-ms")
			b.ReportMetric(float64(toReady[len(toReady)/2].Milliseconds()), "start-to-ready-p50-ms")
			b.ReportMetric(float64(toReady[len(toReady)*99/100].Milliseconds()), "start-to-ready-p99-ms")
		}
		time.Sleep(2 * time.Second) // let the agent settle before reading its memory
		rss, hwm := vmKB(agent.Process.Pid, "VmRSS"), vmKB(agent.Process.Pid, "VmHWM")
		b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		p99 = lat[len(lat)*99/100]
		b.ReportMetric(float64(p99.Milliseconds()), "p99-ms")
		b.ReportMetric(float64(all.Milliseconds()), "all-ready-ms")
		b.ReportMetric(float64(rss)/1024, "agent-rss-MB")
		b.ReportMetric(float64(hwm)/1024, "agent-peak-rss-MB")
		b.ReportMetric(float64(vmKB(agent.Process.Pid, "RssAnon"))/1024, "agent-rss-anon-MB")
		b.ReportMetric(float64(vmKB(agent.Process.Pid, "RssFile"))/1024, "agent-rss-file-MB")
		// PSS shares each page among the processes mapping it: the
		// binary's pages are shared with every pod running skiff netexec.
		b.ReportMetric(float64(procKB(agent.Process.Pid, "smaps_rollup", "Pss"))/1024, "agent-pss-MB")
		b.ReportMetric(float64(binaryWorkingSetKB(agent.Process.Pid, bin, 10*time.Second))/1024, "agent-binary-used-10s-MB")
		cancel()
		<-infDone

		// Delete them and wait until they are gone (not timed).
		one := int64(1)
		for k := range pods {
			name := fmt.Sprintf("bench-%d-%03d", i, k)
			if err := admin.Delete(ctx, resPods, "default", name, client.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
				b.Error(err)
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var list api.PodList
			if err := admin.List(ctx, resPods, "default", client.ListOptions{}, &list); err == nil && len(list.Items) == 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("pods not deleted after 2m\n%s", tail(agentLog.String(), 40))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	stopAgent()
	if f := os.Getenv("SKIFF_BENCH_AGENT_LOG"); f != "" {
		_ = os.WriteFile(f, agentLog.Bytes(), 0o644)
	}
	b.StopTimer()
	floor := podsFloor(b, bin, pods)
	b.ReportMetric(float64(floor.Percentile(50).Milliseconds()), "floor-p50-ms")
	b.ReportMetric(float64(floor.Percentile(99).Milliseconds()), "floor-p99-ms")
	b.ReportMetric(float64(floor.All.Milliseconds()), "floor-all-ready-ms")
	if f := floor.Percentile(99); f > 0 {
		b.ReportMetric(float64(p99)/float64(f), "p99-over-floor")
	}
}

// podsFloor runs the floor of pods netexec pods (package
// internal/benchfloor) in a node namespace of its own.
func podsFloor(b *testing.B, bin string, pods int) benchfloor.Result {
	b.Helper()
	node := netnstest.NewNode(b)
	f, res, err := benchfloor.Run(context.Background(), benchfloor.Options{
		NodeNetNS: node.Path, DataDir: b.TempDir(), Pods: pods,
		Command: []string{bin, "netexec", "--http-port=8080", "--udp-port=8081"}, Port: 8080,
	})
	if cerr := f.Close(); cerr != nil {
		b.Errorf("floor: close: %v", cerr)
	}
	if err != nil {
		b.Fatalf("floor: %v", err)
	}
	return res
}

// lockedBuffer is a bytes.Buffer the agent's output is copied into while
// the benchmark reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lockedBuffer) Bytes() []byte { return []byte(l.String()) }

// perfTaskClock counts the CPU time (task-clock) of pid and of every
// thread and process it starts from now on, dead or alive, with `perf
// stat -p` (counters are inherited by new tasks); stop ends the count.
// Without perf, stop reports false.
func perfTaskClock(b *testing.B, pid int) (stop func() (time.Duration, bool)) {
	path, err := exec.LookPath("perf")
	if err != nil {
		b.Log("no perf: node-cpu-ms/pod is not measured")
		return func() (time.Duration, bool) { return 0, false }
	}
	var out lockedBuffer
	cmd := exec.Command(path, "stat", "-e", "task-clock", "-x,", "-p", strconv.Itoa(pid))
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		b.Logf("perf stat: %v", err)
		return func() (time.Duration, bool) { return 0, false }
	}
	time.Sleep(200 * time.Millisecond) // let it attach
	return func() (time.Duration, bool) {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Split(line, ","); len(f) > 2 && f[2] == "task-clock" {
				ms, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return time.Duration(ms * float64(time.Millisecond)), true
				}
			}
		}
		b.Logf("perf stat said: %s", out.String())
		return 0, false
	}
}

// runTime is the CPU time of all of pid's threads so far, in nanoseconds
// (/proc/<pid>/task/*/schedstat): clock ticks are too coarse for a
// process that ran a few milliseconds.
func runTime(pid int) time.Duration {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			ns += n
		}
	}
	return time.Duration(ns)
}

// childPids lists the children of pid (by the parent pid in
// /proc/<child>/stat: a task's children file misses those whose thread
// has ended).
func childPids(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if n, err := strconv.Atoi(filepath.Base(filepath.Dir(st))); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// logStarts reads, from the agent's log, when the runtime started each
// pod's container (the log's time has millisecond resolution).
func logStarts(log string) map[string]time.Time {
	out := map[string]time.Time{}
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `msg="runtime/process: started"`) {
			continue
		}
		ts, ok := strings.CutPrefix(strings.Fields(line)[0], "time=")
		_, pod, ok2 := strings.Cut(line, " pod=")
		if !ok || !ok2 {
			continue
		}
		t, err := time.Parse("2006-01-02T15:04:05.000Z07:00", ts)
		if err != nil {
			continue
		}
		pod = strings.Fields(pod)[0]
		if _, name, ok := strings.Cut(pod, "/"); ok {
			out[name] = t
		}
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
