package cni

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/skiff-dev/skiff/netagent/netns"
)

// cleanupTimeout bounds the CNI DEL that undoes a failed ADD, which runs
// even when the ADD's context was cancelled.
const cleanupTimeout = 30 * time.Second

// The sysctls Setup sets in the node's namespace, in order.
var setupSysctls = []struct{ name, value string }{
	{"net/ipv4/ip_forward", "1"},
	// 1 is the default in every namespace, but pod -> VIP -> pod on one
	// bridge fails with 0, so the agent asserts it.
	{"net/bridge/bridge-nf-call-iptables", "1"},
	// A pod's packet to a ClusterIP leaves by the bridge it came in on, so
	// the node would first send the pod an ICMP redirect; that spends the
	// per-host ICMP rate limit and the proxy's REJECT (port unreachable)
	// for a Service without endpoints is then never sent. The effective
	// value is all OR the interface's: both are cleared (the bridge's in
	// Setup, once it exists).
	{"net/ipv4/conf/all/send_redirects", "0"},
	{"net/ipv4/conf/default/send_redirects", "0"},
}

// Network wires pods onto the node's bridge with the CNI plugins. All of
// its kernel work happens in the network namespace of the calling
// goroutine's thread (the agent's: the node's); each method locks its OS
// thread for its whole run, so a caller that has entered another
// namespace on a locked thread (netns.Do) keeps the work there.
//
// AddPod and DelPod may run concurrently for different pods; calls for
// one pod are serialized.
type Network struct {
	cfg     Config // defaults applied; effectively const
	gateway netip.Addr
	list    *libcni.NetworkConfigList
	// noPorts is list without portmap, for the ADD of a pod without
	// port mappings: portmap's ADD then only hands its previous result
	// on, so running it would cost a process start and change nothing.
	noPorts  *libcni.NetworkConfigList
	listJSON []byte
	sysctl   Sysctl
	links    Links
	nss      Namespaces
	plugins  Plugins
	log      *slog.Logger

	ready atomic.Bool // Setup succeeded once
	locks keyedMutex  // per pod UID
}

// New validates cfg and builds a Network. It touches neither the disk
// nor the kernel: Setup does.
func New(cfg Config) (*Network, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b, err := confListBytes(cfg)
	if err != nil {
		return nil, fmt.Errorf("cni: render conflist: %w", err)
	}
	list, err := libcni.NetworkConfFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("cni: parse own conflist: %w", err)
	}
	noPorts := *list
	noPorts.Plugins = slices.DeleteFunc(slices.Clone(list.Plugins), func(p *libcni.NetworkConfig) bool { return p.Network.Type == "portmap" })
	n := &Network{
		cfg:      cfg,
		gateway:  gatewayOf(cfg.PodCIDR),
		list:     list,
		noPorts:  &noPorts,
		listJSON: b,
		sysctl:   cfg.Sysctl,
		links:    cfg.Links,
		nss:      cfg.Namespaces,
		plugins:  cfg.Plugins,
		log:      cfg.Logger,
	}
	if n.sysctl == nil {
		n.sysctl = ProcSysctl{}
	}
	if n.links == nil {
		n.links = NetlinkLinks{}
	}
	if n.nss == nil {
		n.nss = netns.NewManager(cfg.NetNSDir)
	}
	if n.plugins == nil {
		// An explicit executor: libcni creates its default one lazily on
		// first use without a lock, so concurrent first AddPods would race.
		n.plugins = libcni.NewCNIConfigWithCacheDir(cfg.PluginDirs, cacheDir(cfg.DataDir), &invoke.DefaultExec{
			RawExec:       &invoke.RawExec{Stderr: os.Stderr},
			PluginDecoder: version.PluginDecoder{},
		})
	}
	if n.log == nil {
		n.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	n.log = n.log.With("component", "cni")
	return n, nil
}

// Gateway is the bridge's address: the first IP of the pod CIDR.
func (n *Network) Gateway() netip.Addr { return n.gateway }

// ConfList is the conflist the Network runs (what Setup writes).
func (n *Network) ConfList() []byte { return slices.Clone(n.listJSON) }

