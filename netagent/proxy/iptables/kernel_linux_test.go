package iptables_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestKernel runs the shared real-kernel cases (proxytest.KernelCases) in
// network namespaces the test creates, with both iptables backends.
func TestKernel(t *testing.T) {
	for _, mode := range []iptables.Mode{iptables.ModeNFT, iptables.ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			k := proxytest.RunKernelCases(t, func(t testing.TB, node *proxytest.Node) proxy.Backend {
				b, err := iptables.New(context.Background(), iptables.Config{Exec: iptables.OSExec{NetNS: node.Path}, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
			t.Run("iptables-save reads like the architecture doc's walk-through", func(t *testing.T) { checkSave(t, k, mode) })
			t.Run("a restarted backend re-syncs without dropping a connection", func(t *testing.T) { checkRestart(t, k, mode) })
		})
	}
}

func checkSave(t *testing.T, k *proxytest.Kernel, mode iptables.Mode) {
	save, err := k.Node.Run("iptables-" + string(mode) + "-save")
	if err != nil {
		t.Fatalf("iptables-save in the node namespace: %v\n%s", err, save)
	}
	var lines []string
	for _, l := range strings.Split(save, "\n") {
		if strings.Contains(l, "e2e/scale") {
			lines = append(lines, l)
		}
	}
	t.Logf("iptables-save | grep e2e/scale (node namespace):\n%s", strings.Join(lines, "\n"))
	joined := strings.Join(lines, "\n")
	for _, want := range []string{"-j KUBE-SVC-", "--probability 0.2", "--probability 0.25", "--probability 0.33", "--probability 0.5", "-j DNAT --to-destination 10.244.0.6:8080"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q in the scale Service's rules", want)
		}
	}
	// The jumps from the built-in chains are there once each, however
	// many full syncs ran.
	for _, c := range []struct{ table, chain string }{{"nat", "PREROUTING"}, {"nat", "OUTPUT"}, {"nat", "POSTROUTING"}, {"filter", "INPUT"}, {"filter", "FORWARD"}, {"filter", "OUTPUT"}} {
		out, err := k.Node.Run("iptables-"+string(mode), "-t", c.table, "-S", c.chain)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "-A ") && seen[l] {
				t.Errorf("duplicate jump: %s", l)
			}
			seen[l] = true
		}
	}
}

// checkRestart keeps an HTTP connection to a Service open while a new
// backend (as after an agent restart) does its first full sync.
func checkRestart(t *testing.T, k *proxytest.Kernel, mode iptables.Mode) {
	conn, err := k.Node.Pods[5].Dial("tcp", "10.96.0.15:80", nil, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	get := func() string {
		t.Helper()
		_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		return b.String()
	}
	first := get()
	calls := k.Rec.Calls()
	last := calls[len(calls)-1]
	st := &proxy.State{
		Services: last.Services, Endpoints: last.Endpoints, NodeName: proxytest.NodeName,
		NodeIPs:     []netip.Addr{proxytest.NodeIP},
		ClusterCIDR: proxytest.ClusterCIDR, ServiceCIDR: proxytest.ServiceCIDR,
	}
	b, err := iptables.New(context.Background(), iptables.Config{Exec: iptables.OSExec{NetNS: k.Node.Path}, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	second := get()
	if !strings.HasPrefix(first, "pod") || !strings.HasPrefix(second, "pod") {
		t.Errorf("answers %q then %q", first, second)
	}
	if name := func(s string) string { n, _, _ := strings.Cut(s, " "); return n }; name(first) != name(second) {
		t.Errorf("the connection moved from %q to %q", first, second)
	}
	// New connections work too.
	if out, err := proxytest.HTTPGet(k.Node.Pods[5].NetNS, "http://10.96.0.15/"); err != nil || !strings.HasPrefix(out, "pod") {
		t.Errorf("after the restart: %q %v", out, err)
	}
}
