package cnitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/skiff-dev/skiff/netagent/cni"
)

// PortMapping is an active port mapping the fake portmap holds.
type PortMapping struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// DelCall records one DelNetworkList.
type DelCall struct {
	ContainerID  string
	NetNS        string
	PortMappings []PortMapping
}

type cached struct {
	config  []byte
	rt      libcni.RuntimeConf
	result  *types100.Result
	corrupt bool
}

// Plugins is a fake cni.Plugins: bridge + host-local + portmap +
// loopback, in memory.
type Plugins struct {
	mu       sync.Mutex
	nss      *Namespaces
	links    *Links
	reserved map[netip.Addr]string // IP -> container ID
	last     netip.Addr
	cache    map[string]*cached
	mappings map[string][]PortMapping // container ID -> port mappings
	failAdd  error
	adds     int
	dels     []DelCall
}

var _ cni.Plugins = (*Plugins)(nil)

// NewPlugins returns fake plugins that check namespaces against nss and
// the bridge against links.
func NewPlugins(nss *Namespaces, links *Links) *Plugins {
	return &Plugins{
		nss:      nss,
		links:    links,
		reserved: map[netip.Addr]string{},
		cache:    map[string]*cached{},
		mappings: map[string][]PortMapping{},
	}
}

// FailNextAdd makes the next ADD fail with err after host-local has
// reserved the IP (as when portmap fails), leaving the reservation for
// a DEL to release.
func (p *Plugins) FailNextAdd(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failAdd = err
}

// bridge plugin configuration, parsed independently of the renderer.
type bridgeConf struct {
	Type        string `json:"type"`
	Bridge      string `json:"bridge"`
	IsGateway   bool   `json:"isGateway"`
	IPMasq      bool   `json:"ipMasq"`
	HairpinMode bool   `json:"hairpinMode"`
	MTU         int    `json:"mtu"`
	IPAM        struct {
		Type    string `json:"type"`
		DataDir string `json:"dataDir"`
		Ranges  [][]struct {
			Subnet     string `json:"subnet"`
			RangeStart string `json:"rangeStart"`
			RangeEnd   string `json:"rangeEnd"`
			Gateway    string `json:"gateway"`
		} `json:"ranges"`
		Routes []struct {
			Dst string `json:"dst"`
		} `json:"routes"`
	} `json:"ipam"`
}

type netConf struct {
	portmap    bool // the list has portmap
	bridge     string
	mtu        int
	subnet     netip.Prefix
	start, end netip.Addr
	gateway    netip.Addr
}

