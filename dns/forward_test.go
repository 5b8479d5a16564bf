package dns

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// upstream is a miekg server on 127.0.0.1 (UDP and TCP on one port) acting
// as the resolver Skiff forwards to. It counts the questions it gets.
type upstream struct {
	addr string
	gate chan struct{} // "slow." questions wait for it

	mu     sync.Mutex
	counts map[string]int // "<udp|tcp> <name> <type>"
}

func (u *upstream) count(network, name string, qtype uint16) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.counts[network+" "+name+" "+mdns.TypeToString[qtype]]
}

func (u *upstream) total(name string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for k, v := range u.counts {
		if strings.Contains(k, " "+name+" ") {
			n += v
		}
	}
	return n
}

func (u *upstream) ServeDNS(w mdns.ResponseWriter, r *mdns.Msg) {
	q := r.Question[0]
	_, tcp := w.RemoteAddr().(*net.TCPAddr)
	network := "udp"
	if tcp {
		network = "tcp"
	}
	u.mu.Lock()
	u.counts[network+" "+strings.ToLower(q.Name)+" "+mdns.TypeToString[q.Qtype]]++
	u.mu.Unlock()

	m := new(mdns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	rr := func(s string) mdns.RR {
		x, err := mdns.NewRR(s)
		if err != nil {
			panic(err)
		}
		return x
	}
	switch strings.ToLower(q.Name) {
	case "example.org.":
		if q.Qtype == mdns.TypeA {
			m.Answer = []mdns.RR{rr(q.Name + " 300 IN A 192.0.2.10")}
		} else {
			m.Ns = []mdns.RR{rr("example.org. 300 IN SOA ns.example.org. h.example.org. 1 7200 1800 86400 60")}
		}
	case "www.example.com.":
		m.Answer = []mdns.RR{rr("www.example.com. 120 IN A 192.0.2.80")}
	case "big.example.org.":
		if !tcp {
			m.Truncated = true
		} else {
			m.Answer = []mdns.RR{
				rr("big.example.org. 60 IN A 192.0.2.1"),
				rr("big.example.org. 60 IN A 192.0.2.2"),
				rr("big.example.org. 60 IN A 192.0.2.3"),
			}
		}
	case "nx.example.org.":
		m.Rcode = mdns.RcodeNameError
		m.Ns = []mdns.RR{rr("example.org. 300 IN SOA ns.example.org. h.example.org. 1 7200 1800 86400 30")}
	case "fail.example.org.":
		m.Rcode = mdns.RcodeServerFailure
	case "slow.example.org.":
		<-u.gate
		m.Answer = []mdns.RR{rr("slow.example.org. 60 IN A 192.0.2.99")}
	case "1.2.0.192.in-addr.arpa.":
		m.Answer = []mdns.RR{rr("1.2.0.192.in-addr.arpa. 60 IN PTR host.example.org.")}
	default:
		m.Rcode = mdns.RcodeNameError
	}
	m.SetEdns0(1232, false)
	_ = w.WriteMsg(m)
}

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{gate: make(chan struct{}), counts: map[string]int{}}
	var udp net.PacketConn
	var tcp net.Listener
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		must(t, err)
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			udp, tcp = pc, ln
			break
		}
		pc.Close()
	}
	if udp == nil {
		t.Fatal("no port free for UDP and TCP at once")
	}
	u.addr = udp.LocalAddr().String()
	servers := []*mdns.Server{{PacketConn: udp, Handler: u}, {Listener: tcp, Handler: u}}
	var started sync.WaitGroup
	for _, s := range servers {
		started.Add(1)
		s.NotifyStartedFunc = started.Done
		go func() { _ = s.ActivateAndServe() }()
	}
	started.Wait()
	t.Cleanup(func() {
		select {
		case <-u.gate:
		default:
			close(u.gate)
		}
		for _, s := range servers {
			_ = s.Shutdown()
		}
	})
	return u
}

