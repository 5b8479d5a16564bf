package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Agent is everything `skiff agent` is told on its command line.
type Agent struct {
	Server        string   // --server https://host:port
	Token         string   // --token (the server's tokens/node)
	TokenFile     string   // --token-file, read when --token is empty
	ServerCA      string   // --server-ca PEM file; "" = the system roots
	NodeName      string   // --node-name; "" = the host name
	NodeIP        []string // --node-ip
	DataDir       string   // --data-dir
	Runtime       string   // --runtime auto|containerd|process
	ProxyMode     string   // --proxy-mode
	IPVSScheduler string   // --ipvs-scheduler (proxy mode ipvs)
	ClusterDomain string   // --cluster-domain
	ClusterCIDR   string   // --cluster-cidr: traffic from outside it is masqueraded
	DNSUpstream   []string // --dns-upstream; nil = /etc/resolv.conf
	// PodRoutes (--pod-routes) is host-gw (routes to the other nodes'
	// podCIDRs via their InternalIPs), vxlan or none.
	PodRoutes string
	// EgressMasquerade (--egress-masquerade): pod traffic to destinations
	// outside ClusterCIDR leaves with the node's address.
	EgressMasquerade bool
	// NetNS (--netns) is a network namespace path the agent builds its pod
	// network, node DNS and probes in; "" is the agent's own namespace.
	// The API connection stays in the agent's namespace. It lets several
	// agents share one machine (tests, demos).
	NetNS string
	// NodeAPIListen (--node-api-listen) is the node API's address (logs and
	// trace for the server; "" turns it off); NodeAPIURL (--node-api-url)
	// the URL published on the Node, default https://<node IP>:<port>.
	NodeAPIListen string
	NodeAPIURL    string
	// MetricsBindAddress (--metrics-bind-address) is where /metrics (the
	// proxy's kube-proxy metrics, Go and process) is served over plain
	// HTTP; HealthzBindAddress (--healthz-bind-address) where the proxy's
	// /healthz and /livez are. "" turns either off.
	MetricsBindAddress string
	HealthzBindAddress string
	// ContainerdSocket (--containerd-socket) is the containerd to use;
	// "" is /run/containerd/containerd.sock.
	ContainerdSocket string
	// Cgroups (--cgroups: auto, on, off) and CgroupRoot (--cgroup-root):
	// pods in cgroups as the kubelet makes them (netagent/cgroups), under
	// CgroupRoot; auto is on when the agent is root and the node has a
	// cgroup file system with cpu or memory.
	Cgroups, CgroupRoot string
	// AllowedUnsafeSysctls (--allowed-unsafe-sysctls): sysctls or
	// prefixes* pods may set beyond the kubelet's safe set.
	AllowedUnsafeSysctls []string
	// InsecureRegistries (--insecure-registry) are the registry hosts
	// ("host:port", or "host" for any port) pulled from over plain HTTP;
	// loopback always is.
	InsecureRegistries []string
	// TerminationDelay (--pod-termination-delay) is how long a Ready pod
	// being deleted keeps running before SIGTERM, so that every proxy
	// drops its endpoint first; 0: none.
	TerminationDelay time.Duration
}

// AgentDefaults returns the documented defaults.
func AgentDefaults() Agent {
	return Agent{
		DataDir:          "/var/lib/skiff-agent",
		Runtime:          "auto",
		Cgroups:          "auto",
		CgroupRoot:       "/",
		ProxyMode:        "iptables",
		IPVSScheduler:    "rr",
		ClusterDomain:    "cluster.local",
		ClusterCIDR:      "10.244.0.0/16",
		PodRoutes:        "host-gw",
		EgressMasquerade: true,
		NodeAPIListen:    ":10250",
		// netagent.DefaultMetricsListen and DefaultHealthzListen (kube-proxy's).
		MetricsBindAddress: "127.0.0.1:10249",
		HealthzBindAddress: "0.0.0.0:10256",
		// netagent.DefaultTerminationDelay (not imported: config stays light).
		TerminationDelay: 2 * time.Second,
	}
}

// ParsedAgent holds the validated forms of Agent's strings.
type ParsedAgent struct {
	NodeIPs     []netip.Addr
	ClusterCIDR netip.Prefix
}

