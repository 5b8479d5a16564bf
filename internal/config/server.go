// Package config holds the plain configuration values that the command
// line builds and the components receive. It imports nothing heavy, so the
// flag layer (cli) never depends on the components themselves.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Server is everything `skiff server` is told on its command line. It is a
// plain value: cmd/skiff builds it from flags and hands it to Run.
type Server struct {
	DataDir     string // --data-dir
	Listen      string // --listen host:port (HTTPS)
	ServiceCIDR string // --service-cidr
	ClusterCIDR string // --cluster-cidr
	// NodeCIDRMaskSize is the prefix length of each node's pod subnet out
	// of ClusterCIDR (--node-cidr-mask-size; 0 = 24 for IPv4, 64 for IPv6).
	NodeCIDRMaskSize int
	NodePortRange    string   // --node-port-range, "30000-32767"
	ClusterDomain    string   // --cluster-domain
	TLSSANs          []string // --tls-san
	DisableAgent     bool     // --disable-agent
	DNSListen        string   // --dns-listen host:port; "" = no DNS in the server
	DNSUpstream      []string // --dns-upstream; nil = /etc/resolv.conf's nameservers
	NodeIP           []string // --node-ip
	Runtime          string   // --runtime (node agent issue)
	ContainerdSocket string   // --containerd-socket; "" = /run/containerd/containerd.sock
	// Cgroups and CgroupRoot (--cgroups, --cgroup-root): the built-in
	// agent's (see Agent). "" is off (a Server built in Go, not from
	// the flags, whose defaults are auto and /).
	Cgroups, CgroupRoot string
	// AllowedUnsafeSysctls (--allowed-unsafe-sysctls): the built-in
	// agent's (see Agent).
	AllowedUnsafeSysctls []string
	// InsecureRegistries (--insecure-registry): the built-in agent's
	// plain-HTTP registry hosts besides loopback (see Agent).
	InsecureRegistries []string
	// ContainerdLogger is the skiff binary the containerd shim runs as its
	// logging binary (`skiff containerd-log`); no flag: "" is this binary
	// (os.Executable()). Tests that run the server in a test binary set a
	// built skiff.
	ContainerdLogger string
	ProxyMode        string // --proxy-mode (service proxy issue)
	PodRoutes        string // --pod-routes host-gw|vxlan|none (the built-in agent)
	// EgressMasquerade (--egress-masquerade): the built-in agent
	// masquerades pod traffic leaving the cluster.
	EgressMasquerade bool
	IPVSScheduler    string // --ipvs-scheduler (proxy mode ipvs)
	// DNSTTL is the TTL of cluster DNS records and negative answers
	// (--dns-ttl, whole seconds, 1s..1h).
	DNSTTL time.Duration
	// MaxEndpointsPerSlice caps endpoints per EndpointSlice (1..1000).
	MaxEndpointsPerSlice int
	// NodeMonitorGracePeriod: a node silent this long becomes NotReady.
	NodeMonitorGracePeriod time.Duration
	// PodEvictionTimeout: a NotReady node's controller-owned pods are
	// deleted after this long.
	PodEvictionTimeout time.Duration
	// DisabledControllers names built-in controllers not to run ("gc",
	// "namespace", ...); tests use it to run their own instance instead.
	DisabledControllers []string
	// HistorySize is how many revisions of watch history the store keeps.
	HistorySize int
	// ShutdownTimeout bounds graceful shutdown on SIGTERM; connections
	// still busy then are cut, which is still a clean stop (a Warn says
	// how many). net/http's Shutdown counts a connection that has not sent
	// a request yet as idle only after 5 s (a client's spare dial is one),
	// so a shorter bound cuts those too. The tests use the default.
	ShutdownTimeout time.Duration
	// MaxRequestsInFlight (--max-requests-inflight) and
	// MaxMutatingRequestsInFlight (--max-mutating-requests-inflight) cap
	// the reads and the writes the API serves at once (watches and logs
	// apart); over them a request gets 429. 0: no limit.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// RequestBodyTimeout (--request-body-timeout) is how long a request
	// may take to send its body.
	RequestBodyTimeout time.Duration
	// MaxConnectionsPerAddress caps the HTTPS connections open at once
	// from one client address, an IPv6 /64 counting as one
	// (--max-connections-per-address; 0: no cap). MaxConnections caps them
	// in all (--max-connections; 0: a fifth below the file-descriptor
	// limit at start, at most 65,536). Over a cap, the longest-idle
	// connection is closed to make room, else the new one is refused
	// (internal/connlimit).
	MaxConnectionsPerAddress int
	MaxConnections           int
	// IdleTimeout closes a keep-alive connection with no request this long
	// (--idle-timeout; 0: 90 s).
	IdleTimeout time.Duration
	// RequestReadTimeout bounds reading one request, headers and body
	// (--request-read-timeout; 0: no bound beyond the 10 s for headers).
	// Watches, logs and exec-like requests are not bound once their
	// headers are in.
	RequestReadTimeout time.Duration
	// NoSync turns off fsync (tests and benchmarks only; never from flags).
	NoSync bool
	// AgentNetNS is the network namespace (a path such as /run/netns/x)
	// the built-in agent builds its pod network, DNS and service rules in;
	// "" is the server's own namespace. Tests set it to a namespace they
	// created; a test binary never runs the built-in agent without it.
	AgentNetNS string
	// AgentNodeName is the built-in agent's node name ("" = hostname).
	AgentNodeName string
	// PodTerminationDelay is the built-in agent's --pod-termination-delay
	// (see Agent.TerminationDelay).
	PodTerminationDelay time.Duration
	// LBCIDR is the pool LoadBalancer Services get their address from
	// (--lb-cidr, controller/servicelb); "" leaves them pending.
	LBCIDR string
	// ResetStore (--reset-store) lets a data dir that holds credentials
	// but no database (or a 0-byte one) start with an empty store; without
	// it such a start is refused (server/datadir.go).
	ResetStore bool
	// SecretsEncryption (--secrets-encryption) stores Secrets encrypted
	// with AES-GCM under the key file <data-dir>/cred/encryption-config.json
	// (made if missing) and encrypts the plaintext ones at start
	// (server/encryption.go).
	SecretsEncryption bool
	// MetricResolution is how often the server scrapes every Ready node's
	// /metrics/resource for metrics.k8s.io (metrics-server's
	// --metric-resolution; no flag: 0 is 15 s). Tests shorten it.
	MetricResolution time.Duration
}

