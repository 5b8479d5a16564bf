// Package ipvstest holds validating, stateful fakes of the kernel parts the
// ipvs proxy mode uses: Fake (the IPVS netlink handle) and Addrs (the
// interface holding the virtual IPs). They reject what the kernel rejects,
// with the kernel's errno, so a backend bug fails a test. Tracer follows a
// packet through the ipvs mode's iptables rules (an iptablestest.Fake),
// the Fake's virtual servers and nat POSTROUTING.
//
// # Invariants
//
//   - Fake accepts only calls the kernel would: a new virtual server that
//     exists is EEXIST; updating, deleting or adding a real server to a
//     missing one is ESRCH; a duplicate real server is EEXIST; updating or
//     deleting a missing one is ENOENT; an unknown scheduler is ENOENT (no
//     such module); a bad family, protocol, port, weight, netmask or a
//     persistent service without timeout is EINVAL.
//   - Every mutating call is counted (Ops) so tests can check that a
//     partial sync touched only what changed.
//   - Values handed in are copied; values handed out are copies.
package ipvstest

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"

	mobyipvs "github.com/moby/ipvs"

	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
)

// Key names a virtual server: "TCP 10.96.0.10:80".
type Key string

// VS is one virtual server in the fake.
type VS struct {
	Service mobyipvs.Service
	Dests   map[netip.AddrPort]mobyipvs.Destination
}

// Fake is a stateful IPVS table. The zero value is not usable; use New.
type Fake struct {
	mu  sync.Mutex
	vs  map[Key]*VS
	ops []string
	// FailOn makes the next call whose op (e.g. "NewService") matches
	// fail with the error.
	failOn  string
	failErr error
}

// New returns an empty table.
func New() *Fake { return &Fake{vs: map[Key]*VS{}} }

// FailNext makes the next call of op fail with err.
func (f *Fake) FailNext(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failOn, f.failErr = op, err
}

// Ops returns the mutating calls so far ("NewService TCP 10.96.0.10:80",
// "NewDestination TCP 10.96.0.10:80 10.244.0.2:8080 w=1", ...).
func (f *Fake) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ops)
}

// ResetOps forgets the calls so far.
func (f *Fake) ResetOps() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = nil
}

// Get returns a copy of one virtual server, or nil.
func (f *Fake) Get(k Key) *VS {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.vs[k]
	if v == nil {
		return nil
	}
	return &VS{Service: v.Service, Dests: maps.Clone(v.Dests)}
}

// Keys lists the virtual servers, sorted.
func (f *Fake) Keys() []Key {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := slices.Collect(maps.Keys(f.vs))
	slices.Sort(keys)
	return keys
}

// Dump is the table as text, one line per virtual server and real server,
// sorted, like `ipvsadm -Sn`: "TCP 10.96.0.10:80 rr" / "  -> 10.244.0.2:8080 w=1".
func (f *Fake) Dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	keys := slices.Collect(maps.Keys(f.vs))
	slices.Sort(keys)
	for _, k := range keys {
		v := f.vs[k]
		fmt.Fprintf(&b, "%s %s", k, v.Service.SchedName)
		if v.Service.Flags&0x1 != 0 {
			fmt.Fprintf(&b, " persistent %d", v.Service.Timeout)
		}
		b.WriteByte('\n')
		dks := slices.Collect(maps.Keys(v.Dests))
		slices.SortFunc(dks, netip.AddrPort.Compare)
		for _, dk := range dks {
			fmt.Fprintf(&b, "  -> %s w=%d\n", dk, v.Dests[dk].Weight)
		}
	}
	return b.String()
}

func protoName(p uint16) (string, bool) {
	switch p {
	case syscall.IPPROTO_TCP:
		return "TCP", true
	case syscall.IPPROTO_UDP:
		return "UDP", true
	case syscall.IPPROTO_SCTP:
		return "SCTP", true
	}
	return "", false
}

func addrOf(ip net.IP, family uint16) (netip.Addr, error) {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Addr{}, fmt.Errorf("bad address %v: %w", ip, syscall.EINVAL)
	}
	if a.Is4In6() || (family == syscall.AF_INET && len(ip) == 4) {
		a = a.Unmap()
	}
	switch {
	case family == syscall.AF_INET && a.Is4():
	case family == syscall.AF_INET6 && a.Is6():
	default:
		return netip.Addr{}, fmt.Errorf("address %s does not match family %d: %w", a, family, syscall.EINVAL)
	}
	return a, nil
}

// key validates the identifying fields of s.
func key(s *mobyipvs.Service) (Key, error) {
	if s == nil {
		return "", fmt.Errorf("nil service: %w", syscall.EINVAL)
	}
	if s.FWMark != 0 {
		return "", fmt.Errorf("fake: firewall-mark services are not supported: %w", syscall.EINVAL)
	}
	p, ok := protoName(s.Protocol)
	if !ok {
		return "", fmt.Errorf("protocol %d: %w", s.Protocol, syscall.EINVAL)
	}
	a, err := addrOf(s.Address, s.AddressFamily)
	if err != nil {
		return "", err
	}
	if s.Port == 0 {
		return "", fmt.Errorf("port 0: %w", syscall.EINVAL)
	}
	return Key(p + " " + netip.AddrPortFrom(a, s.Port).String()), nil
}

