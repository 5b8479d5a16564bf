package ipvs

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	mobyipvs "github.com/moby/ipvs"
	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ProcFile exists when the kernel has IPVS (the ip_vs module is loaded).
const ProcFile = "/proc/net/ip_vs"

// DeviceName is the interface that holds the virtual IPs.
const DeviceName = "skiff-ipvs0"

// Available reports whether IPVS can be used here: /proc/net/ip_vs exists
// (the ip_vs module is loaded; Available does not load it) and the kernel
// answers for the IPVS generic netlink family. github.com/moby/ipvs does
// not fail without IPVS (its calls return nil and do nothing), so this
// check is what stops the mode from running silently without effect. Its
// errors carry no component prefix: callers say which flag asked for IPVS.
func Available() error {
	if _, err := os.Stat(ProcFile); err != nil {
		return fmt.Errorf("this kernel has no IPVS (%s missing); load the ip_vs module (modprobe ip_vs)", ProcFile)
	}
	if _, err := netlink.GenlFamilyGet("IPVS"); err != nil {
		return fmt.Errorf("the ip_vs module cannot be used: the kernel has no IPVS generic netlink family: %w", err)
	}
	return nil
}

// KernelOptions place the kernel handles.
type KernelOptions struct {
	// NetNS is the node's network namespace, as a path (/run/netns/X or
	// /proc/self/fd/N); "" is the caller's own.
	NetNS string
	// Device holds the virtual IPs; "" is DeviceName.
	Device string
}

// Kernel is the real IPVS handle and address binder of one network
// namespace.
type Kernel struct {
	IPVS  *mobyipvs.Handle
	Addrs *DeviceAddrs
}

// OpenKernel checks Available and opens the handles in opts.NetNS.
func OpenKernel(opts KernelOptions) (*Kernel, error) {
	if err := Available(); err != nil {
		return nil, fmt.Errorf("ipvs: %w", err)
	}
	h, err := mobyipvs.New(opts.NetNS)
	if err != nil {
		return nil, fmt.Errorf("ipvs: open an IPVS handle: %w", err)
	}
	// A first read proves the handle works.
	if _, err := h.GetServices(); err != nil {
		h.Close()
		return nil, fmt.Errorf("ipvs: list virtual servers: %w", err)
	}
	a, err := NewDeviceAddrs(opts.NetNS, opts.Device)
	if err != nil {
		h.Close()
		return nil, err
	}
	return &Kernel{IPVS: h, Addrs: a}, nil
}

// Close closes the handles.
func (k *Kernel) Close() {
	k.IPVS.Close()
	k.Addrs.Close()
}

// DeviceAddrs is the AddrBinder of a real interface: a bridge with no
// ports, kept down (see doc.go, "The address device"). The kernel puts a
// local route for each address in the local table whatever the link state,
// so the addresses are delivered locally, while a down link has no
// neighbours, answers no ARP of its own and adds no other route.
type DeviceAddrs struct {
	name string
	h    *netlink.Handle
}

var _ AddrBinder = (*DeviceAddrs)(nil)

// NewDeviceAddrs opens a route netlink handle in nsPath ("" is the
// caller's namespace) for the device name ("" is DeviceName).
func NewDeviceAddrs(nsPath, name string) (*DeviceAddrs, error) {
	if name == "" {
		name = DeviceName
	}
	ns := vnetns.None()
	if nsPath != "" {
		var err error
		if ns, err = vnetns.GetFromPath(nsPath); err != nil {
			return nil, fmt.Errorf("ipvs: open netns %s: %w", nsPath, err)
		}
		defer ns.Close()
	}
	// NETLINK_ROUTE only: some kernels lack xfrm_user (docs/platform.md, "A real kernel with ip_vs, under qemu").
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("ipvs: netlink handle: %w", err)
	}
	return &DeviceAddrs{name: name, h: h}, nil
}

// Close closes the netlink handle.
func (d *DeviceAddrs) Close() { d.h.Close() }

func (d *DeviceAddrs) link() (netlink.Link, error) {
	l, err := d.h.LinkByName(d.name)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", d.name, err)
	}
	return l, nil
}

// Ensure creates the bridge when missing.
func (d *DeviceAddrs) Ensure() error {
	if _, err := d.h.LinkByName(d.name); err == nil {
		return nil
	} else if !errors.As(err, new(netlink.LinkNotFoundError)) {
		return fmt.Errorf("device %s: %w", d.name, err)
	}
	if err := d.h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: d.name}}); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create bridge %s: %w", d.name, err)
	}
	return nil
}

// List returns the IPv4 addresses on the device.
func (d *DeviceAddrs) List() ([]netip.Addr, error) {
	l, err := d.h.LinkByName(d.name)
	if err != nil {
		if errors.As(err, new(netlink.LinkNotFoundError)) {
			return nil, nil
		}
		return nil, fmt.Errorf("device %s: %w", d.name, err)
	}
	as, err := d.h.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("device %s: list addresses: %w", d.name, err)
	}
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip.Unmap())
		}
	}
	return out, nil
}

func addr32(a netip.Addr) *netlink.Addr {
	return &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(32, 32)}}
}

// Add binds a/32.
func (d *DeviceAddrs) Add(a netip.Addr) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	if err := d.h.AddrAdd(l, addr32(a)); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("device %s: bind %s: %w", d.name, a, err)
	}
	return nil
}

// Del unbinds a.
func (d *DeviceAddrs) Del(a netip.Addr) error {
	l, err := d.link()
	if err != nil {
		return err
	}
	if err := d.h.AddrDel(l, addr32(a)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("device %s: unbind %s: %w", d.name, a, err)
	}
	return nil
}

// Remove deletes the device (and its addresses).
func (d *DeviceAddrs) Remove() error {
	l, err := d.h.LinkByName(d.name)
	if err != nil {
		if errors.As(err, new(netlink.LinkNotFoundError)) {
			return nil
		}
		return fmt.Errorf("device %s: %w", d.name, err)
	}
	if err := d.h.LinkDel(l); err != nil {
		return fmt.Errorf("delete device %s: %w", d.name, err)
	}
	return nil
}
