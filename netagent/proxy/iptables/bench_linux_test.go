package iptables_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// benchServices is the number of Services (3 endpoints each); set
// SKIFF_BENCH_SERVICES to change it.
func benchServices(b *testing.B) int {
	if s := os.Getenv("SKIFF_BENCH_SERVICES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 10000
}

func bigState(n int) *proxy.State {
	st := &proxy.State{
		Services:    map[proxy.ServicePortName]*proxy.ServicePort{},
		Endpoints:   map[proxy.ServicePortName][]proxy.Endpoint{},
		NodeName:    "node-a",
		NodeIPs:     []netip.Addr{nodeIP},
		ClusterCIDR: clusterCIDR,
		ServiceCIDR: serviceCIDR,
	}
	for i := range n {
		sp := svcPort(fmt.Sprintf("ns%d", i%10), fmt.Sprintf("svc%d", i), fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), nil)
		var eps []proxy.Endpoint
		for j := range 3 {
			k := i*3 + j
			eps = append(eps, proxy.Endpoint{IP: netip.AddrFrom4([4]byte{10, byte(244 + k/62500), byte(k / 250 % 250), byte(k%250 + 1)}),
				Port: 8080, Ready: true, Serving: true})
		}
		st.Services[sp.Name], st.Endpoints[sp.Name] = sp, eps
	}
	return st
}

// recordingExec passes commands to an OSExec and keeps the last restore
// input and every command that changes the rules (see writes).
type recordingExec struct {
	iptables.OSExec
	mu     sync.Mutex
	last   []byte
	writes []execCall
}

// execCall is one command run through an Exec.
type execCall struct {
	stdin []byte
	name  string
	args  []string
}

func (r *recordingExec) Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	r.mu.Lock()
	if strings.HasSuffix(name, "-restore") && stdin != nil {
		r.last = stdin
	}
	if changesRules(stdin, name, args) {
		r.writes = append(r.writes, execCall{stdin: stdin, name: name, args: args})
	}
	r.mu.Unlock()
	return r.OSExec.Run(ctx, stdin, name, args...)
}

// changesRules tells a restore, or an iptables command that adds, inserts,
// deletes, creates, flushes or removes, from the reads (-S, -save,
// --version).
func changesRules(stdin []byte, name string, args []string) bool {
	if strings.HasSuffix(name, "-save") {
		return false
	}
	if strings.HasSuffix(name, "-restore") {
		return stdin != nil
	}
	for _, a := range args {
		switch a {
		case "-A", "-I", "-D", "-N", "-X", "-F":
			return true
		}
	}
	return false
}

// takeWrites returns the commands recorded since the last call.
func (r *recordingExec) takeWrites() []execCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.writes
	r.writes = nil
	return w
}

// replay runs calls, in order, in the namespace ns, and returns their wall
// and CPU time: the raw load of what a sync sent, without the backend.
func replay(b *testing.B, ns *proxytest.NetNS, calls []execCall) (wall, cpu time.Duration) {
	b.Helper()
	ex := iptables.OSExec{NetNS: ns.Path}
	c0 := childCPU()
	start := time.Now()
	for _, c := range calls {
		if out, err := ex.Run(context.Background(), c.stdin, c.name, c.args...); err != nil {
			b.Fatalf("replaying %s %v: %v\n%s", c.name, c.args, err, out)
		}
	}
	return time.Since(start), childCPU() - c0
}

// oneTransaction merges the blocks of a restore input per table, the way
// a hand-written dump of the same rules would be loaded, without the
// jumps from built-in chains and the chain deletions.
func oneTransaction(in []byte) []byte {
	decls, lines := map[string][]string{}, map[string][]string{}
	var order []string
	table := ""
	for _, l := range strings.Split(string(in), "\n") {
		switch {
		case strings.HasPrefix(l, "*"):
			table = l[1:]
			if _, ok := decls[table]; !ok {
				order = append(order, table)
				decls[table] = nil
			}
		case strings.HasPrefix(l, ":"):
			decls[table] = append(decls[table], l)
		case strings.HasPrefix(l, "-A "):
			lines[table] = append(lines[table], l)
		}
	}
	var b bytes.Buffer
	for _, t := range order {
		fmt.Fprintf(&b, "*%s\n%s\n", t, strings.Join(decls[t], "\n"))
		for _, l := range lines[t] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteString("COMMIT\n")
	}
	return b.Bytes()
}