// checkOptions validates the scheduler, flags, timeout and netmask.
func checkOptions(s *mobyipvs.Service) error {
	if !slices.Contains(ipvs.Schedulers, s.SchedName) {
		return fmt.Errorf("scheduler %q: %w", s.SchedName, syscall.ENOENT)
	}
	if s.Flags&^uint32(0x1|0x8|0x10|0x20|0x40) != 0 {
		return fmt.Errorf("flags %#x: %w", s.Flags, syscall.EINVAL)
	}
	if s.Flags&0x1 != 0 && s.Timeout == 0 {
		return fmt.Errorf("persistent without timeout: %w", syscall.EINVAL)
	}
	if s.AddressFamily == syscall.AF_INET && s.Netmask != 0xffffffff {
		return fmt.Errorf("netmask %#x for IPv4 (want 0xffffffff): %w", s.Netmask, syscall.EINVAL)
	}
	return nil
}

func (f *Fake) fail(op string) error {
	if f.failOn == op {
		err := f.failErr
		f.failOn, f.failErr = "", nil
		return err
	}
	return nil
}

func (f *Fake) lookup(s *mobyipvs.Service) (Key, *VS, error) {
	k, err := key(s)
	if err != nil {
		return "", nil, err
	}
	v := f.vs[k]
	if v == nil {
		return k, nil, fmt.Errorf("virtual server %s: %w", k, syscall.ESRCH)
	}
	return k, v, nil
}

// GetServices lists every virtual server (with FlagHashed set, as the
// kernel lists them).
func (f *Fake) GetServices() ([]*mobyipvs.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := slices.Collect(maps.Keys(f.vs))
	slices.Sort(keys)
	out := make([]*mobyipvs.Service, 0, len(keys))
	for _, k := range keys {
		s := f.vs[k].Service
		s.Flags |= 0x2
		out = append(out, &s)
	}
	return out, nil
}

// GetService returns one virtual server, ESRCH when missing.
func (f *Fake) GetService(s *mobyipvs.Service) (*mobyipvs.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, v, err := f.lookup(s)
	if err != nil {
		return nil, err
	}
	out := v.Service
	out.Flags |= 0x2
	return &out, nil
}

// NewService adds a virtual server.
func (f *Fake) NewService(s *mobyipvs.Service) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail("NewService"); err != nil {
		return err
	}
	k, err := key(s)
	if err != nil {
		return err
	}
	if err := checkOptions(s); err != nil {
		return err
	}
	if f.vs[k] != nil {
		return fmt.Errorf("virtual server %s: %w", k, syscall.EEXIST)
	}
	c := *s
	c.Address = slices.Clone(s.Address)
	f.vs[k] = &VS{Service: c, Dests: map[netip.AddrPort]mobyipvs.Destination{}}
	f.ops = append(f.ops, "NewService "+string(k))
	return nil
}

// UpdateService changes a virtual server's options.
func (f *Fake) UpdateService(s *mobyipvs.Service) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail("UpdateService"); err != nil {
		return err
	}
	k, v, err := f.lookup(s)
	if err != nil {
		return err
	}
	if err := checkOptions(s); err != nil {
		return err
	}
	v.Service.SchedName, v.Service.Flags, v.Service.Timeout, v.Service.Netmask = s.SchedName, s.Flags, s.Timeout, s.Netmask
	f.ops = append(f.ops, "UpdateService "+string(k))
	return nil
}

// DelService deletes a virtual server and its real servers.
func (f *Fake) DelService(s *mobyipvs.Service) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail("DelService"); err != nil {
		return err
	}
	k, _, err := f.lookup(s)
	if err != nil {
		return err
	}
	delete(f.vs, k)
	f.ops = append(f.ops, "DelService "+string(k))
	return nil
}

func destOf(v *VS, d *mobyipvs.Destination) (netip.AddrPort, error) {
	if d == nil {
		return netip.AddrPort{}, fmt.Errorf("nil destination: %w", syscall.EINVAL)
	}
	fam := d.AddressFamily
	if fam == 0 {
		fam = v.Service.AddressFamily
	}
	if fam != v.Service.AddressFamily {
		return netip.AddrPort{}, fmt.Errorf("destination family %d on a family %d service: %w", fam, v.Service.AddressFamily, syscall.EINVAL)
	}
	a, err := addrOf(d.Address, fam)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if d.Port == 0 {
		return netip.AddrPort{}, fmt.Errorf("destination port 0: %w", syscall.EINVAL)
	}
	if d.Weight < 0 {
		return netip.AddrPort{}, fmt.Errorf("weight %d: %w", d.Weight, syscall.EINVAL)
	}
	if d.ConnectionFlags&^uint32(mobyipvs.ConnectionFlagFwdMask) != 0 {
		return netip.AddrPort{}, fmt.Errorf("connection flags %#x: %w", d.ConnectionFlags, syscall.EINVAL)
	}
	return netip.AddrPortFrom(a, d.Port), nil
}

