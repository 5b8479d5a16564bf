package nftables

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// Benchmarks run inside a network namespace they create. Sizes: the
// SKIFF_NFT_BENCH_SERVICES environment variable (default 10000).
//
//	go test ./netagent/proxy/nftables -run '^$' -bench . -benchtime 1x

func benchServices() int {
	if n, err := strconv.Atoi(os.Getenv("SKIFF_NFT_BENCH_SERVICES")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// bigState: n ClusterIP Services with 3 endpoints each.
func bigState(n int) *proxy.State {
	st := newState()
	for i := range n {
		name := spn(fmt.Sprintf("svc%d", i), "http", "TCP")
		ip := netip.AddrFrom4([4]byte{10, 96, byte(1 + i/250), byte(1 + i%250)})
		addSvc(st, name, ip.String(), 80)
		var e []string
		for k := range 3 {
			j := i*3 + k
			e = append(e, fmt.Sprintf("10.%d.%d.%d:8080", 100+j/62500, (j/250)%250, 1+j%250))
		}
		st.Endpoints[name] = eps(e...)
	}
	return st
}

// recorder is a Kernel that remembers the transactions it passes on.
type recorder struct {
	Kernel
	txs []*Transaction
}

func (r *recorder) Run(ctx context.Context, tx *Transaction) error {
	r.txs = append(r.txs, tx)
	return r.Kernel.Run(ctx, tx)
}

func nftFile(b *testing.B, ns *testNS, script string) time.Duration {
	b.Helper()
	path := filepath.Join(b.TempDir(), "ruleset.nft")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if out, err := ns.output("nft", "-f", path); err != nil {
		b.Fatalf("nft -f: %v\n%.2000s", err, out)
	}
	return time.Since(start)
}

// BenchmarkFullSync: a full sync of 10k Services × 3 endpoints through
// netlink, against `nft -f` of the very transaction it sends (the raw load
// of the same ruleset), into an empty table and over the existing one.
func BenchmarkFullSync(b *testing.B) {
	n := benchServices()
	ns := newNS(b, "bench-full")
	k, err := NewNetlink(NetlinkOptions{NetNSFd: ns.fd(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	st := bigState(n)
	ctx := context.Background()
	for b.Loop() {
		rec := &recorder{Kernel: k}
		p, _ := New(Config{Kernel: rec, Logger: quietLog()})
		start := time.Now()
		if err := p.Sync(ctx, st, nil); err != nil {
			b.Fatal(err)
		}
		empty := time.Since(start)
		start = time.Now()
		if err := p.Sync(ctx, st, nil); err != nil {
			b.Fatal(err)
		}
		over := time.Since(start)
		emptyTx, overTx := rec.txs[0].String(), rec.txs[1].String()

		// Raw: nft -f of the same transactions.
		if err := p.Cleanup(ctx); err != nil {
			b.Fatal(err)
		}
		rawEmpty := nftFile(b, ns, emptyTx)
		rawOver := nftFile(b, ns, overTx)
		// Raw netlink: the same transaction object, already built.
		if err := p.Cleanup(ctx); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := k.Run(ctx, rec.txs[0]); err != nil {
			b.Fatal(err)
		}
		rawNetlink := time.Since(start)
		if err := p.Cleanup(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(empty.Seconds(), "s-sync-empty")
		b.ReportMetric(rawEmpty.Seconds(), "s-nft-f-empty")
		b.ReportMetric(empty.Seconds()/rawEmpty.Seconds(), "ratio-empty")
		b.ReportMetric(over.Seconds(), "s-sync-over")
		b.ReportMetric(rawOver.Seconds(), "s-nft-f-over")
		b.ReportMetric(over.Seconds()/rawOver.Seconds(), "ratio-over")
		b.ReportMetric(rawNetlink.Seconds(), "s-netlink-tx-only")
		b.ReportMetric(float64(len(emptyTx))/1e6, "MB-script")
	}
}

// BenchmarkPartialSync: one change at 10k Services, through netlink and
// through `nft -f`.
//
// Its floor, in the same run: the change alternates between two states, so
// after the sync that went from the one to the other the benchmark sends
// the previous sync's transaction (back to where this one started) and
// then this sync's own transaction again, already built, straight to the
// same kernel, and times the second: the kernel's (and, for nft-f, the nft
// tool's) share of the same change from the same ruleset, without the
// proxy computing and building it. Reports raw-ms (median) and over-raw
// (ms-median over raw-ms).
func BenchmarkPartialSync(b *testing.B) {
	n := benchServices()
	for _, kernel := range []string{"netlink", "nft-f"} {
		for _, change := range []string{"endpoint-replaced", "endpoint-added-removed", "service-added-removed", "affinity-endpoint-replaced"} {
			b.Run(kernel+"/"+change, func(b *testing.B) {
				if kernel == "nft-f" && change != "endpoint-replaced" && change != "service-added-removed" {
					b.Skip("nft -f: two cases are enough to show the floor")
				}
				ns := newNS(b, "bench-partial")
				nl, err := NewNetlink(NetlinkOptions{NetNSFd: ns.fd(b)})
				if err != nil {
					b.Fatal(err)
				}
				defer nl.Close()
				var k Kernel = nl
				if kernel == "nft-f" {
					k = NewExec("nsenter", "--net="+ns.Path, "nft")
				}
				rec := &recorder{Kernel: k}
				st := bigState(n)
				target := spn(fmt.Sprintf("svc%d", n/2), "http", "TCP") // svc5000 at 10k
				if change == "affinity-endpoint-replaced" {
					st.Services[target].AffinityTimeout = time.Hour
				}
				ctx := context.Background()
				// Load through the kernel under test: the nft binary cannot
				// parse rules that use the mark-typed maps netlink creates.
				p, _ := New(Config{Kernel: rec, Logger: quietLog()})
				if err := p.Sync(ctx, st, nil); err != nil {
					b.Fatal(err)
				}
				orig := slices.Clone(st.Endpoints[target])
				origSvc := st.Services[target]
				i := 0
				var durs, raws []time.Duration
				for b.Loop() {
					i++
					switch change {
					case "endpoint-replaced", "affinity-endpoint-replaced":
						e := slices.Clone(orig)
						if i%2 == 1 {
							e[1].IP = netip.MustParseAddr("10.250.0.1")
						}
						st.Endpoints[target] = e
					case "endpoint-added-removed":
						e := slices.Clone(orig)
						if i%2 == 1 {
							e = append(e, eps("10.250.0.1:8080")...)
						}
						st.Endpoints[target] = e
					case "service-added-removed":
						if i%2 == 1 {
							delete(st.Services, target)
						} else {
							st.Services[target] = origSvc
						}
					}
					start := time.Now()
					if err := p.Sync(ctx, st, []proxy.ServicePortName{target}); err != nil {
						b.Fatal(err)
					}
					durs = append(durs, time.Since(start))
					// txs[0] is the full sync: the raw replay needs two
					// partial ones.
					if n := len(rec.txs); n >= 3 {
						b.StopTimer()
						if err := k.Run(ctx, rec.txs[n-2]); err != nil {
							b.Fatalf("raw: the previous sync's transaction again: %v", err)
						}
						start := time.Now()
						if err := k.Run(ctx, rec.txs[n-1]); err != nil {
							b.Fatalf("raw: this sync's transaction again: %v", err)
						}
						raws = append(raws, time.Since(start))
						b.StartTimer()
					}
				}
				slices.Sort(durs)
				median := durs[len(durs)/2]
				b.ReportMetric(float64(median.Microseconds())/1000, "ms-median")
				b.ReportMetric(float64(durs[len(durs)-1].Microseconds())/1000, "ms-max")
				if len(raws) > 0 {
					slices.Sort(raws)
					raw := raws[len(raws)/2]
					b.ReportMetric(float64(raw.Microseconds())/1000, "raw-ms")
					b.ReportMetric(float64(median)/float64(raw), "over-raw")
				}
			})
		}
	}
}

// BenchmarkConnectLatency: connect() from a pod to a ClusterIP through the
// node's ruleset holding 10 or 10k Services (time to the established
// connection: SYN through prerouting DNAT, SYN-ACK back).
func BenchmarkConnectLatency(b *testing.B) {
	for _, n := range []int{10, benchServices()} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			c := newTestCluster(b, 2)
			st := bigState(n)
			st.NodeIPs = []netip.Addr{proxytest.NodeIP}
			// The probed Service is in the middle of the maps.
			target := spn(fmt.Sprintf("svc%d", n/2), "http", "TCP")
			st.Endpoints[target] = []proxy.Endpoint{{IP: c.podIPs[0], Port: 8080, Ready: true, Serving: true, IsLocal: true}}
			vip := net.JoinHostPort(st.Services[target].ClusterIPs[0].String(), "80")
			if err := c.proxier.Sync(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			// Warm up (ARP, routes).
			for range 20 {
				if _, err := fetch(c.pods[1], vip); err != nil {
					b.Fatal(err)
				}
			}
			var durs []time.Duration
			for b.Loop() {
				var conn net.Conn
				start := time.Now()
				if err := c.pods[1].do(func() (err error) {
					conn, err = net.DialTimeout("tcp4", vip, 2*time.Second)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
				conn.Close()
			}
			slices.Sort(durs)
			b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1000, "us-median")
			b.ReportMetric(float64(durs[len(durs)*9/10].Nanoseconds())/1000, "us-p90")
		})
	}
}
