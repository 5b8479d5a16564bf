package trace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
)

// DefaultNdots is the resolver's ndots without an options line.
const DefaultNdots = 1

// ResolvConf is what the stub resolver reads from /etc/resolv.conf.
type ResolvConf struct {
	Nameservers []string
	Search      []string
	Ndots       int
}

// ParseResolvConf reads nameserver, search/domain and options ndots:N
// (the last search or domain line wins, as in glibc; ndots is capped at
// 15).
func ParseResolvConf(data []byte) ResolvConf {
	rc := ResolvConf{Ndots: DefaultNdots}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.Nameservers = append(rc.Nameservers, f[1])
		case "search", "domain":
			rc.Search = append([]string(nil), f[1:]...)
		case "options":
			for _, o := range f[1:] {
				if v, ok := strings.CutPrefix(o, "ndots:"); ok {
					if n, err := strconv.Atoi(v); err == nil && n >= 0 {
						rc.Ndots = min(n, 15)
					}
				}
			}
		}
	}
	return rc
}

// Candidates are the names the resolver tries for name, in order, each
// fully qualified (with the trailing dot).
func Candidates(name string, rc ResolvConf) []string {
	if strings.HasSuffix(name, ".") {
		return []string{name}
	}
	var searched []string
	for _, s := range rc.Search {
		s = strings.TrimSuffix(s, ".")
		if s == "" {
			continue
		}
		searched = append(searched, name+"."+s+".")
	}
	if strings.Count(name, ".") >= rc.Ndots {
		return append([]string{name + "."}, searched...)
	}
	return append(searched, name+".")
}

// Exchange sends one DNS query and returns the answer.
type Exchange func(ctx context.Context, m *dns.Msg) (*dns.Msg, error)

// Resolve runs the search expansion of host through ex (A queries) and
// records every query up to the first one with an address. The warnings
// say why nothing answered.
func Resolve(ctx context.Context, ex Exchange, host string, rc ResolvConf) (*api.TraceDNS, []string) {
	out := &api.TraceDNS{Nameservers: rc.Nameservers, Search: rc.Search, Ndots: rc.Ndots, Queries: []api.TraceDNSQuery{}}
	var warns []string
	for _, name := range Candidates(host, rc) {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.RecursionDesired = true
		q := api.TraceDNSQuery{Name: name, Type: "A"}
		r, err := ex(ctx, m)
		if err != nil {
			q.Rcode = "ERROR"
			out.Queries = append(out.Queries, q)
			warns = append(warns, fmt.Sprintf("DNS: the query for %s got no answer from the nameserver: %v", name, err))
			return out, warns // the resolver gives up when the server is unreachable
		}
		q.Rcode = dns.RcodeToString[r.Rcode]
		for _, rr := range r.Answer {
			switch v := rr.(type) {
			case *dns.A:
				q.Answers = append(q.Answers, v.A.String())
			case *dns.CNAME:
				q.CNAME = v.Target
			}
		}
		out.Queries = append(out.Queries, q)
		if r.Rcode == dns.RcodeSuccess && len(q.Answers) > 0 {
			out.Answer = q.Answers[0]
			return out, warns
		}
		if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
			warns = append(warns, fmt.Sprintf("DNS: %s answered %s", name, q.Rcode))
		}
	}
	warns = append(warns, fmt.Sprintf("DNS: %q does not resolve: no candidate of the search expansion has an address (is the Service name and namespace right?)", host))
	return out, warns
}

// Target is what a URL names.
type Target struct {
	Host     string
	Port     int32
	Protocol string // TCP or UDP
	// IP is Host when Host is an address.
	IP netip.Addr
}

// ParseTarget reads a URL as `skiff trace` takes it: scheme://host[:port]/…,
// host:port or a bare host. The port defaults from the scheme (http 80,
// https 443, dns 53/UDP, udp://host:port is UDP); a bare host is http.
func ParseTarget(raw string) (Target, error) {
	if raw == "" {
		return Target{}, fmt.Errorf("trace: empty url")
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "http", raw
	}
	scheme = strings.ToLower(scheme)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	t := Target{Protocol: "TCP"}
	var port string
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return Target{}, fmt.Errorf("trace: url %q: unclosed [", raw)
		}
		t.Host, port = rest[1:end], strings.TrimPrefix(rest[end+1:], ":")
	} else if h, p, ok := strings.Cut(rest, ":"); ok {
		t.Host, port = h, p
	} else {
		t.Host = rest
	}
	if t.Host == "" {
		return Target{}, fmt.Errorf("trace: url %q has no host", raw)
	}
	switch scheme {
	case "http":
		t.Port = 80
	case "https":
		t.Port = 443
	case "dns":
		t.Port, t.Protocol = 53, "UDP"
	case "udp":
		t.Protocol = "UDP"
	case "tcp":
	default:
		return Target{}, fmt.Errorf("trace: url %q: scheme %q: want http, https, tcp, udp or dns", raw, scheme)
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return Target{}, fmt.Errorf("trace: url %q: bad port %q", raw, port)
		}
		t.Port = int32(n)
	}
	if t.Port == 0 {
		return Target{}, fmt.Errorf("trace: url %q: no port (tcp:// and udp:// need one)", raw)
	}
	if ip, err := netip.ParseAddr(t.Host); err == nil {
		t.IP = ip.Unmap()
	}
	return t, nil
}
