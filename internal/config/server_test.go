package config

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Server)
		wantErr string
		check   func(*testing.T, Parsed)
	}{
		{name: "defaults", mutate: func(*Server) {}, check: func(t *testing.T, p Parsed) {
			if p.ServiceCIDR.String() != "10.96.0.0/16" || p.PortBase != 30000 || p.PortSize != 2768 {
				t.Fatalf("parsed %+v", p)
			}
			if p.ListenHost != "0.0.0.0" || p.ListenPort != "6443" {
				t.Fatalf("listen %q %q", p.ListenHost, p.ListenPort)
			}
		}},
		{name: "service cidr masked", mutate: func(c *Server) { c.ServiceCIDR = "10.96.3.4/16" }, check: func(t *testing.T, p Parsed) {
			if p.ServiceCIDR.String() != "10.96.0.0/16" {
				t.Fatalf("got %s", p.ServiceCIDR)
			}
		}},
		{name: "bad service cidr", mutate: func(c *Server) { c.ServiceCIDR = "10.96.0.0" }, wantErr: "--service-cidr"},
		{name: "bad cluster cidr", mutate: func(c *Server) { c.ClusterCIDR = "x" }, wantErr: "--cluster-cidr"},
		{name: "overlap", mutate: func(c *Server) { c.ClusterCIDR = "10.96.128.0/20" }, wantErr: "overlaps"},
		{name: "port range no dash", mutate: func(c *Server) { c.NodePortRange = "30000" }, wantErr: "--node-port-range"},
		{name: "port range reversed", mutate: func(c *Server) { c.NodePortRange = "32000-31000" }, wantErr: "--node-port-range"},
		{name: "port range too high", mutate: func(c *Server) { c.NodePortRange = "30000-70000" }, wantErr: "--node-port-range"},
		{name: "bad node ip", mutate: func(c *Server) { c.NodeIP = []string{"1.2.3"} }, wantErr: "--node-ip"},
		{name: "node ips", mutate: func(c *Server) { c.NodeIP = []string{"192.0.2.1", "2001:db8::1"} }, check: func(t *testing.T, p Parsed) {
			if len(p.NodeIPs) != 2 || !p.NodeIPs[1].Is6() {
				t.Fatalf("got %v", p.NodeIPs)
			}
		}},
		{name: "bad listen", mutate: func(c *Server) { c.Listen = "6443" }, wantErr: "--listen"},
		{name: "bad dns listen", mutate: func(c *Server) { c.DNSListen = "1053" }, wantErr: "--dns-listen"},
		{name: "dns ttl zero", mutate: func(c *Server) { c.DNSTTL = 0 }, wantErr: "--dns-ttl"},
		{name: "dns ttl fraction", mutate: func(c *Server) { c.DNSTTL = 1500 * time.Millisecond }, wantErr: "--dns-ttl"},
		{name: "dns ttl too long", mutate: func(c *Server) { c.DNSTTL = 2 * time.Hour }, wantErr: "--dns-ttl"},
		{name: "dns listen and ttl", mutate: func(c *Server) { c.DNSListen = "127.0.0.1:1053"; c.DNSTTL = 30 * time.Second }, check: func(*testing.T, Parsed) {}},
		{name: "empty data dir", mutate: func(c *Server) { c.DataDir = "" }, wantErr: "--data-dir"},
		// the node-agent modes are checked as the agent checks them (checkNodeModes)
		{name: "bad runtime", mutate: func(c *Server) { c.Runtime = "docker" }, wantErr: "--runtime"},
		{name: "bad proxy mode", mutate: func(c *Server) { c.ProxyMode = "userspace" }, wantErr: "--proxy-mode"},
		{name: "bad ipvs scheduler", mutate: func(c *Server) { c.IPVSScheduler = "xx" }, wantErr: "--ipvs-scheduler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ServerDefaults()
			tt.mutate(&c)
			p, err := c.Parse()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}
