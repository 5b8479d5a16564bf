package ipvs_test

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// requireIPVS skips unless the kernel has ip_vs. This machine's kernel has
// none: hack/ipvs-vm.sh (make ipvs-vm, part of make test) boots a Debian
// kernel that has it under qemu and runs these tests there.
func requireIPVS(t *testing.T) {
	t.Helper()
	netnstest.RequireRoot(t)
	if err := ipvs.Available(); err != nil {
		t.Skipf("needs a kernel with ip_vs (%v); hack/ipvs-vm.sh runs this test in a VM that has it", err)
	}
}

// realBackend is the ipvs backend on the real kernel in node's namespace.
func realBackend(t testing.TB, node *proxytest.Node) *ipvs.Backend {
	t.Helper()
	k, err := ipvs.OpenKernel(ipvs.KernelOptions{NetNS: node.Path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	b, err := ipvs.New(context.Background(), ipvs.Config{
		IPVS: k.IPVS, Addrs: k.Addrs, Exec: iptables.OSExec{NetNS: node.Path},
		Sysctl: node.Sysctl,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIPVSKernel runs the cases every proxy mode must pass (proxytest)
// with IPVS programming the kernel, then the mode's own: the trace read
// back from the kernel, an endpoint removal, and Cleanup.
func TestIPVSKernel(t *testing.T) {
	requireIPVS(t)
	var b *ipvs.Backend
	k := proxytest.RunKernelCases(t, func(t testing.TB, node *proxytest.Node) proxy.Backend {
		b = realBackend(t, node)
		return b
	})
	if t.Failed() {
		return
	}
	ctx := context.Background()

	t.Run("trace and endpoint removal", func(t *testing.T) {
		svc := proxytest.Service("vm", "two", "10.96.0.40", proxytest.TCP("http", 80))
		svc.Spec.Type = api.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = 30090
		port := proxy.ServicePortName{Namespace: "vm", Name: "two", Port: "http", Protocol: "TCP"}
		httpPort := []api.EndpointPort{proxytest.SlicePort("http", proxytest.PodHTTPPort, api.ProtocolTCP)}
		k.Apply(t, port, 2, svc, proxytest.Slice("vm", "two", "two-1", httpPort, proxytest.PodEP(0), proxytest.PodEP(1)))
		rules, err := b.TraceRules(ctx, netip.MustParseAddrPort("10.96.0.40:80"), "TCP")
		if err != nil {
			t.Fatal(err)
		}
		if len(rules) != 3 || rules[0].Text != "TCP  10.96.0.40:80 rr" || rules[1].Endpoint != "10.244.0.2:8080" ||
			rules[2].Endpoint != "10.244.0.3:8080" || rules[1].Probability != 0.5 {
			t.Errorf("trace from the kernel: %+v", rules)
		}
		for _, r := range rules {
			t.Logf("trace: %s", r.Text)
		}
		both := func(ns *proxytest.NetNS, url string) map[string]int {
			seen := map[string]int{}
			for range 20 {
				out, err := proxytest.HTTPGet(ns, url)
				if err != nil {
					t.Fatalf("%s: %v", url, err)
				}
				name, _, _ := strings.Cut(out, " ")
				seen[name]++
			}
			return seen
		}
		for _, url := range []string{"http://10.96.0.40/"} {
			if seen := both(k.Node.Pods[5].NetNS, url); len(seen) != 2 || seen["pod0"] == 0 || seen["pod1"] == 0 {
				t.Errorf("%s from a pod: %v, want pod0 and pod1", url, seen)
			}
		}
		if seen := both(k.Node.Client, "http://192.168.77.1:30090/"); len(seen) != 2 {
			t.Errorf("NodePort from outside: %v, want pod0 and pod1", seen)
		}
		// pod1 goes: only pod0 answers, and the kernel lists one server.
		k.Apply(t, port, 1, proxytest.Slice("vm", "two", "two-1", httpPort, proxytest.PodEP(0)))
		if seen := both(k.Node.Pods[5].NetNS, "http://10.96.0.40/"); len(seen) != 1 || seen["pod0"] != 20 {
			t.Errorf("after removing pod1: %v, want only pod0", seen)
		}
		if seen := both(k.Node.Client, "http://192.168.77.1:30090/"); len(seen) != 1 || seen["pod0"] != 20 {
			t.Errorf("NodePort after removing pod1: %v, want only pod0", seen)
		}
		rules, err = b.TraceRules(ctx, netip.MustParseAddrPort("192.168.77.1:30090"), "TCP")
		if err != nil || len(rules) != 2 || rules[1].Endpoint != "10.244.0.2:8080" || rules[1].Probability != 1 {
			t.Errorf("trace after removal: %+v %v", rules, err)
		}
	})

	t.Run("proc lists the virtual servers", func(t *testing.T) {
		var out string
		if err := k.Node.Do(func() error {
			// /proc/net is the main thread's namespace; this thread is in the node's.
			b, err := os.ReadFile("/proc/thread-self/net/ip_vs")
			out = string(b)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// /proc/net/ip_vs prints addresses in hex: 10.96.0.40:80 is 0A600028:0050.
		if !strings.Contains(out, "0A600028:0050 rr") {
			t.Errorf("/proc/net/ip_vs in the node namespace:\n%s", out)
		}
	})

	t.Run("cleanup", func(t *testing.T) {
		// The proxier's next full sync (SyncPeriod, 30 s) would program
		// everything again; the test ends before it.
		if err := b.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		rules, err := b.TraceRules(ctx, netip.MustParseAddrPort("10.96.0.40:80"), "TCP")
		if err != nil || len(rules) != 0 {
			t.Errorf("after Cleanup: %+v %v", rules, err)
		}
	})
}
