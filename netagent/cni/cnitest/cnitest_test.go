package cnitest_test

import (
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/containernetworking/cni/libcni"

	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/cni/cnitest"
)

func TestSysctlValidates(t *testing.T) {
	s := cnitest.NewSysctl()
	if err := s.Set("net/ipv4/ip_forward", "2"); err == nil {
		t.Error("ip_forward=2 accepted")
	}
	if err := s.Set("net/ipv4/nope", "1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unknown key: %v", err)
	}
	if v, _ := s.Get("net/ipv4/ip_forward"); v != "0" {
		t.Errorf("fresh ip_forward %q", v)
	}
}

func TestLinksValidate(t *testing.T) {
	l := cnitest.NewLinks()
	dst := netip.MustParsePrefix("10.96.0.0/12")
	gw := netip.MustParseAddr("10.244.1.1")
	if err := l.RouteReplace(dst, "br0", gw); !errors.Is(err, cni.ErrLinkNotFound) {
		t.Errorf("route via a missing link: %v", err)
	}
	if err := l.AddBridge("br0", 1500, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.AddBridge("br0", 1500, nil); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("second bridge: %v", err)
	}
	if err := l.RouteReplace(dst, "br0", gw); !errors.Is(err, syscall.ENETDOWN) {
		t.Errorf("route via a down link: %v", err)
	}
	_ = l.SetUp("br0")
	if err := l.RouteReplace(dst, "br0", gw); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("route with a non-local source: %v", err)
	}
	p := netip.PrefixFrom(gw, 24)
	_ = l.AddrAdd("br0", p)
	if err := l.AddrAdd("br0", p); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("duplicate address: %v", err)
	}
	if err := l.RouteReplace(netip.MustParsePrefix("10.96.0.1/12"), "br0", gw); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("unmasked destination: %v", err)
	}
	if err := l.RouteReplace(dst, "br0", gw); err != nil {
		t.Fatal(err)
	}
	_ = l.AddrDel("br0", p)
	if r := l.Routes(); len(r) != 0 {
		t.Errorf("route outlived its source address: %v", r)
	}
}

// plugins returns fake plugins with a set-up bridge and a namespace
// "/ns/a", and the list of a real Network's conflist.
func plugins(t *testing.T, cidr string, mutateConf func(string) string) (*cnitest.Plugins, *cnitest.Namespaces, *libcni.NetworkConfigList) {
	t.Helper()
	nss := cnitest.NewNamespaces("/ns")
	links := cnitest.NewLinks()
	n, err := cni.New(cni.Config{DataDir: "/d", PodCIDR: netip.MustParsePrefix(cidr), ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12")})
	if err != nil {
		t.Fatal(err)
	}
	_ = links.AddBridge("skiff0", 1500, nil)
	_ = links.AddrAdd("skiff0", netip.PrefixFrom(n.Gateway(), netip.MustParsePrefix(cidr).Bits()))
	_ = links.SetUp("skiff0")
	conf := string(n.ConfList())
	if mutateConf != nil {
		conf = mutateConf(conf)
	}
	list, err := libcni.NetworkConfFromBytes([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	return cnitest.NewPlugins(nss, links), nss, list
}

func TestPluginsRefuseBadConfig(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"ipMasq on", `"ipMasq": false`, `"ipMasq": true`, "ipMasq"},
		{"no hairpin", `"hairpinMode": true`, `"hairpinMode": false`, "hairpin"},
		{"other ipam", `"type": "host-local"`, `"type": "dhcp"`, "host-local"},
		{"no gateway mode", `"isGateway": true`, `"isGateway": false`, "isGateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, nss, list := plugins(t, "10.244.1.0/24", func(s string) string { return strings.Replace(s, tc.from, tc.to, 1) })
			path, _ := nss.Create("a")
			_, err := p.AddNetworkList(context.Background(), list, &libcni.RuntimeConf{ContainerID: "a", NetNS: path, IfName: "eth0"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ADD = %v, want an error about %s", err, tc.want)
			}
		})
	}
}

func TestPluginsHostLocal(t *testing.T) {
	p, nss, list := plugins(t, "10.9.0.0/29", nil) // .2-.6
	ctx := context.Background()
	rt := func(id string) *libcni.RuntimeConf {
		path := "/ns/" + id
		if ok, _ := nss.Exists(id); !ok {
			path, _ = nss.Create(id)
		}
		return &libcni.RuntimeConf{ContainerID: id, NetNS: path, IfName: "eth0"}
	}
	if _, err := p.AddNetworkList(ctx, list, &libcni.RuntimeConf{ContainerID: "x", NetNS: "/ns/missing", IfName: "eth0"}); err == nil {
		t.Error("ADD into a missing namespace succeeded")
	}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if _, err := p.AddNetworkList(ctx, list, rt(id)); err != nil {
			t.Fatalf("ADD %s: %v", id, err)
		}
	}
	if _, err := p.AddNetworkList(ctx, list, rt("a")); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate ADD: %v", err)
	}
	if _, err := p.AddNetworkList(ctx, list, rt("f")); err == nil || !strings.Contains(err.Error(), "no IP addresses") {
		t.Errorf("ADD on a full range: %v", err)
	}
	if err := p.DelNetworkList(ctx, list, rt("c")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddNetworkList(ctx, list, rt("f")); err != nil {
		t.Fatalf("ADD after a release: %v", err)
	}
	if r := p.Reserved(); r[netip.MustParseAddr("10.9.0.4")] != "f" {
		t.Errorf("released .4 not reused: %v", r)
	}
	nss.MakeStale("f")
	if err := p.DelNetworkList(ctx, list, rt("f")); err == nil {
		t.Error("DEL with a stale namespace file succeeded (the bridge plugin fails it)")
	}
}
