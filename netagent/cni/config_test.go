package cni

import (
	"encoding/json"
	"errors"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
)

func validConfig() Config {
	return Config{
		DataDir:     "/var/lib/skiff",
		PodCIDR:     netip.MustParsePrefix("10.244.1.0/24"),
		ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12"),
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := validConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bridge != "skiff0" || cfg.MTU != 1500 || cfg.NetNSDir != "/var/lib/skiff/netns" ||
		!slices.Equal(cfg.PluginDirs, []string{"/usr/lib/cni", "/opt/cni/bin"}) {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
	}{
		{"no data dir", func(c *Config) { c.DataDir = "" }},
		{"no pod CIDR", func(c *Config) { c.PodCIDR = netip.Prefix{} }},
		{"IPv6 pod CIDR", func(c *Config) { c.PodCIDR = netip.MustParsePrefix("fd00::/64") }},
		{"pod CIDR /31", func(c *Config) { c.PodCIDR = netip.MustParsePrefix("10.244.1.0/31") }},
		{"pod CIDR host bits", func(c *Config) { c.PodCIDR = netip.MustParsePrefix("10.244.1.5/24") }},
		{"no service CIDR", func(c *Config) { c.ServiceCIDR = netip.Prefix{} }},
		{"overlapping CIDRs", func(c *Config) { c.ServiceCIDR = netip.MustParsePrefix("10.244.0.0/16") }},
		{"bridge name too long", func(c *Config) { c.Bridge = "a-very-long-bridge" }},
		{"bridge name with slash", func(c *Config) { c.Bridge = "br/0" }},
		{"MTU too small", func(c *Config) { c.MTU = 100 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.mutate(&cfg)
			if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestConfList(t *testing.T) {
	cfg := validConfig()
	cfg.MTU = 1400
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := libcni.NetworkConfFromBytes(n.ConfList())
	if err != nil {
		t.Fatalf("libcni rejects the conflist: %v", err)
	}
	if list.Name != "skiff" || list.CNIVersion != "1.0.0" {
		t.Errorf("name %q version %q", list.Name, list.CNIVersion)
	}
	var types []string
	for _, p := range list.Plugins {
		types = append(types, p.Network.Type)
	}
	if !slices.Equal(types, []string{"bridge", "portmap", "loopback"}) {
		t.Fatalf("plugins %v", types)
	}
	if !list.Plugins[1].Network.Capabilities["portMappings"] {
		t.Error("portmap lacks the portMappings capability")
	}
	var br map[string]any
	if err := json.Unmarshal(list.Plugins[0].Bytes, &br); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"bridge": "skiff0", "isGateway": true, "ipMasq": false, "hairpinMode": true, "mtu": 1400.0,
	} {
		if br[k] != want {
			t.Errorf("bridge %s = %v, want %v", k, br[k], want)
		}
	}
	ipam := br["ipam"].(map[string]any)
	if ipam["type"] != "host-local" || ipam["dataDir"] != filepath.Join("/var/lib/skiff", "cni", "ipam") {
		t.Errorf("ipam %v", ipam)
	}
	r := ipam["ranges"].([]any)[0].([]any)[0].(map[string]any)
	if r["subnet"] != "10.244.1.0/24" || r["rangeStart"] != "10.244.1.2" || r["gateway"] != "10.244.1.1" {
		t.Errorf("range %v", r)
	}
	if n.Gateway() != netip.MustParseAddr("10.244.1.1") {
		t.Errorf("Gateway() = %v", n.Gateway())
	}
}

func TestBridgeMAC(t *testing.T) {
	m := bridgeMAC(netip.MustParseAddr("10.244.1.1"))
	if m.String() != "02:73:0a:f4:01:01" {
		t.Errorf("MAC %v", m)
	}
	if m[0]&1 != 0 || m[0]&2 == 0 {
		t.Errorf("MAC %v is not locally administered unicast", m)
	}
}

func TestValidPodUID(t *testing.T) {
	for _, tc := range []struct {
		name string
		uid  string
		want bool
	}{
		{"uuid", "6f1c2c8e-2b1a-4c39-9d1e-0c5a3e2f4b11", true},
		{"simple", "pod_1.a", true},
		{"empty", "", false},
		{"leading dot", ".hidden", false},
		{"slash", "a/b", false},
		{"space", "a b", false},
		{"too long", string(slices.Repeat([]byte("a"), 201)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := validPodUID(tc.uid); got != tc.want {
				t.Errorf("validPodUID(%q) = %v", tc.uid, got)
			}
		})
	}
}

func TestPortMapEntries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      PortMapping
		want    portMapEntry
		wantErr bool
	}{
		{"default tcp", PortMapping{HostPort: 80, ContainerPort: 8080}, portMapEntry{80, 8080, "tcp", ""}, false},
		{"UDP lowercased", PortMapping{HostPort: 53, ContainerPort: 53, Protocol: "UDP"}, portMapEntry{53, 53, "udp", ""}, false},
		{"host IP", PortMapping{HostPort: 1, ContainerPort: 2, Protocol: "SCTP", HostIP: "192.0.2.1"}, portMapEntry{1, 2, "sctp", "192.0.2.1"}, false},
		{"bad protocol", PortMapping{HostPort: 80, ContainerPort: 80, Protocol: "ICMP"}, portMapEntry{}, true},
		{"zero host port", PortMapping{ContainerPort: 80}, portMapEntry{}, true},
		{"port too big", PortMapping{HostPort: 70000, ContainerPort: 80}, portMapEntry{}, true},
		{"bad host IP", PortMapping{HostPort: 80, ContainerPort: 80, HostIP: "node-1"}, portMapEntry{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := portMapEntries([]PortMapping{tc.in})
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidPortMapping) {
					t.Errorf("err = %v, want ErrInvalidPortMapping", err)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestKeyedMutex(t *testing.T) {
	var k keyedMutex
	var inA atomic.Int32
	var maxA atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := k.lock("a")
			if v := inA.Add(1); v > maxA.Load() {
				maxA.Store(v)
			}
			time.Sleep(time.Millisecond)
			inA.Add(-1)
			unlock()
		}()
	}
	// Another key is not blocked by "a".
	done := make(chan struct{})
	go func() {
		unlock := k.lock("b")
		unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("key b blocked behind key a")
	}
	wg.Wait()
	if maxA.Load() != 1 {
		t.Errorf("%d holders of key a at once", maxA.Load())
	}
	if k.size() != 0 {
		t.Errorf("%d keys left in the map", k.size())
	}
}

func TestProcSysctlNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		ok   bool
	}{
		{"plain", "kernel/ostype", true},
		{"empty", "", false},
		{"escape", "../etc/passwd", false},
		{"double slash", "net//ipv4", false},
		{"absolute", "/kernel/ostype", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ProcSysctl{}.Get(tc.key)
			if tc.ok && (err != nil || v != "Linux") {
				t.Errorf("Get(%q) = %q, %v; want Linux", tc.key, v, err)
			}
			if !tc.ok && err == nil {
				t.Errorf("Get(%q) succeeded", tc.key)
			}
		})
	}
	if err := (ProcSysctl{}).Set("../x", "1"); err == nil {
		t.Error("Set(../x) succeeded")
	}
}
