package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	mdns "github.com/miekg/dns"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "dnsbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "serve" {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		p := paramFlags(fs)
		addr := fs.String("listen", "127.0.0.1:0", "address to serve on (UDP and TCP; -mode store)")
		mode := fs.String("mode", "store", "store or server")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := p.validate(); err != nil {
			return err
		}
		switch *mode {
		case "store":
			return serve(*p, *addr)
		case "server":
			return serveServer(*p)
		}
		return fmt.Errorf("-mode %q: want store or server", *mode)
	}
	fs := flag.NewFlagSet("dnsbench", flag.ContinueOnError)
	p := paramFlags(fs)
	o := options{}
	fs.StringVar(&o.coredns, "coredns", "/tmp/coredns-bin/coredns", "CoreDNS binary (go install github.com/coredns/coredns@v1.15.0)")
	fs.StringVar(&o.dnsperf, "dnsperf", "dnsperf", "dnsperf binary (Debian package dnsperf)")
	fs.StringVar(&o.dir, "dir", "", "work directory for zone, Corefile and query files (default: a new temporary one, removed at the end)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of each dnsperf run")
	fs.IntVar(&o.clients, "clients", 4, "dnsperf clients (-c)")
	fs.IntVar(&o.rounds, "rounds", 2, "throughput rounds per server, alternating which goes first")
	fs.IntVar(&o.latencyQPS, "latency-qps", 0, "offered load of the latency runs (dnsperf -Q); 0: half the lower throughput")
	fs.IntVar(&o.nqueries, "queries", 200000, "lines in the dnsperf query file")
	fs.StringVar(&o.mode, "mode", "store", "what serves Skiff's DNS: store (a dns.Store filled directly, served by dns.Server: the DNS alone) or server (a whole skiff server with --dns-listen, filled through its API)")
	fs.IntVar(&o.compare, "compare", 5000, "distinct queries whose answers are compared between the servers before the runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	if o.mode != "store" && o.mode != "server" {
		return fmt.Errorf("-mode %q: want store or server", o.mode)
	}
	return bench(*p, o)
}

func paramFlags(fs *flag.FlagSet) *params {
	p := &params{}
	fs.IntVar(&p.Services, "services", 10000, "Services (1 in 10 headless, 1 in 100 ExternalName)")
	fs.IntVar(&p.Endpoints, "endpoints", 50000, "endpoints (pods), spread over the Services with endpoints")
	fs.IntVar(&p.Namespaces, "namespaces", 100, "namespaces")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the query mix")
	return p
}

type options struct {
	coredns, dnsperf, dir string
	duration              time.Duration
	clients, rounds       int
	latencyQPS, nqueries  int
	compare               int
	mode                  string
}

// proc is a child process: a DNS server under test.
type proc struct {
	name string
	cmd  *exec.Cmd
	addr string // 127.0.0.1:port
	done chan struct{}
}

