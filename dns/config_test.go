package dns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	must(t, os.WriteFile(resolv, []byte("# comment\nnameserver 192.0.2.53\nnameserver 2001:db8::53\nsearch example.org\noptions ndots:2\n"), 0o644))

	tests := []struct {
		name      string
		cfg       Config
		err       error
		zone      string
		ttl       uint32
		upstreams []string
	}{
		{name: "defaults", cfg: Config{Upstreams: []string{}}, zone: "cluster.local.", ttl: 5},
		{name: "resolv.conf", cfg: Config{ResolvConf: resolv}, zone: "cluster.local.", ttl: 5,
			upstreams: []string{"192.0.2.53:53", "[2001:db8::53]:53"}},
		{name: "missing resolv.conf", cfg: Config{ResolvConf: filepath.Join(dir, "nope")}, err: os.ErrNotExist},
		{name: "upstream forms", cfg: Config{Upstreams: []string{"192.0.2.1", "192.0.2.2:5353", "2001:db8::1", "[2001:db8::2]:54", "dns.example:53", "dns.example"}},
			zone: "cluster.local.", ttl: 5,
			upstreams: []string{"192.0.2.1:53", "192.0.2.2:5353", "[2001:db8::1]:53", "[2001:db8::2]:54", "dns.example:53", "dns.example:53"}},
		{name: "domain normalised", cfg: Config{Domain: "Skiff.Internal.", TTL: 30 * time.Second, Upstreams: []string{}}, zone: "skiff.internal.", ttl: 30},
		{name: "sub-second TTL", cfg: Config{TTL: time.Millisecond, Upstreams: []string{}}, err: ErrInvalidConfig},
		{name: "TTL over an hour", cfg: Config{TTL: 2 * time.Hour, Upstreams: []string{}}, err: ErrInvalidConfig},
		{name: "bad domain", cfg: Config{Domain: "a..b", Upstreams: []string{}}, err: ErrInvalidConfig},
		{name: "bad upstream", cfg: Config{Upstreams: []string{"a b:53"}}, err: ErrInvalidConfig},
		{name: "invalid allowed net", cfg: Config{AllowedNets: []netip.Prefix{{}}, Upstreams: []string{}}, err: ErrInvalidConfig},
		{name: "negative timeout", cfg: Config{ForwardTimeout: -time.Second, Upstreams: []string{}}, err: ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := tc.cfg.settings()
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			must(t, err)
			if st.zone != tc.zone || st.ttl != tc.ttl || !equalStrings(st.upstream, tc.upstreams) {
				t.Errorf("zone %q ttl %d upstreams %q, want %q %d %q", st.zone, st.ttl, st.upstream, tc.zone, tc.ttl, tc.upstreams)
			}
		})
	}
	if _, err := NewServer(Config{}, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil store: %v", err)
	}
}

func TestOtherDomain(t *testing.T) {
	ts := startServer(t, Config{Domain: "skiff.internal"}, fixtureStore(t))
	r := ts.ask(t, "udp", "web.default.svc.skiff.internal.", mdns.TypeA)
	if len(r.Answer) != 1 {
		t.Errorf("answer under a custom domain: %v", r)
	}
	r = ts.ask(t, "udp", "10.0.96.10.in-addr.arpa.", mdns.TypePTR)
	if len(r.Answer) != 1 || r.Answer[0].(*mdns.PTR).Ptr != "web.default.svc.skiff.internal." {
		t.Errorf("PTR under a custom domain: %v", r)
	}
	// cluster.local is now an outside name: no upstream, so REFUSED.
	if r := ts.ask(t, "udp", "web.default.svc.cluster.local.", mdns.TypeA); r.Rcode != mdns.RcodeRefused {
		t.Errorf("old domain: %s", mdns.RcodeToString[r.Rcode])
	}
}

