package netagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/nodeip"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Config is what an agent is told: where the server is, who it is, and
// where its state lives. Run fills the zero fields with the defaults
// below.
type Config struct {
	// Server is the API server's URL (https://host:port). Required.
	Server string
	// CAPEM verifies the server; empty means the system roots.
	CAPEM []byte
	// Token is the cluster's join token (the server's tokens/node). It is
	// exchanged for a node token (see Join); a cached node token is used
	// first.
	Token string
	// NodeName is the node's name (default: the host name, lower-cased).
	NodeName string
	// NodeIPs are the node's addresses (InternalIP; the pods' hostIP).
	// Default: the first global unicast IPv4 address of an up interface.
	NodeIPs []netip.Addr
	// DataDir is the agent's state: DataDir/agent (credentials),
	// DataDir/pods/<uid> (resolv.conf, hosts, logs), and whatever the
	// network and runtime keep there. Required.
	DataDir string
	// Runtime names the runtime (auto, containerd or process); it is
	// reported in the Node's nodeInfo. The runtime itself is Deps.Runtime.
	Runtime string
	// ProxyMode is handed to Deps.Proxy.
	ProxyMode string
	// IPVSScheduler is the IPVS scheduler of proxy mode ipvs ("" is rr).
	IPVSScheduler string
	// ClusterCIDR is the whole pod range (the server's --cluster-cidr); the
	// proxy masquerades traffic from outside it. Zero: the node's podCIDR.
	ClusterCIDR netip.Prefix
	// NoEgressMasquerade turns off the masquerade of pod traffic that
	// leaves the cluster (package egress: a pod's source address becomes
	// the node's for any destination outside ClusterCIDR). On by default,
	// as the bridge CNI plugin's ipMasq and k3s' flannel are; off, leftover
	// rules are removed.
	NoEgressMasquerade bool
	// PodRoutes is how this node's pods reach other nodes' pods: host-gw
	// (the default: a route to every other node's podCIDR via its
	// InternalIP, in the node's namespace; the nodes must share an L2
	// segment), vxlan (the same routes through a VXLAN device; the nodes
	// only need UDP 8472 between them; pods get MTU 1450) or none
	// (something else routes). See netagent/podroutes.
	PodRoutes string
	// ClusterDomain is the DNS domain (default cluster.local).
	ClusterDomain string
	// CgroupRoot is the cgroup, in every hierarchy, that the pods'
	// kubepods tree goes under (the kubelet's --cgroup-root; default
	// "/"); used with Deps.Cgroups.
	CgroupRoot string
	// AllowedUnsafeSysctls are the sysctls (names, or prefixes ending in
	// "*") pods may set besides SafeSysctls (--allowed-unsafe-sysctls);
	// a pod asking for another is refused (sysctls.go).
	AllowedUnsafeSysctls []string
	// DNSListenPort is the node DNS's port on the bridge gateway (default
	// 53); DNSListenAddr, when set, replaces gateway:port entirely (tests).
	DNSListenPort int
	DNSListenAddr string
	// DNSUpstreams are the node DNS's upstreams for names outside the
	// cluster; nil reads HostResolvConf.
	DNSUpstreams []string
	// HostResolvConf is the node's resolv.conf, for dnsPolicy Default and
	// the DNS's upstreams (default /etc/resolv.conf).
	HostResolvConf string
	// MaxPods is the node's pod capacity (default 110).
	MaxPods int
	// LeaseDuration (default 40s) and LeaseRenewInterval (default 10s) of
	// the node's heartbeat Lease in kube-node-lease.
	LeaseDuration      time.Duration
	LeaseRenewInterval time.Duration
	// NodeStatusInterval: the Ready condition's heartbeat is re-posted this
	// often even without a change (default 1m).
	NodeStatusInterval time.Duration
	// RelistPeriod: how often the runtime's containers are listed to notice
	// exits (default 1s).
	RelistPeriod time.Duration
	// ResyncPeriod: each pod worker re-checks its pod at least this often
	// (default 10s).
	ResyncPeriod time.Duration
	// BackoffBase and BackoffMax bound the restart back-off of crashing
	// containers (default 10s doubling to 5m), as the kubelet.
	BackoffBase, BackoffMax time.Duration
	// NodeAPIListen is the node API's address (host:port, in the agent's
	// own netns; see nodeapi.go); "" turns it off. `skiff agent` defaults
	// it to DefaultNodeAPIListen.
	NodeAPIListen string
	// NodeAPIURL is the URL published on the Node for the server; default
	// https://<listen host, or the first NodeIP>:<port>.
	NodeAPIURL string
	// MetricsListen is the metrics listener's address (host:port, plain
	// HTTP in the agent's own netns; see metrics.go); "" turns it off.
	// `skiff agent` defaults it to DefaultMetricsListen.
	MetricsListen string
	// HealthzListen is the service proxy's healthz listener (/healthz,
	// /livez); "" turns it off. `skiff agent` defaults it to
	// DefaultHealthzListen.
	HealthzListen string
	// Registerer receives the agent's metrics (the proxy's); nil is a
	// registry of the agent's own with the Go and process collectors. The
	// built-in agent of `skiff server` is given the server's registry, so
	// that the API server's /metrics shows both. MetricsListen serves it
	// when it is also a prometheus.Gatherer.
	Registerer prometheus.Registerer
	// TerminationDelay is how long a Ready pod being deleted keeps running
	// untouched before its containers get SIGTERM (default 2s, capped at
	// half the pod's grace period; negative: none). Meanwhile the
	// EndpointSlice marks it terminating and every proxy drops it from the
	// Service's rules, so no new connection is sent to a process that has
	// stopped accepting: the zero-downtime half of a rolling update that
	// the kubelet leaves to a preStop sleep.
	TerminationDelay time.Duration
	// Logger receives the agent's logs; nil discards them.
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultClusterDomain      = "cluster.local"
	DefaultDNSPort            = 53
	DefaultMaxPods            = 110
	DefaultLeaseDuration      = 40 * time.Second
	DefaultLeaseRenewInterval = 10 * time.Second
	DefaultNodeStatusInterval = time.Minute
	DefaultRelistPeriod       = time.Second
	DefaultResyncPeriod       = 10 * time.Second
	DefaultBackoffBase        = 10 * time.Second
	DefaultBackoffMax         = 5 * time.Minute
	DefaultHostResolvConf     = "/etc/resolv.conf"
	// DefaultGracePeriod is a pod's termination grace period when its spec
	// has none.
	DefaultGracePeriod = 30 * time.Second
	// DefaultTerminationDelay is Config.TerminationDelay's default: well
	// above a proxy's sync latency (its MinSyncPeriod is 100 ms) plus the
	// watch hops from the pod's deletion to every node's rules.
	DefaultTerminationDelay = 2 * time.Second
)