// stop ends the child by its PID: SIGTERM, then SIGKILL after 5 s.
func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func start(name string, cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// rss reads VmRSS and VmHWM (peak) of pid in MiB.
func rss(pid int) (cur, peak float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			cur = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return cur, peak
}

// waitReady asks addr for the apex SOA until it answers NOERROR.
func waitReady(ctx context.Context, p *proc) error {
	c := &mdns.Client{Timeout: 500 * time.Millisecond}
	q := new(mdns.Msg)
	q.SetQuestion("cluster.local.", mdns.TypeSOA)
	for {
		if r, _, err := c.Exchange(q, p.addr); err == nil && r.Rcode == mdns.RcodeSuccess {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s on %s not answering: %w", p.name, p.addr, ctx.Err())
		case <-p.done:
			return fmt.Errorf("%s exited", p.name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port, nil
}

func bench(p params, o options) (err error) {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	dir := o.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "dnsbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, bin := range []string{o.coredns, o.dnsperf} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s not found (CoreDNS: GOBIN=/tmp/coredns-bin go install github.com/coredns/coredns@v1.15.0; dnsperf: apt-get install -y dnsperf): %w", bin, err)
		}
	}

	// Files: zones, Corefile, queries.
	t0 := time.Now()
	cz, err := os.Create(filepath.Join(dir, "cluster.local.zone"))
	if err != nil {
		return err
	}
	rz, err := os.Create(filepath.Join(dir, "10.in-addr.arpa.zone"))
	if err != nil {
		cz.Close()
		return err
	}
	err = p.writeZones(cz, rz)
	cz.Close()
	rz.Close()
	if err != nil {
		return err
	}
	qs := p.queries(o.nqueries)
	qf, err := os.Create(filepath.Join(dir, "queries.txt"))
	if err != nil {
		return err
	}
	err = writeQueries(qf, qs)
	qf.Close()
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	// The minimal CoreDNS: the file plugin alone (a cluster's Corefile adds
	// errors, health, ready, prometheus, cache, loop, reload, loadbalance).
	corefile := fmt.Sprintf("cluster.local:%[1]d {\n  bind 127.0.0.1\n  file cluster.local.zone\n}\n"+
		"10.in-addr.arpa:%[1]d {\n  bind 127.0.0.1\n  file 10.in-addr.arpa.zone\n}\n", port)
	if err := os.WriteFile(filepath.Join(dir, "Corefile"), []byte(corefile), 0o644); err != nil {
		return err
	}
	fmt.Printf("dnsbench: %d Services, %d endpoints, %d namespaces; %d queries in the mix; files in %s (%v)\n",
		p.Services, p.Endpoints, p.Namespaces, len(qs), dir, time.Since(t0).Round(time.Millisecond))
	printMix(qs)

	// The servers.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	skiffCmd := exec.Command(self, "serve", "-services", fmt.Sprint(p.Services), "-endpoints", fmt.Sprint(p.Endpoints),
		"-namespaces", fmt.Sprint(p.Namespaces), "-listen", "127.0.0.1:0", "-mode", o.mode)
	skiffCmd.Stderr = os.Stderr
	out, err := skiffCmd.StdoutPipe()
	if err != nil {
		return err
	}
	skiff, err := start("skiff", skiffCmd)
	if err != nil {
		return err
	}
	defer skiff.stop()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("skiff child: %w", err)
	}
	skiff.addr = strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	go func() { _, _ = io.Copy(io.Discard, out) }()

	cdCmd := exec.Command(o.coredns, "-conf", "Corefile", "-quiet")
	cdCmd.Dir = dir
	cdCmd.Stderr = os.Stderr
	coredns, err := start("coredns", cdCmd)
	if err != nil {
		return err
	}
	defer coredns.stop()
	coredns.addr = fmt.Sprintf("127.0.0.1:%d", port)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for _, s := range []*proc{skiff, coredns} {
		if err := waitReady(rctx, s); err != nil {
			return err
		}
	}
	fmt.Printf("servers ready (%v): skiff %s pid %d, coredns %s pid %d\n", time.Since(t0).Round(time.Millisecond),
		skiff.addr, skiff.cmd.Process.Pid, coredns.addr, coredns.cmd.Process.Pid)
	rssLoaded := map[string][2]float64{}
	for _, s := range []*proc{skiff, coredns} {
		c, pk := rss(s.cmd.Process.Pid)
		rssLoaded[s.name] = [2]float64{c, pk}
	}

	// Same answers?
	if o.compare > 0 {
		if err := compareAnswers(qs, o.compare, skiff.addr, coredns.addr); err != nil {
			return err
		}
	}

	// Throughput: alternate which server goes first.
	qfile := filepath.Join(dir, "queries.txt")
	tput := map[string][]perfResult{}
	for r := range o.rounds {
		order := []*proc{skiff, coredns}
		if r%2 == 1 {
			order = []*proc{coredns, skiff}
		}
		for _, s := range order {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res, err := dnsperf(ctx, o, s.addr, qfile, 0, false)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Printf("  round %d %-8s %8.0f qps  avg %.3f ms  lost %d  %s\n", r+1, s.name, res.qps, res.avg*1e3, res.lost, res.rcodes)
			tput[s.name] = append(tput[s.name], res)
		}
	}
	best := func(name string) perfResult {
		rs := tput[name]
		b := rs[0]
		for _, r := range rs[1:] {
			if r.qps > b.qps {
				b = r
			}
		}
		return b
	}
	q := o.latencyQPS
	if q == 0 {
		q = int(min(best("skiff").qps, best("coredns").qps) / 2)
	}
	lat := map[string]perfResult{}
	for _, s := range []*proc{skiff, coredns} {
		res, err := dnsperf(ctx, o, s.addr, qfile, q, true)
		if err != nil {
			return fmt.Errorf("%s latency: %w", s.name, err)
		}
		lat[s.name] = res
	}
	rssAfter := map[string][2]float64{}
	for _, s := range []*proc{skiff, coredns} {
		c, pk := rss(s.cmd.Process.Pid)
		rssAfter[s.name] = [2]float64{c, pk}
	}

	// The table.
	sk, cd := best("skiff"), best("coredns")
	objs := float64(p.Services+p.Endpoints) / 1000
	fmt.Printf("\nload average: %s", must(os.ReadFile("/proc/loadavg")))
	fmt.Printf("dnsperf -c %d -l %v, UDP, same query file; throughput: best of %d rounds; latency: -Q %d (fixed offered load, every query timed)\n\n",
		o.clients, o.duration.Seconds(), o.rounds, q)
	fmt.Printf("Skiff: -mode %s\n\n", o.mode)
	fmt.Printf("| %-34s | %-14s | %-14s | %-8s |\n", "", "Skiff", "CoreDNS 1.15", "ratio")
	fmt.Printf("|%s|%s|%s|%s|\n", strings.Repeat("-", 36), strings.Repeat("-", 16), strings.Repeat("-", 16), strings.Repeat("-", 10))
	row := func(what string, a, b float64, unit string, prec int) {
		ratio := "-"
		if b > 0 {
			ratio = fmt.Sprintf("%.2f×", a/b)
		}
		fmt.Printf("| %-34s | %-14s | %-14s | %-8s |\n", what, strconv.FormatFloat(a, 'f', prec, 64)+unit,
			strconv.FormatFloat(b, 'f', prec, 64)+unit, ratio)
	}
	row("QPS (saturated, -q 100 in flight)", sk.qps, cd.qps, "", 0)
	row("mean latency, saturated", sk.avg*1e3, cd.avg*1e3, " ms", 3)
	row(fmt.Sprintf("p50 latency at %d qps", q), lat["skiff"].p50*1e3, lat["coredns"].p50*1e3, " ms", 3)
	row(fmt.Sprintf("p99 latency at %d qps", q), lat["skiff"].p99*1e3, lat["coredns"].p99*1e3, " ms", 3)
	row(fmt.Sprintf("p99.9 latency at %d qps", q), lat["skiff"].p999*1e3, lat["coredns"].p999*1e3, " ms", 3)
	row("RSS after loading (MiB)", rssLoaded["skiff"][0], rssLoaded["coredns"][0], "", 1)
	row("RSS after the runs (MiB)", rssAfter["skiff"][0], rssAfter["coredns"][0], "", 1)
	row("peak RSS (VmHWM, MiB)", rssAfter["skiff"][1], rssAfter["coredns"][1], "", 1)
	fmt.Printf("\nCoreDNS's sizing formula for %.0fk objects (49 MB + 0.86 MB per 1,000): %.1f MB\n", objs, 49+0.86*objs)
	fmt.Printf("rcodes (throughput runs): skiff %s; coredns %s\n", sk.rcodes, cd.rcodes)
	fmt.Printf("lost: skiff %d, coredns %d (throughput); %d, %d (latency)\n", sk.lost, cd.lost, lat["skiff"].lost, lat["coredns"].lost)
	return nil
}

