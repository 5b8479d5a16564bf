package dns

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// scaleStore builds a Store of nsvc Services in 100 namespaces, each with
// eps endpoints in one slice and two named ports; every headlessEvery-th
// Service is headless with StatefulSet hostnames (0: none). Names are built
// one by one, as the informer's decoder would allocate them.
func scaleStore(tb testing.TB, nsvc, eps, headlessEvery int) *Store {
	tb.Helper()
	s := NewStore()
	for i := range nsvc {
		ns := fmt.Sprintf("ns-%d", i%100)
		name := fmt.Sprintf("svc-%d", i)
		headless := headlessEvery > 0 && i%headlessEvery == 0
		svc := Service{Namespace: ns, Name: name, Type: TypeClusterIP, Headless: headless,
			Ports: []Port{{Name: "http", Protocol: "TCP", Port: 80}, {Name: "metrics", Protocol: "TCP", Port: 9090}}}
		if !headless {
			svc.ClusterIPs = []netip.Addr{netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})}
		}
		must(tb, s.UpsertService(svc))
		es := EndpointSlice{Namespace: ns, Name: fmt.Sprintf("%s-%05x", name, i), Service: name,
			Ports: []EndpointPort{{Name: "http", Protocol: "TCP", Port: 8080}, {Name: "metrics", Protocol: "TCP", Port: 9090}}}
		es.Endpoints = make([]Endpoint, eps)
		for j := range eps {
			n := i*eps + j
			ep := Endpoint{
				Addresses:     []netip.Addr{netip.AddrFrom4([4]byte{10, byte(128 + n>>16), byte(n >> 8), byte(n)})},
				Ready:         true,
				Serving:       true,
				NodeName:      fmt.Sprintf("node-%d", j%10),
				TargetPodName: fmt.Sprintf("%s-7d4b9c%04x-%d", name, i&0xffff, j),
			}
			if headless {
				ep.Hostname = fmt.Sprintf("%s-%d", name, j)
			}
			es.Endpoints[j] = ep
		}
		must(tb, s.UpsertEndpointSlice(es))
	}
	s.SetSynced(true)
	return s
}

// discard is a ResponseWriter that drops what it is given.
type discard struct{ remote net.Addr }

func (d discard) LocalAddr() net.Addr         { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (d discard) RemoteAddr() net.Addr        { return d.remote }
func (d discard) WriteMsg(*mdns.Msg) error    { return nil }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) Close() error                { return nil }
func (d discard) TsigStatus() error           { return nil }
func (d discard) TsigTimersOnly(bool)         {}
func (d discard) Hijack()                     {}

func newQuery(name string, qtype uint16) *mdns.Msg {
	m := new(mdns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// BenchmarkServeDNS measures the handler alone (lookup, answer, pack) on a
// Store of 10k Services and 50k endpoints.
func BenchmarkServeDNS(b *testing.B) {
	store := scaleStore(b, 10_000, 5, 10)
	srv, err := NewServer(Config{Upstreams: []string{}}, store)
	must(b, err)
	w := &discard{remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}}
	queries := map[string]*mdns.Msg{
		"clusterIP-A":   newQuery("svc-1234.ns-34.svc.cluster.local.", mdns.TypeA),
		"headless-A":    newQuery("svc-1230.ns-30.svc.cluster.local.", mdns.TypeA),
		"headless-host": newQuery("svc-1230-3.svc-1230.ns-30.svc.cluster.local.", mdns.TypeA),
		"SRV-clusterIP": newQuery("_http._tcp.svc-1234.ns-34.svc.cluster.local.", mdns.TypeSRV),
		"SRV-headless":  newQuery("_http._tcp.svc-1230.ns-30.svc.cluster.local.", mdns.TypeSRV),
		"PTR":           newQuery("210.4.96.10.in-addr.arpa.", mdns.TypePTR),
		"NXDOMAIN":      newQuery("nope.ns-34.svc.cluster.local.", mdns.TypeA),
		"NODATA":        newQuery("svc-1234.ns-34.svc.cluster.local.", mdns.TypeAAAA),
	}
	for _, name := range []string{"clusterIP-A", "headless-A", "headless-host", "SRV-clusterIP", "SRV-headless", "PTR", "NXDOMAIN", "NODATA"} {
		q := queries[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				srv.ServeDNS(w, q)
			}
		})
	}
	mix := []*mdns.Msg{queries["clusterIP-A"], queries["clusterIP-A"], queries["headless-A"], queries["SRV-headless"], queries["NXDOMAIN"]}
	b.Run("mix", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			srv.ServeDNS(w, mix[i%len(mix)])
			i++
		}
	})
	b.Run("mix-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				srv.ServeDNS(w, mix[i%len(mix)])
				i++
			}
		})
	})
}

// BenchmarkUDP measures whole queries over loopback UDP (client, kernel,
// miekg's server and the handler) and reports queries per second and the
// 50th and 99th percentile round trip.
func BenchmarkUDP(b *testing.B) {
	store := scaleStore(b, 10_000, 5, 10)
	ts := startServer(b, Config{}, store)
	names := []string{"svc-1234.ns-34.svc.cluster.local.", "svc-1230.ns-30.svc.cluster.local.", "nope.ns-34.svc.cluster.local."}
	var mu sync.Mutex
	var lat []time.Duration
	b.ReportAllocs()
	start := time.Now()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		c, err := mdns.Dial("udp", ts.udpAddr)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		var mine []time.Duration
		defer func() {
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
		i := 0
		for pb.Next() {
			m := newQuery(names[i%len(names)], mdns.TypeA)
			i++
			t0 := time.Now()
			if err := c.SetDeadline(t0.Add(5 * time.Second)); err != nil {
				b.Error(err)
				return
			}
			if err := c.WriteMsg(m); err != nil {
				b.Error(err)
				return
			}
			r, err := c.ReadMsg()
			if err != nil || r.Id != m.Id {
				b.Errorf("read: %v", err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "qps")
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkStoreMemory reports the heap a Store of 10k Services and 50k
// endpoints holds (HeapInuse after a GC, minus before), for a cluster where
// one Service in ten is headless and for the worst case, all headless.
func BenchmarkStoreMemory(b *testing.B) {
	for _, tc := range []struct {
		name          string
		headlessEvery int
	}{
		{"10k-services-50k-endpoints", 10},
		{"10k-services-50k-endpoints-all-headless", 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var total uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := scaleStore(b, 10_000, 5, tc.headlessEvery)
				runtime.GC()
				runtime.ReadMemStats(&after)
				if after.HeapInuse > before.HeapInuse {
					total += after.HeapInuse - before.HeapInuse
				}
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(total)/float64(b.N), "heap-bytes")
			b.ReportMetric(float64(total)/float64(b.N)/(1<<20), "heap-MiB")
		})
	}
}