// GetDestinations lists a virtual server's real servers.
func (f *Fake) GetDestinations(s *mobyipvs.Service) ([]*mobyipvs.Destination, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, v, err := f.lookup(s)
	if err != nil {
		return nil, err
	}
	keys := slices.Collect(maps.Keys(v.Dests))
	slices.SortFunc(keys, netip.AddrPort.Compare)
	out := make([]*mobyipvs.Destination, 0, len(keys))
	for _, k := range keys {
		d := v.Dests[k]
		d.Address = k.Addr().AsSlice()
		out = append(out, &d)
	}
	return out, nil
}

func (f *Fake) destOp(op string, s *mobyipvs.Service, d *mobyipvs.Destination, apply func(v *VS, k netip.AddrPort) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail(op); err != nil {
		return err
	}
	k, v, err := f.lookup(s)
	if err != nil {
		return err
	}
	dk, err := destOf(v, d)
	if err != nil {
		return err
	}
	if err := apply(v, dk); err != nil {
		return err
	}
	f.ops = append(f.ops, fmt.Sprintf("%s %s %s w=%d", op, k, dk, d.Weight))
	return nil
}

// NewDestination adds a real server.
func (f *Fake) NewDestination(s *mobyipvs.Service, d *mobyipvs.Destination) error {
	return f.destOp("NewDestination", s, d, func(v *VS, k netip.AddrPort) error {
		if _, ok := v.Dests[k]; ok {
			return fmt.Errorf("real server %s: %w", k, syscall.EEXIST)
		}
		c := *d
		c.Address = nil
		v.Dests[k] = c
		return nil
	})
}

// UpdateDestination changes a real server's weight and flags.
func (f *Fake) UpdateDestination(s *mobyipvs.Service, d *mobyipvs.Destination) error {
	return f.destOp("UpdateDestination", s, d, func(v *VS, k netip.AddrPort) error {
		if _, ok := v.Dests[k]; !ok {
			return fmt.Errorf("real server %s: %w", k, syscall.ENOENT)
		}
		c := *d
		c.Address = nil
		v.Dests[k] = c
		return nil
	})
}

// DelDestination removes a real server.
func (f *Fake) DelDestination(s *mobyipvs.Service, d *mobyipvs.Destination) error {
	return f.destOp("DelDestination", s, d, func(v *VS, k netip.AddrPort) error {
		if _, ok := v.Dests[k]; !ok {
			return fmt.Errorf("real server %s: %w", k, syscall.ENOENT)
		}
		delete(v.Dests, k)
		return nil
	})
}

// Addrs is a stateful AddrBinder: an interface that may not exist yet.
// Binding to a missing interface fails (ENODEV) as it would in the kernel;
// binding twice or unbinding an absent address is tolerated, as the real
// binder tolerates EEXIST and EADDRNOTAVAIL.
type Addrs struct {
	mu     sync.Mutex
	exists bool
	addrs  map[netip.Addr]bool
	ops    []string
}

// NewAddrs returns a binder whose interface does not exist yet.
func NewAddrs() *Addrs { return &Addrs{addrs: map[netip.Addr]bool{}} }

// Ensure creates the interface.
func (a *Addrs) Ensure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.exists {
		a.ops = append(a.ops, "Ensure")
	}
	a.exists = true
	return nil
}

// List returns the bound addresses (none without the interface).
func (a *Addrs) List() ([]netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Collect(maps.Keys(a.addrs))
	slices.SortFunc(out, netip.Addr.Compare)
	return out, nil
}

// Add binds ip.
func (a *Addrs) Add(ip netip.Addr) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.exists {
		return fmt.Errorf("bind %s: no interface: %w", ip, syscall.ENODEV)
	}
	if !ip.Is4() {
		return fmt.Errorf("bind %s: not IPv4: %w", ip, syscall.EINVAL)
	}
	a.addrs[ip] = true
	a.ops = append(a.ops, "Add "+ip.String())
	return nil
}

// Del unbinds ip.
func (a *Addrs) Del(ip netip.Addr) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.exists {
		return fmt.Errorf("unbind %s: no interface: %w", ip, syscall.ENODEV)
	}
	delete(a.addrs, ip)
	a.ops = append(a.ops, "Del "+ip.String())
	return nil
}

// Remove deletes the interface and its addresses.
func (a *Addrs) Remove() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.exists = false
	a.addrs = map[netip.Addr]bool{}
	a.ops = append(a.ops, "Remove")
	return nil
}

// Exists reports whether the interface exists.
func (a *Addrs) Exists() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.exists
}

// Ops returns the mutating calls so far.
func (a *Addrs) Ops() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.ops)
}

// ResetOps forgets the calls so far.
func (a *Addrs) ResetOps() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ops = nil
}