// Defaults returns the documented defaults (docs/operating.md).
func ServerDefaults() Server {
	return Server{
		DataDir:                "/var/lib/skiff",
		Listen:                 "0.0.0.0:6443",
		ServiceCIDR:            "10.96.0.0/16",
		ClusterCIDR:            "10.244.0.0/16",
		NodePortRange:          "30000-32767",
		ClusterDomain:          "cluster.local",
		DNSListen:              "",
		DNSTTL:                 5 * time.Second,
		Runtime:                "auto",
		Cgroups:                "auto",
		CgroupRoot:             "/",
		ProxyMode:              "iptables",
		PodRoutes:              "host-gw",
		EgressMasquerade:       true,
		IPVSScheduler:          "rr",
		HistorySize:            50000,
		MaxEndpointsPerSlice:   100,
		NodeMonitorGracePeriod: 40 * time.Second,
		PodEvictionTimeout:     5 * time.Minute,
		ShutdownTimeout:        10 * time.Second,
		PodTerminationDelay:    2 * time.Second,
		// kube-apiserver's defaults (apiserver.Default*).
		MaxRequestsInFlight:         400,
		MaxMutatingRequestsInFlight: 200,
		RequestBodyTimeout:          60 * time.Second,

		// The HTTPS connections (conns.go in package server).
		MaxConnectionsPerAddress: 1000,
		IdleTimeout:              90 * time.Second,
		RequestReadTimeout:       time.Minute,
	}
}

// Parsed holds the validated forms of Server's strings.
type Parsed struct {
	ServiceCIDR netip.Prefix
	ClusterCIDR netip.Prefix
	PortBase    int // first NodePort
	PortSize    int // how many NodePorts
	NodeIPs     []netip.Addr
	ListenHost  string
	ListenPort  string
	LBCIDR      netip.Prefix // invalid when --lb-cidr is unset
}