// Setup prepares the node: the sysctls (ip_forward=1,
// bridge-nf-call-iptables=1, read back), the conflist file, the bridge
// (created with a fixed MAC if missing, the gateway address as its only
// IPv4 address, up) and the service route onto it. It is idempotent and
// must succeed before AddPod.
func (n *Network) Setup(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cni: setup: %w", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	for _, s := range setupSysctls {
		if err := n.sysctl.Set(s.name, s.value); err != nil {
			return fmt.Errorf("cni: setup: %w", err)
		}
		got, err := n.sysctl.Get(s.name)
		if err != nil {
			return fmt.Errorf("cni: setup: %w", err)
		}
		if got != s.value {
			return fmt.Errorf("cni: setup: sysctl %s is %q after setting %q", s.name, got, s.value)
		}
	}
	if err := writeFileAtomic(ConfListPath(n.cfg.DataDir), n.listJSON); err != nil {
		return fmt.Errorf("cni: setup: %w", err)
	}
	if err := n.ensureBridge(); err != nil {
		return fmt.Errorf("cni: setup: %w", err)
	}
	if err := n.sysctl.Set("net/ipv4/conf/"+n.cfg.Bridge+"/send_redirects", "0"); err != nil {
		return fmt.Errorf("cni: setup: %w", err)
	}
	if err := n.links.RouteReplace(n.cfg.ServiceCIDR, n.cfg.Bridge, n.gateway); err != nil {
		return fmt.Errorf("cni: setup: service route: %w", err)
	}
	n.ready.Store(true)
	n.log.Info("node network set up", "bridge", n.cfg.Bridge, "gateway", n.gateway,
		"podCIDR", n.cfg.PodCIDR, "serviceCIDR", n.cfg.ServiceCIDR)
	return nil
}

func (n *Network) ensureBridge() error {
	name := n.cfg.Bridge
	l, err := n.links.Link(name)
	if errors.Is(err, ErrLinkNotFound) {
		if err := n.links.AddBridge(name, n.cfg.MTU, bridgeMAC(n.gateway)); err != nil {
			return err
		}
		l, err = n.links.Link(name)
	}
	if err != nil {
		return err
	}
	if l.Kind != "bridge" {
		return fmt.Errorf("link %s exists and is a %q, not a bridge", name, l.Kind)
	}
	want := netip.PrefixFrom(n.gateway, n.cfg.PodCIDR.Bits())
	has := false
	for _, a := range l.Addrs {
		if a == want {
			has = true
			continue
		}
		// The bridge plugin refuses a bridge with another IPv4 address;
		// one from an old pod CIDR goes (those pods are invalid anyway).
		n.log.Warn("removing a stale address from the bridge", "bridge", name, "addr", a, "want", want)
		if err := n.links.AddrDel(name, a); err != nil {
			return err
		}
	}
	if !has {
		if err := n.links.AddrAdd(name, want); err != nil {
			return err
		}
	}
	if !l.Up {
		if err := n.links.SetUp(name); err != nil {
			return err
		}
	}
	return nil
}

// validPodUID accepts what can be both a file name and a CNI container
// ID (letters, digits, '-', '_', '.'; not starting with '.').
func validPodUID(uid string) bool {
	if uid == "" || len(uid) > 200 || uid[0] == '.' {
		return false
	}
	for _, c := range uid {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

func nsName(uid string) string { return nsPrefix + uid }

// portMapEntry is one element of the portMappings capability argument,
// as the portmap plugin reads it.
type portMapEntry struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

func portMapEntries(ports []PortMapping) ([]portMapEntry, error) {
	out := make([]portMapEntry, 0, len(ports))
	for i, p := range ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" && proto != "sctp" {
			return nil, fmt.Errorf("%w: [%d]: protocol %q", ErrInvalidPortMapping, i, p.Protocol)
		}
		if p.HostPort < 1 || p.HostPort > 65535 || p.ContainerPort < 1 || p.ContainerPort > 65535 {
			return nil, fmt.Errorf("%w: [%d]: ports %d->%d out of range", ErrInvalidPortMapping, i, p.HostPort, p.ContainerPort)
		}
		if p.HostIP != "" {
			if _, err := netip.ParseAddr(p.HostIP); err != nil {
				return nil, fmt.Errorf("%w: [%d]: hostIP %q", ErrInvalidPortMapping, i, p.HostIP)
			}
		}
		out = append(out, portMapEntry{HostPort: int(p.HostPort), ContainerPort: int(p.ContainerPort), Protocol: proto, HostIP: p.HostIP})
	}
	return out, nil
}