// parse validates the list as the plugins would, and returns what the
// fake needs of it.
func parse(list *libcni.NetworkConfigList) (netConf, error) {
	var nc netConf
	if list == nil || list.Name == "" {
		return nc, errors.New("conflist without a name")
	}
	if list.CNIVersion != "1.0.0" {
		return nc, fmt.Errorf("cniVersion %q: Debian's plugins speak up to 1.0.0", list.CNIVersion)
	}
	var typesSeen []string
	for _, pl := range list.Plugins {
		typesSeen = append(typesSeen, pl.Network.Type)
	}
	// Without portmap only for a pod without port mappings: AddNetworkList
	// checks that.
	nc.portmap = slices.Equal(typesSeen, []string{"bridge", "portmap", "loopback"})
	if !nc.portmap && !slices.Equal(typesSeen, []string{"bridge", "loopback"}) {
		return nc, fmt.Errorf("plugins %v, want [bridge portmap loopback] (or [bridge loopback] for a pod without ports)", typesSeen)
	}
	if caps := list.Plugins[1].Network.Capabilities; nc.portmap && !caps["portMappings"] {
		return nc, errors.New("portmap without the portMappings capability")
	}
	var bc bridgeConf
	if err := json.Unmarshal(list.Plugins[0].Bytes, &bc); err != nil {
		return nc, fmt.Errorf("bridge config: %w", err)
	}
	switch {
	case bc.Bridge == "":
		return nc, errors.New("bridge: no bridge name")
	case !bc.IsGateway:
		return nc, errors.New("bridge: isGateway must be true")
	case bc.IPMasq:
		return nc, errors.New("bridge: ipMasq must be false (masquerade is the proxy's job)")
	case !bc.HairpinMode:
		return nc, errors.New("bridge: hairpinMode must be true")
	case bc.IPAM.Type != "host-local":
		return nc, fmt.Errorf("ipam type %q, want host-local", bc.IPAM.Type)
	case !filepath.IsAbs(bc.IPAM.DataDir):
		return nc, fmt.Errorf("host-local dataDir %q is not absolute", bc.IPAM.DataDir)
	case len(bc.IPAM.Ranges) != 1 || len(bc.IPAM.Ranges[0]) != 1:
		return nc, errors.New("host-local: want exactly one range")
	}
	r := bc.IPAM.Ranges[0][0]
	var err error
	if nc.subnet, err = netip.ParsePrefix(r.Subnet); err != nil || nc.subnet != nc.subnet.Masked() {
		return nc, fmt.Errorf("host-local subnet %q: %v", r.Subnet, err)
	}
	if nc.gateway, err = netip.ParseAddr(r.Gateway); err != nil || !nc.subnet.Contains(nc.gateway) {
		return nc, fmt.Errorf("host-local gateway %q not in %v", r.Gateway, nc.subnet)
	}
	nc.start = nc.subnet.Addr().Next()
	if r.RangeStart != "" {
		if nc.start, err = netip.ParseAddr(r.RangeStart); err != nil || !nc.subnet.Contains(nc.start) {
			return nc, fmt.Errorf("host-local rangeStart %q not in %v", r.RangeStart, nc.subnet)
		}
	}
	nc.end = lastUsable(nc.subnet)
	if r.RangeEnd != "" {
		if nc.end, err = netip.ParseAddr(r.RangeEnd); err != nil || !nc.subnet.Contains(nc.end) {
			return nc, fmt.Errorf("host-local rangeEnd %q not in %v", r.RangeEnd, nc.subnet)
		}
	}
	if nc.end.Less(nc.start) {
		return nc, fmt.Errorf("host-local range %v-%v is empty", nc.start, nc.end)
	}
	nc.bridge, nc.mtu = bc.Bridge, bc.MTU
	return nc, nil
}

// lastUsable is the broadcast address minus one, as host-local computes
// a range's default end.
func lastUsable(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := (uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])) | host
	v--
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func portMappingsOf(rt *libcni.RuntimeConf) ([]PortMapping, error) {
	raw, ok := rt.CapabilityArgs["portMappings"]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var pms []PortMapping
	if err := json.Unmarshal(b, &pms); err != nil {
		return nil, fmt.Errorf("portMappings: %w", err)
	}
	for _, pm := range pms {
		if pm.HostPort <= 0 || pm.ContainerPort <= 0 || (pm.Protocol != "tcp" && pm.Protocol != "udp" && pm.Protocol != "sctp") {
			return nil, fmt.Errorf("portMappings: invalid %+v", pm)
		}
	}
	return pms, nil
}

func argsOK(args [][2]string) error {
	if len(args) == 0 {
		return nil
	}
	for _, a := range args {
		if a[0] == "IgnoreUnknown" && (a[1] == "1" || a[1] == "true") {
			return nil
		}
	}
	return fmt.Errorf("CNI_ARGS %v without IgnoreUnknown=1: host-local refuses unknown args", args)
}