// Parse validates the agent configuration.
func (c Agent) Parse() (ParsedAgent, error) {
	var p ParsedAgent
	u, err := url.Parse(c.Server)
	if c.Server == "" || err != nil || u.Scheme != "https" || u.Host == "" {
		return p, fmt.Errorf("--server %q: want https://host:port", c.Server)
	}
	if c.Token == "" && c.TokenFile == "" {
		return p, fmt.Errorf("--token or --token-file is required (the server's <data-dir>/tokens/node)")
	}
	for _, s := range c.NodeIP {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return p, fmt.Errorf("--node-ip %q: %w", s, err)
		}
		p.NodeIPs = append(p.NodeIPs, a)
	}
	if c.ClusterCIDR != "" {
		cc, err := netip.ParsePrefix(c.ClusterCIDR)
		if err != nil {
			return p, fmt.Errorf("--cluster-cidr %q: %w", c.ClusterCIDR, err)
		}
		p.ClusterCIDR = cc.Masked()
	}
	if c.DataDir == "" {
		return p, fmt.Errorf("--data-dir must not be empty")
	}
	if err := checkRegistryHosts(c.InsecureRegistries); err != nil {
		return p, err
	}
	if err := checkCgroups(c.Cgroups, c.CgroupRoot); err != nil {
		return p, err
	}
	if c.NodeAPIURL != "" {
		if u, err := url.Parse(c.NodeAPIURL); err != nil || u.Scheme != "https" || u.Host == "" {
			return p, fmt.Errorf("--node-api-url %q: want https://host:port", c.NodeAPIURL)
		}
	}
	for _, l := range []struct{ flag, addr string }{
		{"--node-api-listen", c.NodeAPIListen},
		{"--metrics-bind-address", c.MetricsBindAddress},
		{"--healthz-bind-address", c.HealthzBindAddress},
	} {
		if err := checkListen(l.flag, l.addr); err != nil {
			return p, err
		}
	}
	if err := checkNodeModes(c.Runtime, c.ProxyMode, c.IPVSScheduler); err != nil {
		return p, err
	}
	if c.TerminationDelay < 0 {
		return p, fmt.Errorf("--pod-termination-delay %v: must not be negative", c.TerminationDelay)
	}
	return p, nil
}

// checkNodeModes validates the node-agent flags both the agent and the
// all-in-one server take: --runtime, --proxy-mode and --ipvs-scheduler
// (empty is each one's default).
func checkNodeModes(runtime, proxyMode, ipvsScheduler string) error {
	switch runtime {
	case "", "auto", "containerd", "process":
	default:
		return fmt.Errorf("--runtime %q: want auto, containerd or process", runtime)
	}
	switch proxyMode {
	case "", "iptables", "nftables", "ipvs":
	default:
		return fmt.Errorf("--proxy-mode %q: want iptables, nftables or ipvs", proxyMode)
	}
	switch ipvsScheduler {
	case "", "rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh", "twos":
	default:
		return fmt.Errorf("--ipvs-scheduler %q: want an IPVS scheduler (rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, fo, ovf, mh, twos)", ipvsScheduler)
	}
	return nil
}

// checkListen accepts "" (off) and host:port with an IP (or no) host and
// a port 0-65535.
func checkListen(flag, addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want host:port (or empty to turn it off): %w", flag, addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%s %q: port %q is not a number 0-65535", flag, addr, port)
	}
	if host != "" && host != "localhost" {
		if _, err := netip.ParseAddr(host); err != nil {
			return fmt.Errorf("%s %q: host %q is not an IP address", flag, addr, host)
		}
	}
	return nil
}

// checkRegistryHosts refuses an --insecure-registry that is not a bare
// host or host:port (a scheme or a path).
func checkRegistryHosts(hosts []string) error {
	for _, h := range hosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return fmt.Errorf("--insecure-registry %q: want host or host:port, without scheme or path", h)
		}
	}
	return nil
}

// checkCgroups checks --cgroups and --cgroup-root.
func checkCgroups(mode, root string) error {
	switch mode {
	case "", "auto", "on", "off":
	default:
		return fmt.Errorf("--cgroups %q: want auto, on or off", mode)
	}
	if root != "" && !strings.HasPrefix(root, "/") {
		return fmt.Errorf("--cgroup-root %q: want an absolute cgroup path such as / or /skiff", root)
	}
	return nil
}