// fakeClock is a settable clock for the forward cache.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestForward(t *testing.T) {
	up := startUpstream(t)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ts := startServer(t, Config{
		Upstreams:   []string{up.addr},
		ReverseNets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")},
	}, fixtureStore(t), func(s *Server) { s.fwd.now = clock.now })

	t.Run("answer is forwarded and cached", func(t *testing.T) {
		for i, network := range []string{"udp", "tcp", "udp"} {
			r := ts.ask(t, network, "example.org.", mdns.TypeA)
			if r.Rcode != mdns.RcodeSuccess || len(r.Answer) != 1 || r.Answer[0].(*mdns.A).A.String() != "192.0.2.10" {
				t.Fatalf("ask %d: %v", i, r)
			}
			if r.Authoritative || !r.RecursionAvailable {
				t.Errorf("flags aa=%v ra=%v, want !aa ra", r.Authoritative, r.RecursionAvailable)
			}
		}
		if n := up.total("example.org."); n != 1 {
			t.Errorf("upstream saw %d questions for three identical asks, want 1", n)
		}
	})

	t.Run("cached TTL counts down and expires", func(t *testing.T) {
		clock.advance(100 * time.Second)
		r := ts.ask(t, "udp", "example.org.", mdns.TypeA)
		if got := r.Answer[0].Header().Ttl; got != 200 {
			t.Errorf("TTL after 100s: %d, want 200", got)
		}
		clock.advance(200 * time.Second)
		r = ts.ask(t, "udp", "example.org.", mdns.TypeA)
		if got := r.Answer[0].Header().Ttl; got != 300 {
			t.Errorf("TTL after expiry: %d, want a fresh 300", got)
		}
		if n := up.total("example.org."); n != 2 {
			t.Errorf("upstream saw %d questions, want 2 (one after expiry)", n)
		}
	})

	t.Run("case-insensitive cache, question echoed as asked", func(t *testing.T) {
		r := ts.ask(t, "udp", "EXAMPLE.org.", mdns.TypeA)
		if len(r.Answer) != 1 || r.Question[0].Name != "EXAMPLE.org." {
			t.Fatalf("%v", r)
		}
		if n := up.total("example.org."); n != 2 {
			t.Errorf("upstream saw %d questions, want still 2", n)
		}
	})

	t.Run("negative answer cached for the SOA minimum", func(t *testing.T) {
		for range 2 {
			r := ts.ask(t, "udp", "nx.example.org.", mdns.TypeA)
			if r.Rcode != mdns.RcodeNameError || len(r.Ns) != 1 {
				t.Fatalf("%v", r)
			}
		}
		if n := up.total("nx.example.org."); n != 1 {
			t.Errorf("upstream saw %d, want 1", n)
		}
		clock.advance(31 * time.Second)
		ts.ask(t, "udp", "nx.example.org.", mdns.TypeA)
		if n := up.total("nx.example.org."); n != 2 {
			t.Errorf("upstream saw %d after the negative TTL, want 2", n)
		}
	})

	t.Run("SERVFAIL is not cached", func(t *testing.T) {
		for range 2 {
			if r := ts.ask(t, "udp", "fail.example.org.", mdns.TypeA); r.Rcode != mdns.RcodeServerFailure {
				t.Fatalf("%v", r)
			}
		}
		if n := up.total("fail.example.org."); n != 2 {
			t.Errorf("upstream saw %d, want 2", n)
		}
	})

	t.Run("truncated upstream answer is retried over TCP", func(t *testing.T) {
		r := ts.ask(t, "udp", "big.example.org.", mdns.TypeA)
		if len(r.Answer) != 3 || r.Truncated {
			t.Fatalf("%v", r)
		}
		if up.count("udp", "big.example.org.", mdns.TypeA) != 1 || up.count("tcp", "big.example.org.", mdns.TypeA) != 1 {
			t.Errorf("upstream counts udp=%d tcp=%d, want 1 and 1",
				up.count("udp", "big.example.org.", mdns.TypeA), up.count("tcp", "big.example.org.", mdns.TypeA))
		}
	})

	t.Run("cluster names are never forwarded", func(t *testing.T) {
		for _, name := range []string{"nope.default.svc.cluster.local.", "cluster.local.", "x.y.pod.cluster.local."} {
			ts.ask(t, "udp", name, mdns.TypeA)
			if n := up.total(name); n != 0 {
				t.Errorf("%s reached the upstream %d times", name, n)
			}
		}
	})

	t.Run("reverse names: ours answered, ReverseNets authoritative, others forwarded", func(t *testing.T) {
		if r := ts.ask(t, "udp", "10.0.96.10.in-addr.arpa.", mdns.TypePTR); len(r.Answer) != 1 {
			t.Errorf("known ClusterIP: %v", r)
		}
		if r := ts.ask(t, "udp", "11.0.96.10.in-addr.arpa.", mdns.TypePTR); r.Rcode != mdns.RcodeNameError {
			t.Errorf("unknown address in ReverseNets: %s, want NXDOMAIN", mdns.RcodeToString[r.Rcode])
		}
		r := ts.ask(t, "udp", "1.2.0.192.in-addr.arpa.", mdns.TypePTR)
		if len(r.Answer) != 1 || r.Answer[0].(*mdns.PTR).Ptr != "host.example.org." {
			t.Errorf("outside address: %v", r)
		}
		if up.total("10.0.96.10.in-addr.arpa.")+up.total("11.0.96.10.in-addr.arpa.") != 0 {
			t.Error("a cluster reverse name reached the upstream")
		}
	})

	t.Run("ExternalName target resolved upstream when RD is set", func(t *testing.T) {
		r := ts.ask(t, "udp", "ext.default.svc.cluster.local.", mdns.TypeA)
		want := []string{"ext.default.svc.cluster.local. CNAME www.example.com.", "www.example.com. A 192.0.2.80"}
		if got := rrStrings(r.Answer); !equalStrings(got, want) || !r.Authoritative {
			t.Errorf("answer %q, want %q (aa)", got, want)
		}
		m := new(mdns.Msg)
		m.SetQuestion("ext.default.svc.cluster.local.", mdns.TypeA)
		m.RecursionDesired = false
		r = ts.exchange(t, "udp", m)
		want = want[:1]
		if got := rrStrings(r.Answer); !equalStrings(got, want) {
			t.Errorf("without RD: answer %q, want %q", got, want)
		}
	})

	t.Run("identical questions in flight share one upstream exchange", func(t *testing.T) {
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &mdns.Client{Net: "udp", Timeout: 10 * time.Second}
				m := new(mdns.Msg)
				m.SetQuestion("slow.example.org.", mdns.TypeA)
				r, _, err := c.Exchange(m, ts.udpAddr)
				if err != nil || len(r.Answer) != 1 {
					errs <- "bad answer"
				}
			}()
		}
		// Open the gate once every question is waiting (one upstream
		// exchange plus n-1 joined to it).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for waiting(ts.srv) < n-1 || up.total("slow.example.org.") < 1 {
			select {
			case <-ctx.Done():
				t.Fatalf("only %d questions joined", waiting(ts.srv))
			case <-time.After(time.Millisecond):
			}
		}
		close(up.gate)
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if got := up.total("slow.example.org."); got != 1 {
			t.Errorf("upstream saw %d questions, want 1", got)
		}
	})
}