// AddNetworkList implements cni.Plugins.
func (p *Plugins) AddNetworkList(ctx context.Context, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) (types.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	nc, err := parse(list)
	if err != nil {
		return nil, fmt.Errorf("fake plugins: %w", err)
	}
	if rt.ContainerID == "" || rt.IfName == "" {
		return nil, errors.New("fake plugins: ADD needs a container ID and an interface name")
	}
	if err := argsOK(rt.Args); err != nil {
		return nil, fmt.Errorf("fake plugins: %w", err)
	}
	if !p.nss.LiveAt(rt.NetNS) {
		return nil, fmt.Errorf("fake plugins: ADD: %q is not a network namespace", rt.NetNS)
	}
	br, err := p.links.Link(nc.bridge)
	if err != nil {
		return nil, fmt.Errorf("fake plugins: bridge: %w (Setup first)", err)
	}
	gwPrefix := netip.PrefixFrom(nc.gateway, nc.subnet.Bits())
	for _, a := range br.Addrs {
		if a != gwPrefix {
			return nil, fmt.Errorf("fake plugins: %q already has an IP address different from %v", nc.bridge, gwPrefix)
		}
	}
	if !slices.Contains(br.Addrs, gwPrefix) || !br.Up {
		return nil, fmt.Errorf("fake plugins: bridge %s not set up with %v", nc.bridge, gwPrefix)
	}
	pms, err := portMappingsOf(rt)
	if err != nil {
		return nil, fmt.Errorf("fake plugins: %w", err)
	}
	if len(pms) > 0 && !nc.portmap {
		return nil, fmt.Errorf("fake plugins: ADD with %d port mappings and no portmap plugin in the list", len(pms))
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	for ip, id := range p.reserved {
		if id == rt.ContainerID {
			return nil, fmt.Errorf("fake plugins: %v has been allocated to %s, duplicate allocation is not allowed", ip, id)
		}
	}
	ip, err := p.allocate(nc, rt.ContainerID)
	if err != nil {
		return nil, fmt.Errorf("fake plugins: host-local: %w", err)
	}
	p.adds++
	if p.failAdd != nil {
		err := p.failAdd
		p.failAdd = nil
		return nil, fmt.Errorf("fake plugins: portmap: %w", err)
	}
	if len(pms) > 0 {
		p.mappings[rt.ContainerID] = pms
	}
	res := &types100.Result{
		CNIVersion: list.CNIVersion,
		Interfaces: []*types100.Interface{
			{Name: nc.bridge, Mac: br.MAC.String()},
			{Name: "veth" + rt.ContainerID[:min(8, len(rt.ContainerID))], Mac: "02:00:00:00:00:01"},
			{Name: rt.IfName, Mac: "02:00:00:00:00:02", Sandbox: rt.NetNS},
		},
		IPs: []*types100.IPConfig{{
			Interface: types100.Int(2),
			Address:   net.IPNet{IP: net.IP(ip.AsSlice()), Mask: net.CIDRMask(nc.subnet.Bits(), 32)},
			Gateway:   net.IP(nc.gateway.AsSlice()),
		}},
	}
	c := &cached{config: slices.Clone(list.Bytes), rt: *rt, result: res}
	c.rt.Args = slices.Clone(rt.Args)
	c.rt.CapabilityArgs = maps.Clone(rt.CapabilityArgs)
	p.cache[rt.ContainerID] = c
	return res, nil
}

// allocate reserves the next free IP after the last one reserved, like
// host-local's round robin.
func (p *Plugins) allocate(nc netConf, id string) (netip.Addr, error) {
	next := func(a netip.Addr) netip.Addr {
		a = a.Next()
		if a.Less(nc.start) || nc.end.Less(a) {
			return nc.start
		}
		return a
	}
	cur := nc.end // the first candidate is then start
	if p.last.IsValid() && !p.last.Less(nc.start) && !nc.end.Less(p.last) {
		cur = p.last
	}
	first := next(cur)
	for a := first; ; {
		if _, taken := p.reserved[a]; !taken && a != nc.gateway {
			p.reserved[a] = id
			p.last = a
			return a, nil
		}
		if a = next(a); a == first {
			return netip.Addr{}, fmt.Errorf("no IP addresses available in range %v-%v", nc.start, nc.end)
		}
	}
}

// DelNetworkList implements cni.Plugins.
func (p *Plugins) DelNetworkList(ctx context.Context, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := parse(list); err != nil {
		return fmt.Errorf("fake plugins: %w", err)
	}
	if rt.ContainerID == "" {
		return errors.New("fake plugins: DEL needs a container ID")
	}
	if err := argsOK(rt.Args); err != nil {
		return fmt.Errorf("fake plugins: %w", err)
	}
	if rt.NetNS != "" && p.nss.ExistsAt(rt.NetNS) && !p.nss.LiveAt(rt.NetNS) {
		return fmt.Errorf("fake plugins: bridge: %q is not a network namespace", rt.NetNS)
	}
	pms, err := portMappingsOf(rt)
	if err != nil {
		return fmt.Errorf("fake plugins: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(pms) > 0 {
		// portmap removes the container's chains only when told its
		// mappings; without them, they stay (as with the real plugin).
		delete(p.mappings, rt.ContainerID)
	}
	for ip, id := range p.reserved {
		if id == rt.ContainerID {
			delete(p.reserved, ip)
		}
	}
	delete(p.cache, rt.ContainerID)
	p.dels = append(p.dels, DelCall{ContainerID: rt.ContainerID, NetNS: rt.NetNS, PortMappings: pms})
	return nil
}

// GetNetworkListCachedResult implements cni.Plugins.
func (p *Plugins) GetNetworkListCachedResult(list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) (types.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.cache[rt.ContainerID]
	if !ok {
		return nil, nil
	}
	if c.corrupt {
		return nil, errors.New("fake plugins: corrupt cache entry")
	}
	return c.result, nil
}

// GetNetworkListCachedConfig implements cni.Plugins.
func (p *Plugins) GetNetworkListCachedConfig(list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) ([]byte, *libcni.RuntimeConf, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.cache[rt.ContainerID]
	if !ok {
		return nil, nil, nil
	}
	if c.corrupt {
		return nil, nil, errors.New("fake plugins: corrupt cache entry")
	}
	out := *rt
	out.Args = slices.Clone(c.rt.Args)
	out.CapabilityArgs = maps.Clone(c.rt.CapabilityArgs)
	return slices.Clone(c.config), &out, nil
}

// GetCachedAttachments implements cni.Plugins.
func (p *Plugins) GetCachedAttachments(containerID string) ([]*libcni.NetworkAttachment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*libcni.NetworkAttachment
	for id, c := range p.cache {
		if c.corrupt || (containerID != "" && id != containerID) {
			continue
		}
		out = append(out, &libcni.NetworkAttachment{
			ContainerID: id, Network: cni.NetworkName, IfName: c.rt.IfName,
			NetNS: c.rt.NetNS, CniArgs: c.rt.Args, CapabilityArgs: c.rt.CapabilityArgs,
		})
	}
	slices.SortFunc(out, func(a, b *libcni.NetworkAttachment) int {
		if a.ContainerID < b.ContainerID {
			return -1
		}
		if a.ContainerID > b.ContainerID {
			return 1
		}
		return 0
	})
	return out, nil
}

// DropCache forgets a container's cached result (a lost cache dir).
func (p *Plugins) DropCache(containerID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.cache, containerID)
}

// CorruptCache makes a container's cache entry unreadable.
func (p *Plugins) CorruptCache(containerID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.cache[containerID]; ok {
		c.corrupt = true
	}
}

// Reserved is a copy of host-local's reservations: IP -> container ID.
func (p *Plugins) Reserved() map[netip.Addr]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.reserved)
}

// PortMappings is a copy of the active port mappings by container ID.
func (p *Plugins) PortMappings() map[string][]PortMapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.mappings)
}

// Adds counts the ADDs that ran (reserved an IP).
func (p *Plugins) Adds() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.adds
}

// Dels lists the DELs, in order.
func (p *Plugins) Dels() []DelCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.dels)
}