func must(b []byte, _ error) string { return string(b) }

// printMix summarises the query file by type and expected rcode.
func printMix(qs []query) {
	count := map[string]int{}
	for _, q := range qs {
		count[mdns.TypeToString[q.qtype]+"/"+mdns.RcodeToString[q.rcode]]++
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", k, 100*float64(count[k])/float64(len(qs))))
	}
	fmt.Printf("mix: %s\n", strings.Join(parts, ", "))
}

// answerKey is what must match between the servers: rcode, TC, the answer
// records without TTL (lowercase, sorted) and, for empty answers, the
// authority records' count (the SOA of a negative answer). The authority
// of non-empty answers is not compared: for a CNAME chain ending in NODATA
// Skiff adds the SOA (RFC 2308 2.2) and the file plugin does not.
func answerKey(r *mdns.Msg) string {
	auth := 0
	if len(r.Answer) == 0 {
		auth = len(r.Ns)
	}
	var rrs []string
	for _, rr := range r.Answer {
		h := rr.Header()
		rrs = append(rrs, strings.ToLower(h.Name+" "+mdns.TypeToString[h.Rrtype]+" "+strings.TrimPrefix(rr.String(), h.String())))
	}
	slices.Sort(rrs)
	return fmt.Sprintf("%s tc=%v auth=%d %s", mdns.RcodeToString[r.Rcode], r.Truncated, auth, strings.Join(rrs, "; "))
}