func (c *Config) defaults() error {
	if c.Server == "" {
		return errors.New("netagent: Config.Server is required")
	}
	if c.DataDir == "" {
		return errors.New("netagent: Config.DataDir is required")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return fmt.Errorf("netagent: data dir: %w", err)
	}
	c.DataDir = abs
	if c.NodeName == "" {
		n, err := defaultNodeName()
		if err != nil {
			return err
		}
		c.NodeName = n
	}
	if errs := api.NameIsDNSSubdomain(c.NodeName, false); len(errs) > 0 {
		return fmt.Errorf("netagent: node name %q: %v", c.NodeName, errs)
	}
	if len(c.NodeIPs) == 0 {
		if a, ok := nodeip.FirstGlobalIPv4(); ok {
			c.NodeIPs = []netip.Addr{a}
		}
	}
	switch c.PodRoutes {
	case "":
		c.PodRoutes = PodRoutesHostGW
	case PodRoutesHostGW, PodRoutesVXLAN, PodRoutesNone:
	default:
		return fmt.Errorf("netagent: pod routes %q: want %s, %s or %s", c.PodRoutes, PodRoutesHostGW, PodRoutesVXLAN, PodRoutesNone)
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = DefaultClusterDomain
	}
	if c.CgroupRoot == "" {
		c.CgroupRoot = "/"
	}
	if err := CheckUnsafeSysctls(c.AllowedUnsafeSysctls); err != nil {
		return fmt.Errorf("netagent: %w", err)
	}
	if c.DNSListenPort == 0 {
		c.DNSListenPort = DefaultDNSPort
	}
	if c.HostResolvConf == "" {
		c.HostResolvConf = DefaultHostResolvConf
	}
	if c.MaxPods <= 0 {
		c.MaxPods = DefaultMaxPods
	}
	setDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setDur(&c.LeaseDuration, DefaultLeaseDuration)
	setDur(&c.LeaseRenewInterval, DefaultLeaseRenewInterval)
	setDur(&c.NodeStatusInterval, DefaultNodeStatusInterval)
	setDur(&c.RelistPeriod, DefaultRelistPeriod)
	setDur(&c.ResyncPeriod, DefaultResyncPeriod)
	setDur(&c.BackoffBase, DefaultBackoffBase)
	setDur(&c.BackoffMax, DefaultBackoffMax)
	if c.TerminationDelay == 0 {
		c.TerminationDelay = DefaultTerminationDelay
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// PodNetwork is what the agent needs of pod networking; *cni.Network
// satisfies it. Its methods work in the network namespace of the calling
// thread: the agent calls them inside Deps.NodeNetNS.
type PodNetwork interface {
	Setup(ctx context.Context) error
	AddPod(ctx context.Context, podUID, namespace, name string, ports []cni.PortMapping) (cni.PodNetwork, error)
	DelPod(ctx context.Context, podUID string) error
	Pods(ctx context.Context) ([]string, error)
	Gateway() netip.Addr
}

var _ PodNetwork = (*cni.Network)(nil)

// NetworkParams is what Deps.NewPodNetwork is told once the node has its
// pod range.
type NetworkParams struct {
	DataDir     string
	PodCIDR     netip.Prefix
	ServiceCIDR netip.Prefix
	// MTU of the pods' interfaces and the bridge (0: cni.DefaultMTU);
	// --pod-routes vxlan leaves room for the encapsulation.
	MTU    int
	Logger *slog.Logger
}

// NewCNINetwork builds the real pod network (netagent/cni) from p.
func NewCNINetwork(_ context.Context, p NetworkParams) (PodNetwork, error) {
	return cni.New(cni.Config{DataDir: p.DataDir, PodCIDR: p.PodCIDR, ServiceCIDR: p.ServiceCIDR, MTU: p.MTU, Logger: p.Logger})
}

// NetNS runs fn inside the node's network namespace (netns.Do bound to a
// path); nil runs fn where the agent is.
type NetNS func(fn func() error) error

func (n NetNS) do(fn func() error) error {
	if n == nil {
		return fn()
	}
	return n(fn)
}

// ProxyParams is what a service proxy is given.
type ProxyParams struct {
	NodeName string
	NodeIPs  []netip.Addr
	Mode     string
	// IPVSScheduler: the scheduler of mode ipvs ("" is rr).
	IPVSScheduler string
	PodCIDR       netip.Prefix
	ClusterCIDR   netip.Prefix // zero: PodCIDR
	ServiceCIDR   netip.Prefix
	// EgressMasquerade: program package egress's rules in the proxy's
	// packet filter (removed when false).
	EgressMasquerade bool
	// Client is the node's API client; Informers are the agent's shared
	// informers, already started: an informer taken from it with For runs
	// only if it was registered before that start.
	Client    *client.Client
	Informers *client.SharedInformers
	// Services and EndpointSlices are the informers the proxy follows,
	// registered on Informers before its start. Nil (a caller that only
	// gives Informers): RunProxy takes them from Informers, and the caller
	// must have registered them before starting it.
	Services, EndpointSlices *client.Informer
	NetNS                    NetNS
	Logger                   *slog.Logger
	// OnBackend, when set, is given the backend the proxy built (the agent
	// reads its rules back for `skiff trace` through proxy.RuleTracer).
	OnBackend func(mode string, backend any)
	// Registerer receives the proxy's kube-proxy metrics
	// (sync_proxy_rules_duration_seconds,
	// network_programming_duration_seconds, ...); nil registers none.
	Registerer prometheus.Registerer
	// OnEgress, when set, is given a reader of the egress rules the proxy
	// keeps (package egress; `skiff trace` shows them), and nil once the
	// proxy stopped.
	OnEgress func(rules func(ctx context.Context) ([]string, error))
	// OnHealthz, when set, is given the running proxy's /healthz handler,
	// and nil once it stopped (the agent serves it on HealthzListen).
	OnHealthz func(http.Handler)
}

// ProxyFunc runs a service proxy until ctx ends.
type ProxyFunc func(ctx context.Context, p ProxyParams) error

// EventRecorder records Events (client/record satisfies it).
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Deps are the agent's parts.
type Deps struct {
	// Runtime runs the containers. Required.
	Runtime runtime.Runtime
	// NewPodNetwork builds the pod network once the podCIDR is known;
	// nil means NewCNINetwork.
	NewPodNetwork func(ctx context.Context, p NetworkParams) (PodNetwork, error)
	// NodeNetNS is where the pod network, the node DNS and the probes'
	// connections live; nil is the agent's own namespace.
	NodeNetNS NetNS
	// Proxy, when set, runs the service proxy (with the agent's informers).
	Proxy ProxyFunc
	// Recorder, when set, receives pod and node events; nil builds one on
	// the node's client.
	Recorder EventRecorder
	// Cgroups, when set, gives every pod a cgroup as the kubelet lays
	// them out (cgroups.go; NodeCgroups builds it), under
	// Config.CgroupRoot; the runtime must have been given the same
	// (RuntimeOptions.Cgroups) to put containers under it. Nil: no
	// cgroups, limits not enforced.
	Cgroups PodCgroups
}