// waiting is how many lookups wait on an exchange in flight.
func waiting(s *Server) int {
	s.fwd.mu.Lock()
	defer s.fwd.mu.Unlock()
	return s.fwd.waiters
}

// TestForwardUpstreamDown: an upstream that does not answer is skipped for
// the next; when none answers the client gets SERVFAIL.
func TestForwardUpstreamDown(t *testing.T) {
	up := startUpstream(t)
	// A UDP port with nobody reading: the exchange times out.
	dead, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	defer dead.Close()
	ts := startServer(t, Config{Upstreams: []string{dead.LocalAddr().String(), up.addr}, ForwardTimeout: 200 * time.Millisecond}, fixtureStore(t))
	if r := ts.ask(t, "udp", "example.org.", mdns.TypeA); len(r.Answer) != 1 {
		t.Errorf("second upstream not used: %v", r)
	}

	ts2 := startServer(t, Config{Upstreams: []string{dead.LocalAddr().String()}, ForwardTimeout: 200 * time.Millisecond}, fixtureStore(t))
	if r := ts2.ask(t, "udp", "example.org.", mdns.TypeA); r.Rcode != mdns.RcodeServerFailure {
		t.Errorf("no upstream answers: %s, want SERVFAIL", mdns.RcodeToString[r.Rcode])
	}
}
