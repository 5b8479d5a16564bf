package ipvstest

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"

	mobyipvs "github.com/moby/ipvs"
)

func svc(addr string, port uint16) *mobyipvs.Service {
	return &mobyipvs.Service{Address: net.ParseIP(addr).To4(), Protocol: syscall.IPPROTO_TCP, Port: port,
		SchedName: "rr", Netmask: 0xffffffff, AddressFamily: syscall.AF_INET}
}

func dest(addr string, port uint16, w int) *mobyipvs.Destination {
	return &mobyipvs.Destination{Address: net.ParseIP(addr).To4(), Port: port, Weight: w, AddressFamily: syscall.AF_INET}
}

func TestFakeRejectsWhatTheKernelRejects(t *testing.T) {
	f := New()
	s := svc("10.96.0.10", 80)
	if err := f.NewService(s); err != nil {
		t.Fatal(err)
	}
	bad := func(mod func(*mobyipvs.Service)) *mobyipvs.Service {
		c := *svc("10.96.0.11", 80)
		mod(&c)
		return &c
	}
	cases := []struct {
		name string
		err  error
		call func() error
	}{
		{"duplicate service", syscall.EEXIST, func() error { return f.NewService(svc("10.96.0.10", 80)) }},
		{"unknown scheduler", syscall.ENOENT, func() error { return f.NewService(bad(func(s *mobyipvs.Service) { s.SchedName = "bogus" })) }},
		{"persistent without timeout", syscall.EINVAL, func() error { return f.NewService(bad(func(s *mobyipvs.Service) { s.Flags = 1 })) }},
		{"IPv4 netmask", syscall.EINVAL, func() error { return f.NewService(bad(func(s *mobyipvs.Service) { s.Netmask = 0 })) }},
		{"protocol", syscall.EINVAL, func() error { return f.NewService(bad(func(s *mobyipvs.Service) { s.Protocol = 1 })) }},
		{"port 0", syscall.EINVAL, func() error { return f.NewService(bad(func(s *mobyipvs.Service) { s.Port = 0 })) }},
		{"family mismatch", syscall.EINVAL, func() error {
			return f.NewService(bad(func(s *mobyipvs.Service) { s.AddressFamily = syscall.AF_INET6 }))
		}},
		{"update missing service", syscall.ESRCH, func() error { return f.UpdateService(svc("10.96.0.99", 80)) }},
		{"delete missing service", syscall.ESRCH, func() error { return f.DelService(svc("10.96.0.99", 80)) }},
		{"dest on missing service", syscall.ESRCH, func() error { return f.NewDestination(svc("10.96.0.99", 80), dest("10.244.0.2", 8080, 1)) }},
		{"negative weight", syscall.EINVAL, func() error { return f.NewDestination(s, dest("10.244.0.2", 8080, -1)) }},
		{"dest port 0", syscall.EINVAL, func() error { return f.NewDestination(s, dest("10.244.0.2", 0, 1)) }},
		{"update missing dest", syscall.ENOENT, func() error { return f.UpdateDestination(s, dest("10.244.0.9", 8080, 1)) }},
		{"delete missing dest", syscall.ENOENT, func() error { return f.DelDestination(s, dest("10.244.0.9", 8080, 1)) }},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
	if err := f.NewDestination(s, dest("10.244.0.2", 8080, 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.NewDestination(s, dest("10.244.0.2", 8080, 1)); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("duplicate dest: %v", err)
	}
	if err := f.UpdateDestination(s, dest("10.244.0.2", 8080, 3)); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Dump(), "TCP 10.96.0.10:80 rr\n  -> 10.244.0.2:8080 w=3\n"; got != want {
		t.Errorf("dump %q, want %q", got, want)
	}
	// Listing sets the kernel's hashed flag; deleting a service takes its
	// real servers.
	ss, _ := f.GetServices()
	if len(ss) != 1 || ss[0].Flags&0x2 == 0 {
		t.Errorf("listed %+v", ss)
	}
	if err := f.DelService(s); err != nil {
		t.Fatal(err)
	}
	if _, err := f.GetDestinations(s); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("dests of a deleted service: %v", err)
	}
	if f.Dump() != "" {
		t.Errorf("not empty: %q", f.Dump())
	}
}

func TestAddrsNeedTheInterface(t *testing.T) {
	a := NewAddrs()
	ip := netip.MustParseAddr("10.96.0.10")
	if err := a.Add(ip); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("bind without the interface: %v", err)
	}
	_ = a.Ensure()
	if err := a.Add(ip); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(netip.MustParseAddr("fd00::1")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("IPv6: %v", err)
	}
	if l, _ := a.List(); len(l) != 1 || l[0] != ip {
		t.Errorf("list %v", l)
	}
	_ = a.Remove()
	if l, _ := a.List(); len(l) != 0 || a.Exists() {
		t.Errorf("after Remove: %v %v", l, a.Exists())
	}
}
