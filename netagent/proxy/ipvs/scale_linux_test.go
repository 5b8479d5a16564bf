package ipvs_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestIPVSScale logs how long the real kernel takes to sync N Services
// (SKIFF_IPVS_SCALE=1000,10000; hack/ipvs-vm.sh passes IPVS_VM_SCALE):
// a first full sync, a full sync with nothing to change, and a partial
// sync replacing one endpoint. It asserts no times (they are figures for
// the README), only that the syncs succeed and the table is complete.
func TestIPVSScale(t *testing.T) {
	spec := os.Getenv("SKIFF_IPVS_SCALE")
	if spec == "" {
		t.Skip("set SKIFF_IPVS_SCALE=1000,10000 to measure (make ipvs-vm IPVS_VM_SCALE=...)")
	}
	requireIPVS(t)
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("SKIFF_IPVS_SCALE %q: %v", spec, err)
		}
		t.Run(f, func(t *testing.T) {
			node := proxytest.NewNode(t)
			k, err := ipvs.OpenKernel(ipvs.KernelOptions{NetNS: node.Path})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			b, err := ipvs.New(context.Background(), ipvs.Config{IPVS: k.IPVS, Addrs: k.Addrs,
				Exec: iptables.OSExec{NetNS: node.Path}, Sysctl: node.Sysctl})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			st := scaleState(n)
			start := time.Now()
			if err := b.Sync(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			first := time.Since(start)
			svcs, err := k.IPVS.GetServices()
			if err != nil || len(svcs) < n {
				t.Fatalf("%d virtual servers (%v), want at least %d", len(svcs), err, n)
			}
			start = time.Now()
			if err := b.Sync(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			again := time.Since(start)
			name := proxy.ServicePortName{Namespace: "bench", Name: "svc-7", Port: "http", Protocol: "TCP"}
			st.Endpoints[name] = eps("10.250.0.1", "10.250.0.2", "10.250.0.3")
			start = time.Now()
			if err := b.Sync(ctx, st, []proxy.ServicePortName{name}); err != nil {
				t.Fatal(err)
			}
			partial := time.Since(start)
			t.Logf("IPVS-SCALE services=%d first-full=%v full-unchanged=%v partial-one-endpoint=%v (virtual servers %d)",
				n, first.Round(time.Millisecond), again.Round(time.Millisecond), partial.Round(time.Microsecond), len(svcs))
			if err := b.Cleanup(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