func TestServeLoop(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	srv, err := NewServer(Config{Upstreams: []string{udp.LocalAddr().String()}}, NewStore())
	must(t, err)
	if err := srv.Serve(context.Background(), udp, nil); !errors.Is(err, ErrForwardLoop) {
		t.Errorf("Serve with itself as upstream: %v, want ErrForwardLoop", err)
	}
	if err := srv.Serve(context.Background(), nil, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Serve without listeners: %v", err)
	}
}

func TestListenAndServe(t *testing.T) {
	srv, err := NewServer(Config{Upstreams: []string{}}, fixtureStore(t))
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0") }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return")
	}
	if err := srv.ListenAndServe(context.Background(), "192.0.2.1:bad"); err == nil {
		t.Error("bad address accepted")
	}
}

// metricValue reads one counter, gauge or histogram count from reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	must(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !labelsMatch(m.GetLabel(), labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

func labelsMatch(got []*dto.LabelPair, want map[string]string) bool {
	n := 0
	for _, l := range got {
		v, ok := want[l.GetName()]
		if !ok {
			continue
		}
		if v != l.GetValue() {
			return false
		}
		n++
	}
	return n == len(want)
}

func TestMetrics(t *testing.T) {
	up := startUpstream(t)
	reg := prometheus.NewRegistry()
	ts := startServer(t, Config{Registerer: reg, Upstreams: []string{up.addr}}, fixtureStore(t))
	for range 3 {
		ts.ask(t, "udp", "web.default.svc.cluster.local.", mdns.TypeA)
	}
	ts.ask(t, "tcp", "nope.default.svc.cluster.local.", mdns.TypeAAAA)
	ts.ask(t, "udp", "example.org.", mdns.TypeA)
	ts.ask(t, "udp", "example.org.", mdns.TypeA)
	ts.ask(t, "udp", "web.default.svc.cluster.local.", mdns.TypeCAA)
	rawExchange(t, "udp", ts.udpAddr, header(1, opStatus, 1, 0, 0, 0))

	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"A NOERROR", "skiff_dns_requests_total", map[string]string{"type": "A", "rcode": "NOERROR"}, 5},
		{"AAAA NXDOMAIN", "skiff_dns_requests_total", map[string]string{"type": "AAAA", "rcode": "NXDOMAIN"}, 1},
		{"rare type counts as other", "skiff_dns_requests_total", map[string]string{"type": "other", "rcode": "NOERROR"}, 1},
		{"rejected opcode", "skiff_dns_requests_total", map[string]string{"type": "none", "rcode": "NOTIMP"}, 1},
		{"cluster durations", "skiff_dns_request_duration_seconds", map[string]string{"source": "cluster"}, 5},
		{"forward durations", "skiff_dns_request_duration_seconds", map[string]string{"source": "forward"}, 2},
		{"cache hits", "skiff_dns_forward_cache_hits_total", nil, 1},
		{"cache misses", "skiff_dns_forward_cache_misses_total", nil, 1},
		{"cache entries", "skiff_dns_forward_cache_entries", nil, 1},
		{"upstream answers", "skiff_dns_forward_upstream_responses_total", map[string]string{"upstream": up.addr, "rcode": "NOERROR"}, 1},
	}
	for _, tc := range tests {
		if got := metricValue(t, reg, tc.metric, tc.labels); got != tc.want {
			t.Errorf("%s: %s%v = %v, want %v", tc.name, tc.metric, tc.labels, got, tc.want)
		}
	}
	// A second server on the same registry is an error, not a panic.
	if _, err := NewServer(Config{Registerer: reg, Upstreams: []string{}}, NewStore()); err == nil {
		t.Error("duplicate registration accepted")
	}
}

