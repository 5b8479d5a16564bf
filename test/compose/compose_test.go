package compose

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
)

type service struct {
	Build      any               `json:"build"`
	Image      string            `json:"image"`
	Privileged bool              `json:"privileged"`
	Entrypoint []string          `json:"entrypoint"`
	Command    []string          `json:"command"`
	DependsOn  []string          `json:"depends_on"`
	Volumes    []string          `json:"volumes"`
	Ports      []string          `json:"ports"`
	Networks   map[string]netCfg `json:"networks"`
}

type netCfg struct {
	IPv4Address string `json:"ipv4_address"`
}

type composeFile struct {
	Name     string             `json:"name"`
	Services map[string]service `json:"services"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string `json:"subnet"`
			} `json:"config"`
		} `json:"ipam"`
	} `json:"networks"`
	Volumes map[string]any `json:"volumes"`
}

func load(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(b, &top); err != nil {
		t.Fatalf("docker-compose.yml is not YAML: %v", err)
	}
	for k := range top {
		if !strings.HasPrefix(k, "x-") && !slices.Contains([]string{"name", "services", "networks", "volumes"}, k) {
			t.Fatalf("docker-compose.yml: unexpected top-level key %q", k)
		}
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// runCLI runs args through the real CLI with runners that only record
// the parsed configuration.
func runCLI(t *testing.T, args []string) (srv *config.Server, ag *config.Agent) {
	t.Helper()
	var out bytes.Buffer
	r := cli.Runners{
		Server: func(_ context.Context, c config.Server) error { srv = &c; return nil },
		Agent:  func(_ context.Context, c config.Agent) error { ag = &c; return nil },
	}
	root := cli.NewRootWith(r, kubectl.Env{In: strings.NewReader(""), Out: &out, ErrOut: &out, Getenv: func(string) string { return "" }})
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("skiff %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return srv, ag
}

func TestComposeFile(t *testing.T) {
	f := load(t)
	if len(f.Services) != 3 {
		t.Fatalf("services: %d, want server, agent1, agent2", len(f.Services))
	}
	nw, ok := f.Networks["skiff"]
	if !ok || len(nw.IPAM.Config) != 1 {
		t.Fatalf("network skiff with one subnet: %+v", f.Networks)
	}
	subnet := netip.MustParsePrefix(nw.IPAM.Config[0].Subnet)
	if _, err := os.Stat("../../Dockerfile"); err != nil {
		t.Fatalf("the services build the repository's Dockerfile: %v", err)
	}
	seen := map[netip.Addr]string{}
	var nodeIPs []netip.Addr
	for name, s := range f.Services {
		if !s.Privileged || s.Image != "skiff:dev" || s.Build == nil {
			t.Errorf("%s: want privileged, image skiff:dev, build: %+v", name, s)
		}
		ip, err := netip.ParseAddr(s.Networks["skiff"].IPv4Address)
		if err != nil || !subnet.Contains(ip) {
			t.Fatalf("%s: address %q not in %v", name, s.Networks["skiff"].IPv4Address, subnet)
		}
		if other, dup := seen[ip]; dup {
			t.Fatalf("%s and %s share %v", name, other, ip)
		}
		seen[ip] = name
		srv, ag := runCLI(t, s.Command)
		switch name {
		case "server":
			if srv == nil {
				t.Fatalf("server runs %q", s.Command)
			}
			if srv.DisableAgent || !slices.Contains(srv.TLSSANs, "server") || srv.PodRoutes != "host-gw" {
				t.Errorf("server: want its agent, SAN server, host-gw routes: %+v", srv)
			}
			if !slices.Equal(srv.NodeIP, []string{ip.String()}) || srv.AgentNodeName != name {
				t.Errorf("server: node IP %v name %q, want %v %q", srv.NodeIP, srv.AgentNodeName, ip, name)
			}
			nodeIPs = append(nodeIPs, ip)
		case "agent1", "agent2":
			if ag == nil {
				t.Fatalf("%s runs %q", name, s.Command)
			}
			if ag.Server != "https://server:6443" || ag.NodeName != name || !slices.Equal(ag.NodeIP, []string{ip.String()}) || ag.PodRoutes != "host-gw" {
				t.Errorf("%s: %+v", name, ag)
			}
			if !slices.Contains(s.DependsOn, "server") || !slices.Contains(s.Volumes, "server-data:/server:ro") {
				t.Errorf("%s: depends on the server and reads its data volume: %+v", name, s)
			}
			// The entrypoint waits for the files the flags name.
			script := strings.Join(s.Entrypoint, " ")
			for _, p := range []string{ag.TokenFile, ag.ServerCA} {
				if p == "" || !strings.Contains(script, p) {
					t.Errorf("%s: the entrypoint does not wait for %q: %q", name, p, script)
				}
			}
			nodeIPs = append(nodeIPs, ip)
		default:
			t.Errorf("unexpected service %q", name)
		}
	}
	if len(nodeIPs) != 3 {
		t.Fatalf("node IPs: %v", nodeIPs)
	}
	for _, v := range []string{"server-data", "agent1-data", "agent2-data"} {
		if _, ok := f.Volumes[v]; !ok {
			t.Errorf("volume %s not declared", v)
		}
	}
}
