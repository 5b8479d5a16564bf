package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/internal/config"
)

func TestAgentFlags(t *testing.T) {
	var got config.Agent
	root := NewRoot(Runners{Agent: func(_ context.Context, c config.Agent) error {
		got = c
		return nil
	}}, &bytes.Buffer{})
	root.SetArgs([]string{"agent", "--server", "https://10.0.0.1:6443", "--token", "T", "--server-ca", "/ca.crt",
		"--node-name", "n2", "--node-ip", "10.0.0.2", "--data-dir", "/d", "--runtime", "process", "--proxy-mode", "nftables",
		"--cluster-domain", "c.local", "--dns-upstream", "9.9.9.9"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := config.Agent{Server: "https://10.0.0.1:6443", Token: "T", ServerCA: "/ca.crt", NodeName: "n2",
		NodeIP: []string{"10.0.0.2"}, DataDir: "/d", Runtime: "process", ProxyMode: "nftables", ClusterDomain: "c.local",
		DNSUpstream: []string{"9.9.9.9"}}
	if got.Server != want.Server || got.Token != want.Token || got.ServerCA != want.ServerCA || got.NodeName != want.NodeName ||
		strings.Join(got.NodeIP, ",") != "10.0.0.2" || got.DataDir != want.DataDir || got.Runtime != want.Runtime ||
		got.ProxyMode != want.ProxyMode || got.ClusterDomain != want.ClusterDomain || strings.Join(got.DNSUpstream, ",") != "9.9.9.9" {
		t.Fatalf("config = %+v", got)
	}
}

func TestAgentListenFlags(t *testing.T) {
	run := func(args ...string) config.Agent {
		t.Helper()
		var got config.Agent
		root := NewRoot(Runners{Agent: func(_ context.Context, c config.Agent) error {
			got = c
			return nil
		}}, &bytes.Buffer{})
		root.SetArgs(append([]string{"agent", "--server", "https://10.0.0.1:6443", "--token", "T"}, args...))
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := run(); got.MetricsBindAddress != "127.0.0.1:10249" || got.HealthzBindAddress != "0.0.0.0:10256" {
		t.Fatalf("defaults: metrics %q, healthz %q", got.MetricsBindAddress, got.HealthzBindAddress)
	}
	if got := run("--metrics-bind-address", "0.0.0.0:9100", "--healthz-bind-address", "127.0.0.1:0"); got.MetricsBindAddress != "0.0.0.0:9100" || got.HealthzBindAddress != "127.0.0.1:0" {
		t.Fatalf("set: metrics %q, healthz %q", got.MetricsBindAddress, got.HealthzBindAddress)
	}
	if got := run("--metrics-bind-address=", "--healthz-bind-address="); got.MetricsBindAddress != "" || got.HealthzBindAddress != "" {
		t.Fatalf("off: metrics %q, healthz %q", got.MetricsBindAddress, got.HealthzBindAddress)
	}
}

func TestAgentFlagsRejected(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"no server", []string{"agent", "--token", "T"}},
		{"http server", []string{"agent", "--server", "http://h:1", "--token", "T"}},
		{"no token", []string{"agent", "--server", "https://h:1"}},
		{"bad node ip", []string{"agent", "--server", "https://h:1", "--token", "T", "--node-ip", "x"}},
		{"bad runtime", []string{"agent", "--server", "https://h:1", "--token", "T", "--runtime", "docker"}},
		{"bad metrics address", []string{"agent", "--server", "https://h:1", "--token", "T", "--metrics-bind-address", "10249"}},
		{"bad healthz address", []string{"agent", "--server", "https://h:1", "--token", "T", "--healthz-bind-address", "host:10256"}},
		{"extra arg", []string{"agent", "--server", "https://h:1", "--token", "T", "more"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := NewRoot(Runners{Agent: func(context.Context, config.Agent) error {
				t.Fatalf("runner called for %v", tc.args)
				return nil
			}}, &bytes.Buffer{})
			root.SetArgs(tc.args)
			root.SetErr(&bytes.Buffer{})
			if err := root.ExecuteContext(context.Background()); err == nil {
				t.Fatalf("%v: no error", tc.args)
			}
		})
	}
}

func TestServerAgentFlags(t *testing.T) {
	var got config.Server
	root := NewRoot(Runners{Server: func(_ context.Context, c config.Server) error {
		got = c
		return nil
	}}, &bytes.Buffer{})
	root.SetArgs([]string{"server", "--data-dir", "/tmp/x", "--node-name", "main-1", "--node-cidr-mask-size", "26"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.AgentNodeName != "main-1" || got.NodeCIDRMaskSize != 26 || got.DisableAgent {
		t.Fatalf("config = %+v", got)
	}
}
