package config

import (
	"strings"
	"testing"
)

func TestAgentParse(t *testing.T) {
	ok := func() Agent {
		a := AgentDefaults()
		a.Server, a.Token = "https://10.0.0.1:6443", "t"
		return a
	}
	cases := []struct {
		name    string
		mod     func(*Agent)
		wantErr bool
	}{
		{"defaults with server and token", func(*Agent) {}, false},
		{"token file instead", func(a *Agent) { a.Token, a.TokenFile = "", "/f" }, false},
		{"node ips", func(a *Agent) { a.NodeIP = []string{"10.0.0.2", "fd00::2"} }, false},
		{"no server", func(a *Agent) { a.Server = "" }, true},
		{"plain http", func(a *Agent) { a.Server = "http://10.0.0.1:6443" }, true},
		{"no token", func(a *Agent) { a.Token = "" }, true},
		{"bad node ip", func(a *Agent) { a.NodeIP = []string{"10.0.0"} }, true},
		{"empty data dir", func(a *Agent) { a.DataDir = "" }, true},
		{"bad runtime", func(a *Agent) { a.Runtime = "docker" }, true},
		{"nftables proxy", func(a *Agent) { a.ProxyMode = "nftables" }, false},
		{"insecure registries", func(a *Agent) { a.InsecureRegistries = []string{"reg.lan:5000", "reg.lan", "[fd00::1]:5000"} }, false},
		{"insecure registry with a scheme", func(a *Agent) { a.InsecureRegistries = []string{"http://reg.lan:5000"} }, true},
		{"insecure registry with a path", func(a *Agent) { a.InsecureRegistries = []string{"reg.lan:5000/team"} }, true},
		{"empty insecure registry", func(a *Agent) { a.InsecureRegistries = []string{""} }, true},
		{"ipvs proxy (refused at run time without IPVS)", func(a *Agent) { a.ProxyMode = "ipvs" }, false},
		{"ipvs scheduler sh", func(a *Agent) { a.ProxyMode, a.IPVSScheduler = "ipvs", "sh" }, false},
		{"unknown ipvs scheduler", func(a *Agent) { a.IPVSScheduler = "fastest" }, true},
		{"unknown proxy mode", func(a *Agent) { a.ProxyMode = "userspace" }, true},
		{"metrics and healthz off", func(a *Agent) { a.MetricsBindAddress, a.HealthzBindAddress = "", "" }, false},
		{"metrics on all addresses", func(a *Agent) { a.MetricsBindAddress = ":10249" }, false},
		{"metrics on ipv6 loopback", func(a *Agent) { a.MetricsBindAddress = "[::1]:10249" }, false},
		{"healthz on localhost, any port", func(a *Agent) { a.HealthzBindAddress = "localhost:0" }, false},
		{"metrics without a port", func(a *Agent) { a.MetricsBindAddress = "127.0.0.1" }, true},
		{"metrics port too big", func(a *Agent) { a.MetricsBindAddress = "127.0.0.1:70000" }, true},
		{"metrics port not a number", func(a *Agent) { a.MetricsBindAddress = "127.0.0.1:http" }, true},
		{"healthz host not an address", func(a *Agent) { a.HealthzBindAddress = "example.com:10256" }, true},
		{"healthz without a port", func(a *Agent) { a.HealthzBindAddress = "0.0.0.0:" }, true},
		{"node api listen without a port", func(a *Agent) { a.NodeAPIListen = "10250" }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := ok()
			tc.mod(&a)
			_, err := a.Parse()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

func TestServerNodeCIDRMaskSize(t *testing.T) {
	cases := []struct {
		name    string
		cluster string
		mask    int
		wantErr bool
	}{
		{"default /24 of a /16", "10.244.0.0/16", 0, false},
		{"/26 of a /16", "10.244.0.0/16", 26, false},
		{"shorter than the cluster", "10.244.0.0/16", 15, true},
		{"more than 2^20 subnets", "10.0.0.0/8", 30, true},
		{"cluster smaller than /24 needs a mask", "10.244.0.0/25", 0, true},
		{"cluster /25 with /27", "10.244.0.0/25", 27, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ServerDefaults()
			c.ClusterCIDR, c.NodeCIDRMaskSize = tc.cluster, tc.mask
			_, err := c.Parse()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

func TestServerProxyMode(t *testing.T) {
	cases := []struct {
		name    string
		mode    string
		wantErr bool
	}{
		{"iptables", "iptables", false},
		{"nftables", "nftables", false},
		{"ipvs", "ipvs", false},
		{"unknown", "kernelspace", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ServerDefaults()
			c.ProxyMode = tc.mode
			_, err := c.Parse()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "--proxy-mode") {
				t.Fatalf("err = %v, want it to name --proxy-mode", err)
			}
		})
	}
}

func TestAgentListenDefaults(t *testing.T) {
	d := AgentDefaults()
	// kube-proxy's --metrics-bind-address and --healthz-bind-address.
	if d.MetricsBindAddress != "127.0.0.1:10249" || d.HealthzBindAddress != "0.0.0.0:10256" {
		t.Fatalf("defaults: metrics %q, healthz %q", d.MetricsBindAddress, d.HealthzBindAddress)
	}
}