func (n *Network) runtimeConf(uid, namespace, name, netnsPath string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{
		ContainerID: uid,
		NetNS:       netnsPath,
		IfName:      IfName,
		Args: [][2]string{
			// host-local refuses CNI_ARGS it does not know without this.
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", namespace},
			{"K8S_POD_NAME", name},
			{"K8S_POD_INFRA_CONTAINER_ID", uid},
			{"K8S_POD_UID", uid},
		},
	}
}

// AddPod gives the pod a network namespace and runs CNI ADD in it
// (bridge + host-local, portmap for ports, loopback). For a pod that
// already has a live namespace and a cached CNI result (an agent
// restart), it returns that result without running the plugins again,
// so the pod keeps its IP; its ports are then the ones it was added
// with. A partial leftover (stale namespace file, no result) is torn
// down first. On failure nothing is left behind.
func (n *Network) AddPod(ctx context.Context, podUID, namespace, name string, ports []PortMapping) (PodNetwork, error) {
	if !validPodUID(podUID) {
		return PodNetwork{}, fmt.Errorf("%w: %q", ErrInvalidPodUID, podUID)
	}
	if !n.ready.Load() {
		return PodNetwork{}, ErrNotSetUp
	}
	entries, err := portMapEntries(ports)
	if err != nil {
		return PodNetwork{}, err
	}
	unlock := n.locks.lock(podUID)
	defer unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	nsn := nsName(podUID)
	path := n.nss.Path(nsn)
	rt := n.runtimeConf(podUID, namespace, name, path)
	list := n.noPorts
	if len(entries) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": entries}
		list = n.list
	}

	if pn, ok := n.adopt(podUID, rt); ok {
		return pn, nil
	}
	if left, err := n.leftovers(podUID, rt); err != nil {
		return PodNetwork{}, fmt.Errorf("cni: add pod %s: %w", podUID, err)
	} else if left {
		n.log.Info("clearing a pod's leftover network state", "pod", podUID)
		if err := n.delPod(ctx, podUID); err != nil {
			return PodNetwork{}, fmt.Errorf("cni: add pod %s: clear leftovers: %w", podUID, err)
		}
	}

	if _, err := n.nss.Create(nsn); err != nil {
		return PodNetwork{}, fmt.Errorf("cni: add pod %s: %w", podUID, err)
	}
	res, err := n.plugins.AddNetworkList(ctx, list, rt)
	var pn PodNetwork
	if err == nil {
		pn, err = n.podNetwork(res, path)
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if cerr := n.delPod(cctx, podUID); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
		}
		return PodNetwork{}, fmt.Errorf("cni: add pod %s: %w", podUID, err)
	}
	n.log.Debug("pod added", "pod", podUID, "ns", namespace, "name", name, "ip", pn.IP)
	return pn, nil
}

// adopt returns the pod's network from the CNI cache when its namespace
// is live.
func (n *Network) adopt(uid string, rt *libcni.RuntimeConf) (PodNetwork, bool) {
	live, err := n.nss.Live(nsName(uid))
	if err != nil || !live {
		return PodNetwork{}, false
	}
	res, err := n.plugins.GetNetworkListCachedResult(n.list, rt)
	if err != nil || res == nil {
		return PodNetwork{}, false
	}
	pn, err := n.podNetwork(res, rt.NetNS)
	if err != nil {
		n.log.Warn("cached CNI result unusable; re-adding the pod", "pod", uid, "err", err)
		return PodNetwork{}, false
	}
	n.log.Debug("pod adopted", "pod", uid, "ip", pn.IP)
	return pn, true
}

// leftovers reports whether the pod has a namespace file or a CNI cache
// entry that adopt did not take (a half-done ADD, a reboot).
func (n *Network) leftovers(uid string, rt *libcni.RuntimeConf) (bool, error) {
	exists, err := n.nss.Exists(nsName(uid))
	if err != nil || exists {
		return exists, err
	}
	conf, _, err := n.plugins.GetNetworkListCachedConfig(n.list, rt)
	return err != nil || conf != nil, nil
}