// Parse validates the configuration and returns its parsed forms.
func (c Server) Parse() (Parsed, error) {
	var p Parsed
	var err error
	if p.ServiceCIDR, err = netip.ParsePrefix(c.ServiceCIDR); err != nil {
		return p, fmt.Errorf("--service-cidr: %w", err)
	}
	p.ServiceCIDR = p.ServiceCIDR.Masked()
	if p.ClusterCIDR, err = netip.ParsePrefix(c.ClusterCIDR); err != nil {
		return p, fmt.Errorf("--cluster-cidr: %w", err)
	}
	if p.ServiceCIDR.Overlaps(p.ClusterCIDR) {
		return p, fmt.Errorf("--service-cidr %s overlaps --cluster-cidr %s", p.ServiceCIDR, p.ClusterCIDR)
	}
	if err := checkRegistryHosts(c.InsecureRegistries); err != nil {
		return p, err
	}
	if err := checkCgroups(c.Cgroups, c.CgroupRoot); err != nil {
		return p, err
	}
	lo, hi, ok := strings.Cut(c.NodePortRange, "-")
	if !ok {
		return p, fmt.Errorf("--node-port-range %q: want LOW-HIGH", c.NodePortRange)
	}
	l, err1 := strconv.Atoi(strings.TrimSpace(lo))
	h, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || l < 1 || h > 65535 || h < l {
		return p, fmt.Errorf("--node-port-range %q: want LOW-HIGH within 1-65535", c.NodePortRange)
	}
	p.PortBase, p.PortSize = l, h-l+1
	for _, s := range c.NodeIP {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return p, fmt.Errorf("--node-ip %q: %w", s, err)
		}
		p.NodeIPs = append(p.NodeIPs, a)
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return p, fmt.Errorf("--listen %q: %w", c.Listen, err)
	}
	p.ListenHost, p.ListenPort = host, port
	if c.MaxEndpointsPerSlice < 1 || c.MaxEndpointsPerSlice > 1000 {
		return p, fmt.Errorf("--max-endpoints-per-slice %d: must be between 1 and 1000", c.MaxEndpointsPerSlice)
	}
	if c.NodeMonitorGracePeriod <= 0 || c.PodEvictionTimeout <= 0 {
		return p, fmt.Errorf("--node-monitor-grace-period and --pod-eviction-timeout must be positive")
	}
	if c.DNSListen != "" {
		if _, _, err := net.SplitHostPort(c.DNSListen); err != nil {
			return p, fmt.Errorf("--dns-listen %q: %w", c.DNSListen, err)
		}
	}
	if c.DNSTTL < time.Second || c.DNSTTL > time.Hour || c.DNSTTL%time.Second != 0 {
		return p, fmt.Errorf("--dns-ttl %v: must be whole seconds between 1s and 1h", c.DNSTTL)
	}
	if c.DataDir == "" {
		return p, fmt.Errorf("--data-dir must not be empty")
	}
	if c.MaxRequestsInFlight < 0 || c.MaxMutatingRequestsInFlight < 0 {
		return p, fmt.Errorf("--max-requests-inflight and --max-mutating-requests-inflight must not be negative")
	}
	if c.RequestBodyTimeout <= 0 {
		return p, fmt.Errorf("--request-body-timeout %v: must be positive", c.RequestBodyTimeout)
	}
	if c.PodTerminationDelay < 0 {
		return p, fmt.Errorf("--pod-termination-delay %v: must not be negative", c.PodTerminationDelay)
	}
	if c.LBCIDR != "" {
		if p.LBCIDR, err = netip.ParsePrefix(c.LBCIDR); err != nil {
			return p, fmt.Errorf("--lb-cidr: %w", err)
		}
		p.LBCIDR = p.LBCIDR.Masked()
		if !p.LBCIDR.Addr().Is4() || p.LBCIDR.Bits() > 30 {
			return p, fmt.Errorf("--lb-cidr %s: want an IPv4 range of /30 or larger", c.LBCIDR)
		}
		if p.LBCIDR.Overlaps(p.ServiceCIDR) || p.LBCIDR.Overlaps(p.ClusterCIDR) {
			return p, fmt.Errorf("--lb-cidr %s overlaps --service-cidr or --cluster-cidr", c.LBCIDR)
		}
	}
	if m := c.NodeCIDRMaskSize; m != 0 {
		if m < p.ClusterCIDR.Bits() || m > p.ClusterCIDR.Addr().BitLen() || m-p.ClusterCIDR.Bits() > 20 {
			return p, fmt.Errorf("--node-cidr-mask-size %d: must be between the --cluster-cidr's %d and %d, and at most 20 more",
				m, p.ClusterCIDR.Bits(), min(p.ClusterCIDR.Addr().BitLen(), p.ClusterCIDR.Bits()+20))
		}
	} else if p.ClusterCIDR.Addr().Is4() && p.ClusterCIDR.Bits() > 24 {
		return p, fmt.Errorf("--cluster-cidr %s is smaller than a node's /24: pass --node-cidr-mask-size", p.ClusterCIDR)
	}
	if err := checkNodeModes(c.Runtime, c.ProxyMode, c.IPVSScheduler); err != nil {
		return p, err
	}
	if c.MaxConnections < 0 || c.MaxConnectionsPerAddress < 0 {
		return p, fmt.Errorf("--max-connections and --max-connections-per-address must not be negative")
	}
	if c.IdleTimeout < 0 || c.RequestReadTimeout < 0 {
		return p, fmt.Errorf("--idle-timeout and --request-read-timeout must not be negative")
	}
	return p, nil
}
