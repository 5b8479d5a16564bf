package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// Defaults for the zero values of Config.
const (
	DefaultBridge = "skiff0"
	DefaultMTU    = 1500
	// NetworkName names the CNI network (conflist "name"); host-local
	// keeps its reservations in <ipam dir>/<NetworkName>.
	NetworkName = "skiff"
	// IfName is the pod's interface.
	IfName = "eth0"
	// CNIVersion is the spec version of the conflist (what Debian's
	// plugins 1.1.1 speak at most).
	CNIVersion = "1.0.0"
	// nsPrefix starts every pod namespace file name, so that a shared
	// directory (/run/netns) can hold other files.
	nsPrefix = "skiff-"
)

// DefaultPluginDirs is where the CNI plugin binaries are looked up.
func DefaultPluginDirs() []string { return []string{"/usr/lib/cni", "/opt/cni/bin"} }

// Config configures a Network. DataDir, PodCIDR and ServiceCIDR are
// required; the rest has defaults.
type Config struct {
	// DataDir holds the conflist (DataDir/cni/10-skiff.conflist),
	// host-local's reservations (DataDir/cni/ipam), libcni's result cache
	// (DataDir/cni/cache) and, by default, the pod namespaces
	// (DataDir/netns). Everything a restarted agent needs to adopt its
	// pods is here.
	DataDir    string
	PluginDirs []string // default DefaultPluginDirs()
	Bridge     string   // default "skiff0"
	// PodCIDR is the node's pod range; the gateway (the bridge's address)
	// is its first IP, pods get the IPs after it.
	PodCIDR netip.Prefix
	// ServiceCIDR is routed onto the bridge:
	// ip route replace <svc-cidr> dev <bridge> src <gateway>.
	ServiceCIDR netip.Prefix
	MTU         int    // default 1500
	Sysctl      Sysctl // default ProcSysctl{}

	// NetNSDir holds the pod namespace files (default DataDir/netns). One
	// Network owns it: Pods lists every skiff-* file in it.
	NetNSDir string
	// Links, Namespaces and Plugins replace the kernel and the plugins in
	// unit tests (see cnitest); nil means the real ones.
	Links      Links
	Namespaces Namespaces
	Plugins    Plugins
	Logger     *slog.Logger // default discards
}

// Namespaces creates and deletes the pods' named network namespaces
// (*netns.Manager).
type Namespaces interface {
	Create(name string) (path string, err error)
	Delete(name string) error // idempotent
	Path(name string) string
	List() ([]string, error)          // file names, live or stale
	Exists(name string) (bool, error) // the file exists, live or stale
	Live(name string) (bool, error)   // the file holds a namespace
}

// Plugins runs a CNI network list: the part of libcni.CNI that Network
// uses (*libcni.CNIConfig).
type Plugins interface {
	AddNetworkList(ctx context.Context, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) (types.Result, error)
	DelNetworkList(ctx context.Context, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) error
	GetNetworkListCachedResult(list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) (types.Result, error)
	GetNetworkListCachedConfig(list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) ([]byte, *libcni.RuntimeConf, error)
	GetCachedAttachments(containerID string) ([]*libcni.NetworkAttachment, error)
}

// PodNetwork is a pod's network as the agent needs it.
type PodNetwork struct {
	NetNSPath string
	IP        netip.Addr
	Gateway   netip.Addr
	IfName    string
}

// PortMapping is a container port published on the node (hostPort).
type PortMapping struct {
	HostPort, ContainerPort int32
	Protocol                string // TCP (default), UDP or SCTP
	HostIP                  string // "" = every node address
}

// ConfListPath is where Setup writes the conflist.
func ConfListPath(dataDir string) string {
	return filepath.Join(dataDir, "cni", "10-skiff.conflist")
}

func ipamDir(dataDir string) string  { return filepath.Join(dataDir, "cni", "ipam") }
func cacheDir(dataDir string) string { return filepath.Join(dataDir, "cni", "cache") }

// IPAMDir is host-local's directory for this network's reservations: one
// file per reserved IP, named by the IP.
func IPAMDir(dataDir string) string { return filepath.Join(ipamDir(dataDir), NetworkName) }