func TestCache(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := newAnswerCache(2)
	k := func(n string) cacheKey { return cacheKey{name: n, qtype: mdns.TypeA, qclass: mdns.ClassINET} }
	m := new(mdns.Msg)
	c.put(k("a."), m, time.Minute, now)
	c.put(k("b."), m, time.Minute, now)
	if _, _, ok := c.get(k("a."), now); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.put(k("c."), m, time.Minute, now) // evicts b
	if _, _, ok := c.get(k("b."), now); ok {
		t.Error("LRU kept b")
	}
	if _, age, ok := c.get(k("a."), now.Add(30*time.Second)); !ok || age != 30*time.Second {
		t.Errorf("a: ok %v age %v", ok, age)
	}
	if _, _, ok := c.get(k("a."), now.Add(time.Minute)); ok {
		t.Error("expired entry returned")
	}
	if c.len() != 1 {
		t.Errorf("len %d, want 1 (c)", c.len())
	}
	c.put(k("z."), m, 0, now)
	if _, _, ok := c.get(k("z."), now); ok {
		t.Error("zero TTL cached")
	}
	var nilCache *answerCache
	nilCache.put(k("a."), m, time.Minute, now)
	if _, _, ok := nilCache.get(k("a."), now); ok || newAnswerCache(-1) != nil {
		t.Error("disabled cache")
	}
}

func TestCacheTTL(t *testing.T) {
	rr := func(s string) mdns.RR {
		x, err := mdns.NewRR(s)
		must(t, err)
		return x
	}
	soa := rr("example.org. 300 IN SOA ns.example.org. h.example.org. 1 7200 1800 86400 30")
	tests := []struct {
		name string
		msg  *mdns.Msg
		want time.Duration
	}{
		{"smallest TTL", &mdns.Msg{Answer: []mdns.RR{rr("a. 300 IN CNAME b."), rr("b. 60 IN A 192.0.2.1")}}, time.Minute},
		{"capped", &mdns.Msg{Answer: []mdns.RR{rr("a. 86400 IN A 192.0.2.1")}}, maxPositiveTTL},
		{"zero TTL", &mdns.Msg{Answer: []mdns.RR{rr("a. 0 IN A 192.0.2.1")}}, 0},
		{"NXDOMAIN uses the SOA minimum", &mdns.Msg{MsgHdr: mdns.MsgHdr{Rcode: mdns.RcodeNameError}, Ns: []mdns.RR{soa}}, 30 * time.Second},
		{"NODATA uses the SOA minimum", &mdns.Msg{Ns: []mdns.RR{soa}}, 30 * time.Second},
		{"NXDOMAIN without SOA", &mdns.Msg{MsgHdr: mdns.MsgHdr{Rcode: mdns.RcodeNameError}}, 0},
		{"SERVFAIL", &mdns.Msg{MsgHdr: mdns.MsgHdr{Rcode: mdns.RcodeServerFailure}, Ns: []mdns.RR{soa}}, 0},
		{"negative capped", &mdns.Msg{MsgHdr: mdns.MsgHdr{Rcode: mdns.RcodeNameError},
			Ns: []mdns.RR{rr("example.org. 86400 IN SOA ns.example.org. h.example.org. 1 7200 1800 86400 86400")}}, maxNegativeTTL},
	}
	for _, tc := range tests {
		if got := cacheTTL(tc.msg); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFitKeepsRRsetsWhole(t *testing.T) {
	rr := func(s string) mdns.RR {
		x, err := mdns.NewRR(s)
		must(t, err)
		return x
	}
	m := new(mdns.Msg)
	m.SetQuestion("a.example.", mdns.TypeA)
	m.Response = true
	m.Answer = []mdns.RR{rr("a.example. 60 IN CNAME b.example.")}
	for i := range 40 {
		m.Answer = append(m.Answer, rr("b.example. 60 IN A 192.0.2."+strconv.Itoa(i+1)))
	}
	shared := slices.Clone(m.Answer)
	out, err := fit(m, make([]byte, 4096), 512)
	must(t, err)
	r := new(mdns.Msg)
	must(t, r.Unpack(out))
	if !r.Truncated || len(r.Answer) != 1 || r.Answer[0].Header().Rrtype != mdns.TypeCNAME || len(out) > 512 {
		t.Errorf("tc %v, %d answers (%d bytes): want TC and the CNAME alone", r.Truncated, len(r.Answer), len(out))
	}
	if !slices.Equal(shared, m.Answer[:cap(m.Answer)][:len(shared)]) {
		t.Error("fit wrote into the answer slice")
	}
}