func timeRestore(b *testing.B, ns *proxytest.NetNS, mode iptables.Mode, in []byte, args ...string) (wall, cpu time.Duration) {
	b.Helper()
	c0 := childCPU()
	start := time.Now()
	if _, err := (iptables.OSExec{NetNS: ns.Path}).Run(context.Background(), in, "iptables-"+string(mode)+"-restore", append([]string{"-w"}, args...)...); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), childCPU() - c0
}

// childCPU is the user+system CPU time of the waited-for child processes
// (the iptables tools): less disturbed than wall time on a busy machine.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childUserSys is childCPU split into user and system time.
func childUserSys() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// BenchmarkFullSync: a full sync of N Services × 3 endpoints over the
// rules of the previous one (the periodic sync), inside a test network
// namespace, against a raw iptables-restore of the same rules in one
// transaction (a plain restore into an empty namespace and over the same
// rules). Reports sync-s, raw-empty-s, raw-over-s and x-raw (the ratio to
// the raw load over existing rules).
//
//	go test -run '^$' -bench FullSync -benchtime 1x ./netagent/proxy/iptables/
func BenchmarkFullSync(b *testing.B) {
	for _, mode := range []iptables.Mode{iptables.ModeNFT, iptables.ModeLegacy} {
		b.Run(string(mode), func(b *testing.B) {
			n := benchServices(b)
			ns := proxytest.NewNetNS(b, "bench")
			ex := &recordingExec{OSExec: iptables.OSExec{NetNS: ns.Path}}
			split, _ := strconv.Atoi(os.Getenv("SKIFF_BENCH_SPLIT"))
			be, err := iptables.New(context.Background(), iptables.Config{Exec: ex, Mode: mode, MaxChainsPerTransaction: split})
			if err != nil {
				b.Fatal(err)
			}
			st := bigState(n)
			c0 := childCPU()
			start := time.Now()
			if err := be.Sync(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			first, firstCPU := time.Since(start), childCPU()-c0
			firstStats := be.LastStats()
			if err := be.Sync(context.Background(), st, nil); err != nil { // warm up
				b.Fatal(err)
			}
			raw := oneTransaction(ex.last)
			if f := os.Getenv("SKIFF_BENCH_DUMP"); f != "" {
				_ = os.WriteFile(f, ex.last, 0o644)
				_ = os.WriteFile(f+".raw", raw, 0o644)
			}
			// The raw loads run in their own namespace, alternating with
			// the syncs, so that both see the same machine load.
			rawNS := proxytest.NewNetNS(b, "raw")
			rawEmpty, rawEmptyCPU := timeRestore(b, rawNS, mode, raw)
			var syncWall, syncCPU, rawWall, rawCPU time.Duration
			b.ResetTimer()
			for b.Loop() {
				c := childCPU()
				s := time.Now()
				if err := be.Sync(context.Background(), st, nil); err != nil {
					b.Fatal(err)
				}
				syncWall += time.Since(s)
				syncCPU += childCPU() - c
				b.StopTimer()
				w, cpu := timeRestore(b, rawNS, mode, raw)
				rawWall += w
				rawCPU += cpu
				b.StartTimer()
			}
			b.StopTimer()
			k := time.Duration(b.N)
			stats := be.LastStats()
			b.ReportMetric(first.Seconds(), "first-sync-s")
			b.ReportMetric(firstCPU.Seconds(), "first-sync-cpu-s")
			b.ReportMetric(firstStats.Restore.Seconds(), "first-restore-s")
			b.ReportMetric(rawEmpty.Seconds(), "raw-empty-s")
			b.ReportMetric(rawEmptyCPU.Seconds(), "raw-empty-cpu-s")
			b.ReportMetric((syncWall / k).Seconds(), "sync-s")
			b.ReportMetric((syncCPU / k).Seconds(), "sync-cpu-s")
			b.ReportMetric((rawWall / k).Seconds(), "raw-over-s")
			b.ReportMetric((rawCPU / k).Seconds(), "raw-over-cpu-s")
			b.ReportMetric(syncWall.Seconds()/rawWall.Seconds(), "x-raw")
			b.ReportMetric(syncCPU.Seconds()/rawCPU.Seconds(), "x-raw-cpu")
			b.ReportMetric(first.Seconds()/rawEmpty.Seconds(), "x-raw-first")
			b.ReportMetric(float64(stats.Transactions), "transactions")
			b.ReportMetric(float64(stats.Bytes)/1e6, "MB")
		})
	}
}

// BenchmarkPartialSync: the sync after one endpoint of one Service
// changed, with N Services programmed, inside a test network namespace.
//
// Its floor, in the same run: a second namespace gets every command that
// changed the rules of the first (the full sync's, then each partial
// sync's, the restores with their --noflush), so it holds the same rules
// at every step, and each partial sync's commands are replayed there and
// timed: the kernel's and iptables-restore's share of the same change from
// the same rules, without the backend. Reports raw-ms (wall per sync),
// raw-cpu-ms and over-raw (ms/sync over raw-ms).
//
//	go test -run '^$' -bench PartialSync -benchtime 20x ./netagent/proxy/iptables/
func BenchmarkPartialSync(b *testing.B) {
	for _, mode := range []iptables.Mode{iptables.ModeNFT, iptables.ModeLegacy} {
		b.Run(string(mode), func(b *testing.B) {
			n := benchServices(b)
			ns := proxytest.NewNetNS(b, "bench")
			ex := &recordingExec{OSExec: iptables.OSExec{NetNS: ns.Path}}
			be, err := iptables.New(context.Background(), iptables.Config{Exec: ex, Mode: mode})
			if err != nil {
				b.Fatal(err)
			}
			st := bigState(n)
			if err := be.Sync(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			rawNS := proxytest.NewNetNS(b, "raw")
			replay(b, rawNS, ex.takeWrites())
			var rawWall, rawCPU time.Duration
			var names []proxy.ServicePortName
			for name := range st.Services {
				names = append(names, name)
			}
			i := 0
			c0 := childCPU()
			u0, s0 := childUserSys()
			b.ResetTimer()
			for b.Loop() {
				name := names[i%len(names)]
				eps := append([]proxy.Endpoint(nil), st.Endpoints[name]...)
				eps[2].IP = netip.AddrFrom4([4]byte{10, 250, byte(i / 250 % 250), byte(i%250 + 1)})
				st.Endpoints[name] = eps
				i++
				if err := be.Sync(context.Background(), st, []proxy.ServicePortName{name}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				cs := childCPU()
				us, ss := childUserSys()
				w, cpu := replay(b, rawNS, ex.takeWrites())
				rawWall += w
				rawCPU += cpu
				// The replay's child CPU is not the sync's.
				ue, se := childUserSys()
				c0 += childCPU() - cs
				u0 += ue - us
				s0 += se - ss
				b.StartTimer()
			}
			msPerSync := float64(b.Elapsed().Microseconds()) / 1000 / float64(b.N)
			b.ReportMetric(msPerSync, "ms/sync")
			b.ReportMetric(float64((childCPU()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/sync")
			rawMs := float64(rawWall.Microseconds()) / 1000 / float64(b.N)
			b.ReportMetric(rawMs, "raw-ms")
			b.ReportMetric(float64(rawCPU.Microseconds())/1000/float64(b.N), "raw-cpu-ms")
			if rawMs > 0 {
				b.ReportMetric(msPerSync/rawMs, "over-raw")
			}
			u1, s1 := childUserSys()
			b.ReportMetric(float64((u1-u0).Microseconds())/1000/float64(b.N), "user-ms/sync")
			b.ReportMetric(float64((s1-s0).Microseconds())/1000/float64(b.N), "sys-ms/sync")
			if f := os.Getenv("SKIFF_BENCH_DUMP"); f != "" {
				_ = os.WriteFile(f+".partial", ex.last, 0o644)
			}
			st2 := be.LastStats()
			b.ReportMetric(float64(st2.Restore.Microseconds())/1000, "last-restore-ms")
			b.ReportMetric(float64(st2.Bytes), "last-bytes")
		})
	}
}
