package dns

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Config.
const (
	DefaultDomain         = "cluster.local"
	DefaultTTL            = 5 * time.Second
	DefaultCacheSize      = 4096
	DefaultForwardTimeout = 2 * time.Second
	DefaultResolvConf     = "/etc/resolv.conf"

	// maxTTL bounds Config.TTL (a record TTL is 32 bits of seconds, but a
	// cluster record cached for longer than an hour is a stale record).
	maxTTL = time.Hour
)

// Config configures a Server. The zero value is usable: every zero field
// takes its default.
type Config struct {
	// Domain is the cluster domain (default "cluster.local"); names under it
	// are answered from the Store and never forwarded.
	Domain string
	// TTL of every cluster record and of negative answers (default 5s,
	// whole seconds, at most 1h).
	TTL time.Duration
	// Upstreams are the servers ("host" or "host:port", port 53 by default)
	// that names outside the cluster domain are forwarded to, tried in
	// order. nil means the nameservers of ResolvConf; an empty non-nil slice
	// disables forwarding (outside names are REFUSED).
	Upstreams []string
	// ResolvConf is read for Upstreams when they are nil (default
	// /etc/resolv.conf).
	ResolvConf string
	// AllowedNets are the client networks that get answers (the pod CIDR,
	// the node addresses). Loopback is always allowed. Every other client
	// gets REFUSED, for cluster and outside names alike.
	AllowedNets []netip.Prefix
	// ReverseNets are networks whose reverse names (PTR) the server answers
	// authoritatively: an address in them that is no ClusterIP and no
	// headless endpoint gets NXDOMAIN instead of being forwarded (the
	// service CIDR and the pod CIDR belong here). Reverse names of known
	// addresses are answered whether or not they are in ReverseNets.
	ReverseNets []netip.Prefix
	// NameserverAddrs are the addresses answered for ns.dns.<domain>, the
	// name in the apex NS record (the node's DNS address). Empty: that name
	// exists without address records.
	NameserverAddrs []netip.Addr
	// CacheSize is the number of forwarded answers kept (default 4096);
	// negative disables the cache.
	CacheSize int
	// ForwardTimeout bounds one exchange with one upstream (default 2s).
	ForwardTimeout time.Duration
	// Logger receives the server's logs (default: discarded).
	Logger *slog.Logger
	// Registerer, if set, gets the server's metrics registered.
	Registerer prometheus.Registerer
}

// settings is a validated Config with derived values.
type settings struct {
	zone     string // "cluster.local.", lowercase
	dotZone  string // ".cluster.local."
	svcZone  string // ".svc.cluster.local."
	ttl      uint32
	upstream []string // host:port
	allowed  acl
	reverse  []netip.Prefix
	nsAddrs  []netip.Addr
	cache    int
	timeout  time.Duration
	log      *slog.Logger
}

func (c Config) settings() (settings, error) {
	var st settings
	d := strings.TrimSuffix(lowerName(strings.TrimSpace(c.Domain)), ".")
	if d == "" {
		d = DefaultDomain
	}
	if _, ok := mdns.IsDomainName(d); !ok || strings.ContainsAny(d, "\\ ") || strings.HasPrefix(d, ".") {
		return st, fmt.Errorf("dns: domain %q: %w", c.Domain, ErrInvalidConfig)
	}
	st.zone = d + "."
	st.dotZone = "." + st.zone
	st.svcZone = ".svc." + st.zone

	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < time.Second || ttl > maxTTL {
		return st, fmt.Errorf("dns: ttl %v not in [1s, %v]: %w", c.TTL, maxTTL, ErrInvalidConfig)
	}
	st.ttl = uint32(ttl / time.Second)

	ups := c.Upstreams
	if ups == nil {
		path := c.ResolvConf
		if path == "" {
			path = DefaultResolvConf
		}
		cc, err := mdns.ClientConfigFromFile(path)
		if err != nil {
			return st, fmt.Errorf("dns: upstreams from %s: %w", path, err)
		}
		for _, s := range cc.Servers {
			ups = append(ups, net.JoinHostPort(s, cc.Port))
		}
	}
	for _, u := range ups {
		hp, err := upstreamAddr(u)
		if err != nil {
			return st, err
		}
		st.upstream = append(st.upstream, hp)
	}

	for _, p := range c.AllowedNets {
		if !p.IsValid() {
			return st, fmt.Errorf("dns: allowed net %v: %w", p, ErrInvalidConfig)
		}
	}
	st.allowed = newACL(c.AllowedNets)
	for _, p := range c.ReverseNets {
		if !p.IsValid() {
			return st, fmt.Errorf("dns: reverse net %v: %w", p, ErrInvalidConfig)
		}
		st.reverse = append(st.reverse, netip.PrefixFrom(p.Addr().Unmap(), unmapBits(p)).Masked())
	}
	for _, a := range c.NameserverAddrs {
		if a = a.Unmap().WithZone(""); a.IsValid() {
			st.nsAddrs = append(st.nsAddrs, a)
		}
	}

	st.cache = c.CacheSize
	if st.cache == 0 {
		st.cache = DefaultCacheSize
	}
	st.timeout = c.ForwardTimeout
	if st.timeout == 0 {
		st.timeout = DefaultForwardTimeout
	}
	if st.timeout < 0 {
		return st, fmt.Errorf("dns: forward timeout %v: %w", c.ForwardTimeout, ErrInvalidConfig)
	}
	st.log = c.Logger
	if st.log == nil {
		st.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st.log = st.log.With("component", "dns")
	return st, nil
}

// upstreamAddr normalises "host" or "host:port" to host:port.
func upstreamAddr(u string) (string, error) {
	u = strings.TrimSpace(u)
	if ap, err := netip.ParseAddrPort(u); err == nil {
		return ap.String(), nil
	}
	if a, err := netip.ParseAddr(strings.Trim(u, "[]")); err == nil {
		return netip.AddrPortFrom(a, 53).String(), nil
	}
	host, port, err := net.SplitHostPort(u)
	if err != nil {
		host, port = u, "53"
	}
	if host == "" || strings.ContainsAny(host, " /") {
		return "", fmt.Errorf("dns: upstream %q: %w", u, ErrInvalidConfig)
	}
	return net.JoinHostPort(host, port), nil
}

// unmapBits is the prefix length of p once its address is unmapped.
func unmapBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		b := p.Bits() - 96
		if b < 0 {
			b = 0
		}
		return b
	}
	return p.Bits()
}