// podNetwork picks the pod's IPv4 address (on the interface inside the
// pod's namespace, when the result says which) out of a CNI result.
func (n *Network) podNetwork(res types.Result, nsPath string) (PodNetwork, error) {
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return PodNetwork{}, fmt.Errorf("convert CNI result: %w", err)
	}
	for _, ipc := range r.IPs {
		if ipc == nil {
			continue
		}
		if ipc.Interface != nil {
			i := *ipc.Interface
			if i < 0 || i >= len(r.Interfaces) || r.Interfaces[i] == nil || r.Interfaces[i].Sandbox == "" {
				continue
			}
		}
		ip, ok := netip.AddrFromSlice(ipc.Address.IP.To4())
		if !ok || !n.cfg.PodCIDR.Contains(ip) || ip == n.gateway {
			continue
		}
		gw := n.gateway
		if g, ok := netip.AddrFromSlice(ipc.Gateway.To4()); ok {
			gw = g
		}
		return PodNetwork{NetNSPath: nsPath, IP: ip, Gateway: gw, IfName: IfName}, nil
	}
	return PodNetwork{}, fmt.Errorf("%w %v (%s)", ErrNoPodIP, n.cfg.PodCIDR, describeIPs(r.IPs))
}

func describeIPs(ips []*types100.IPConfig) string {
	var s []string
	for _, ipc := range ips {
		if ipc != nil {
			s = append(s, ipc.Address.String())
		}
	}
	return "ips: [" + strings.Join(s, " ") + "]"
}

// DelPod runs CNI DEL for the pod (releasing its IP and its port
// mappings) and removes its namespace. It is idempotent: a pod that is
// gone, a missing or stale namespace file, or a missing CNI cache are
// fine. On error the namespace is kept, so a retry can finish the job.
func (n *Network) DelPod(ctx context.Context, podUID string) error {
	if !validPodUID(podUID) {
		return fmt.Errorf("%w: %q", ErrInvalidPodUID, podUID)
	}
	unlock := n.locks.lock(podUID)
	defer unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := n.delPod(ctx, podUID); err != nil {
		return fmt.Errorf("cni: del pod %s: %w", podUID, err)
	}
	n.log.Debug("pod deleted", "pod", podUID)
	return nil
}

func (n *Network) delPod(ctx context.Context, uid string) error {
	nsn := nsName(uid)
	live, err := n.nss.Live(nsn)
	if err != nil {
		return err
	}
	rt := n.runtimeConf(uid, "", "", "")
	if live {
		// A missing or stale namespace is passed as none: the plugins
		// then only release what lives outside it (the IP, the port
		// mappings); the pod's veth died with its namespace.
		rt.NetNS = n.nss.Path(nsn)
	}
	// The port mappings (and pod args) the pod was added with: portmap's
	// DEL removes nothing without them.
	if _, cached, err := n.plugins.GetNetworkListCachedConfig(n.list, rt); err != nil {
		n.log.Warn("CNI cache unreadable; deleting without cached port mappings", "pod", uid, "err", err)
	} else if cached != nil {
		rt.Args, rt.CapabilityArgs = cached.Args, cached.CapabilityArgs
	}
	if err := n.plugins.DelNetworkList(ctx, n.list, rt); err != nil {
		return err
	}
	return n.nss.Delete(nsn)
}

// Pods lists the UIDs of the pods that have a namespace file (live or
// stale) or a cached CNI result, sorted: every pod that may hold an IP.
// A restarted agent adopts the ones it still wants (AddPod returns their
// network) and DelPods the rest.
func (n *Network) Pods(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cni: pods: %w", err)
	}
	set := map[string]struct{}{}
	names, err := n.nss.List()
	if err != nil {
		return nil, fmt.Errorf("cni: pods: %w", err)
	}
	for _, name := range names {
		if uid, ok := strings.CutPrefix(name, nsPrefix); ok && validPodUID(uid) {
			set[uid] = struct{}{}
		}
	}
	atts, err := n.plugins.GetCachedAttachments("")
	if err != nil {
		return nil, fmt.Errorf("cni: pods: CNI cache: %w", err)
	}
	for _, a := range atts {
		if a.Network == NetworkName && validPodUID(a.ContainerID) {
			set[a.ContainerID] = struct{}{}
		}
	}
	uids := make([]string, 0, len(set))
	for uid := range set {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	return uids, nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, creating the directory.
func writeFileAtomic(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