// withDefaults validates cfg and fills in its defaults.
func (cfg Config) withDefaults() (Config, error) {
	bad := func(format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	if cfg.DataDir == "" {
		return bad("DataDir is required")
	}
	if !filepath.IsAbs(cfg.DataDir) {
		abs, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return bad("DataDir %q: %v", cfg.DataDir, err)
		}
		cfg.DataDir = abs
	}
	if len(cfg.PluginDirs) == 0 {
		cfg.PluginDirs = DefaultPluginDirs()
	}
	if cfg.Bridge == "" {
		cfg.Bridge = DefaultBridge
	}
	if len(cfg.Bridge) > 15 || strings.ContainsAny(cfg.Bridge, "/ \t\n:") || cfg.Bridge == "." || cfg.Bridge == ".." {
		return bad("bridge name %q is not an interface name", cfg.Bridge)
	}
	if !cfg.PodCIDR.IsValid() || !cfg.PodCIDR.Addr().Is4() {
		return bad("PodCIDR %v: an IPv4 prefix is required", cfg.PodCIDR)
	}
	if cfg.PodCIDR.Bits() > 30 {
		return bad("PodCIDR %v: too small (a network, a gateway, a pod and a broadcast address need /30 or larger)", cfg.PodCIDR)
	}
	if cfg.PodCIDR != cfg.PodCIDR.Masked() {
		return bad("PodCIDR %v has host bits set (want %v)", cfg.PodCIDR, cfg.PodCIDR.Masked())
	}
	if !cfg.ServiceCIDR.IsValid() || !cfg.ServiceCIDR.Addr().Is4() {
		return bad("ServiceCIDR %v: an IPv4 prefix is required", cfg.ServiceCIDR)
	}
	cfg.ServiceCIDR = cfg.ServiceCIDR.Masked()
	if cfg.ServiceCIDR.Overlaps(cfg.PodCIDR) {
		return bad("ServiceCIDR %v overlaps PodCIDR %v", cfg.ServiceCIDR, cfg.PodCIDR)
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.MTU < 576 || cfg.MTU > 65535 {
		return bad("MTU %d out of range [576, 65535]", cfg.MTU)
	}
	if cfg.NetNSDir == "" {
		cfg.NetNSDir = filepath.Join(cfg.DataDir, "netns")
	}
	return cfg, nil
}

// gatewayOf is the first IP of the pod CIDR.
func gatewayOf(podCIDR netip.Prefix) netip.Addr { return podCIDR.Masked().Addr().Next() }

// bridgeMAC is a fixed, locally administered MAC derived from the
// gateway, so the bridge keeps one address however its ports churn and
// across re-creation (pods' ARP entries for the gateway stay right).
func bridgeMAC(gw netip.Addr) net.HardwareAddr {
	b := gw.As4()
	return net.HardwareAddr{0x02, 0x73, b[0], b[1], b[2], b[3]}
}

// The conflist, as typed values.
type (
	confList struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		Plugins    []any  `json:"plugins"`
	}
	bridgeConf struct {
		Type        string   `json:"type"`
		Bridge      string   `json:"bridge"`
		IsGateway   bool     `json:"isGateway"`
		IPMasq      bool     `json:"ipMasq"`
		HairpinMode bool     `json:"hairpinMode"`
		MTU         int      `json:"mtu,omitempty"`
		IPAM        ipamConf `json:"ipam"`
	}
	ipamConf struct {
		Type    string        `json:"type"`
		DataDir string        `json:"dataDir"`
		Ranges  [][]rangeConf `json:"ranges"`
		Routes  []routeConf   `json:"routes"`
	}
	rangeConf struct {
		Subnet     string `json:"subnet"`
		RangeStart string `json:"rangeStart"`
		Gateway    string `json:"gateway"`
	}
	routeConf struct {
		Dst string `json:"dst"`
	}
	portmapConf struct {
		Type         string          `json:"type"`
		Capabilities map[string]bool `json:"capabilities"`
	}
	loopbackConf struct {
		Type string `json:"type"`
	}
)

// confListBytes renders the conflist for cfg (defaults applied): bridge
// with host-local IPAM, then portmap, then loopback. Masquerade stays
// off: it is the service proxy's job.
func confListBytes(cfg Config) ([]byte, error) {
	gw := gatewayOf(cfg.PodCIDR)
	cl := confList{
		CNIVersion: CNIVersion,
		Name:       NetworkName,
		Plugins: []any{
			bridgeConf{
				Type:        "bridge",
				Bridge:      cfg.Bridge,
				IsGateway:   true,
				IPMasq:      false,
				HairpinMode: true,
				MTU:         cfg.MTU,
				IPAM: ipamConf{
					Type:    "host-local",
					DataDir: ipamDir(cfg.DataDir),
					Ranges: [][]rangeConf{{{
						Subnet:     cfg.PodCIDR.String(),
						RangeStart: gw.Next().String(),
						Gateway:    gw.String(),
					}}},
					Routes: []routeConf{{Dst: "0.0.0.0/0"}},
				},
			},
			portmapConf{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}},
			loopbackConf{Type: "loopback"},
		},
	}
	return json.MarshalIndent(cl, "", "  ")
}
