package ipvs_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs/ipvstest"
)

// nopExec accepts every iptables command (the benchmarks measure the
// backend, not the iptables fake's parser) and counts restore bytes.
type nopExec struct{ bytes *int }

func (n nopExec) Run(_ context.Context, stdin []byte, _ string, _ ...string) ([]byte, error) {
	*n.bytes += len(stdin)
	return nil, nil
}

// scaleState is n ClusterIP Services with 3 endpoints each, every tenth a
// NodePort.
func scaleState(n int) *proxy.State {
	st := state()
	for i := range n {
		vip := netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})
		sp := svcPort("bench", fmt.Sprintf("svc-%d", i), vip.String(), func(sp *proxy.ServicePort) {
			if i%10 == 0 {
				sp.NodePort = int32(30000 + i%2768)
			}
		})
		var e []proxy.Endpoint
		for j := range 3 {
			e = append(e, eps(netip.AddrFrom4([4]byte{10, 244, byte(i >> 6), byte((i%64)*3 + j + 1)}).String())...)
		}
		st.Services[sp.Name] = sp
		st.Endpoints[sp.Name] = e
	}
	return st
}

func benchBackend(b *testing.B, h ipvs.Handle, a ipvs.AddrBinder, ex iptables.Exec) *ipvs.Backend {
	be, err := ipvs.New(context.Background(), ipvs.Config{IPVS: h, Addrs: a, Exec: ex, Mode: iptables.ModeNFT})
	if err != nil {
		b.Fatal(err)
	}
	return be
}

// BenchmarkFullSync: a first full sync of n Services into an empty
// (fake) kernel, then a full sync with nothing to change.
func BenchmarkFullSync(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		st := scaleState(n)
		b.Run(fmt.Sprintf("services=%d/empty", n), func(b *testing.B) {
			for b.Loop() {
				var bytes int
				be := benchBackend(b, ipvstest.New(), ipvstest.NewAddrs(), nopExec{&bytes})
				if err := be.Sync(context.Background(), st, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("services=%d/unchanged", n), func(b *testing.B) {
			var bytes int
			be := benchBackend(b, ipvstest.New(), ipvstest.NewAddrs(), nopExec{&bytes})
			if err := be.Sync(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := be.Sync(context.Background(), st, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPartialSync: one endpoint of one Service replaced, at n
// Services.
func BenchmarkPartialSync(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			st := scaleState(n)
			var bytes int
			be := benchBackend(b, ipvstest.New(), ipvstest.NewAddrs(), nopExec{&bytes})
			if err := be.Sync(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			name := proxy.ServicePortName{Namespace: "bench", Name: "svc-7", Port: "http", Protocol: "TCP"}
			alt := [2][]proxy.Endpoint{eps("10.250.0.1", "10.250.0.2", "10.250.0.3"), eps("10.250.0.1", "10.250.0.2", "10.250.0.4")}
			i := 0
			for b.Loop() {
				i++
				st.Endpoints[name] = alt[i%2]
				if err := be.Sync(context.Background(), st, []proxy.ServicePortName{name}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
