package iptables_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestKernel runs the shared real-kernel cases (proxytest.KernelCases) in
// network namespaces the test creates, with both iptables backends.
func TestKernel(t *testing.T) {
	for _, mode := range []iptables.Mode{iptables.ModeNFT, iptables.ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			newBackend := func(t testing.TB, node *proxytest.Node) proxy.Backend {
				b, err := iptables.New(context.Background(), iptables.Config{Exec: iptables.OSExec{NetNS: node.Path}, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			k := proxytest.RunKernelCases(t, newBackend)
			t.Run("iptables-save reads like the architecture doc's walk-through", func(t *testing.T) { checkSave(t, k, mode) })
			t.Run("a restarted backend re-syncs without dropping a connection", func(t *testing.T) { k.CheckRestart(t, newBackend) })
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