// compareAnswers asks both servers the first n distinct queries of qs over
// UDP (no EDNS, as dnsperf sends them) and fails if any answer differs, or
// differs from the generator's expectation.
func compareAnswers(qs []query, n int, a, b string) error {
	c := &mdns.Client{Timeout: 2 * time.Second}
	seen := map[string]bool{}
	checked, mismatches := 0, 0
	for _, q := range qs {
		k := q.name + "/" + mdns.TypeToString[q.qtype]
		if seen[k] {
			continue
		}
		seen[k] = true
		if checked >= n {
			break
		}
		checked++
		m := new(mdns.Msg)
		m.SetQuestion(q.name, q.qtype)
		ra, _, err := c.Exchange(m, a)
		if err != nil {
			return fmt.Errorf("compare: skiff %s: %w", k, err)
		}
		rb, _, err := c.Exchange(m, b)
		if err != nil {
			return fmt.Errorf("compare: coredns %s: %w", k, err)
		}
		ka, kb := answerKey(ra), answerKey(rb)
		if ka != kb || ra.Rcode != q.rcode || len(ra.Answer) != q.answers {
			mismatches++
			if mismatches <= 10 {
				fmt.Printf("  differs: %s (want %s/%d)\n    skiff:   %s\n    coredns: %s\n", k, mdns.RcodeToString[q.rcode], q.answers, ka, kb)
			}
		}
	}
	fmt.Printf("compared %d distinct queries: %d differ\n", checked, mismatches)
	if mismatches > 0 {
		return errors.New("the servers do not serve the same records")
	}
	return nil
}

type perfResult struct {
	qps, avg       float64 // queries/s, seconds
	p50, p99, p999 float64 // seconds (verbose runs only)
	lost           int
	rcodes         string
}

var (
	reQPS    = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
	reAvg    = regexp.MustCompile(`Average Latency \(s\):\s+([0-9.]+)`)
	reLost   = regexp.MustCompile(`Queries lost:\s+([0-9]+)`)
	reRcodes = regexp.MustCompile(`Response codes:\s+(.*)`)
)

// dnsperf runs dnsperf against addr; qps > 0 caps the offered load;
// verbose times every query (-v) for percentiles.
func dnsperf(ctx context.Context, o options, addr, qfile string, qps int, verbose bool) (perfResult, error) {
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"-s", host, "-p", port, "-d", qfile, "-c", fmt.Sprint(o.clients),
		"-l", fmt.Sprint(int(o.duration.Seconds())), "-t", "2"}
	if qps > 0 {
		args = append(args, "-Q", fmt.Sprint(qps))
	}
	if verbose {
		args = append(args, "-v")
	}
	cmd := exec.CommandContext(ctx, o.dnsperf, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return perfResult{}, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return perfResult{}, err
	}
	var res perfResult
	var lats []float64
	var summary strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "> ") {
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				lats = append(lats, v)
			}
			continue
		}
		summary.WriteString(line)
		summary.WriteByte('\n')
	}
	if err := cmd.Wait(); err != nil {
		return res, fmt.Errorf("dnsperf: %w\n%s", err, summary.String())
	}
	s := summary.String()
	if m := reQPS.FindStringSubmatch(s); m != nil {
		res.qps, _ = strconv.ParseFloat(m[1], 64)
	} else {
		return res, fmt.Errorf("dnsperf: no QPS in output:\n%s", s)
	}
	if m := reAvg.FindStringSubmatch(s); m != nil {
		res.avg, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := reLost.FindStringSubmatch(s); m != nil {
		res.lost, _ = strconv.Atoi(m[1])
	}
	if m := reRcodes.FindStringSubmatch(s); m != nil {
		res.rcodes = m[1]
	}
	if len(lats) > 0 {
		slices.Sort(lats)
		pct := func(p float64) float64 { return lats[min(len(lats)-1, int(p*float64(len(lats))))] }
		res.p50, res.p99, res.p999 = pct(0.50), pct(0.99), pct(0.999)
	}
	return res, nil
}
