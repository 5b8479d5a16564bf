package ipvs_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs/ipvstest"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestConformance runs the shared conformance table against the backend
// on the IPVS, address and iptables fakes, tracing each packet through
// iptables, IPVS and nat POSTROUTING (ipvstest.Tracer). The steps where
// IPVS cannot do what the other modes do carry their exception in the
// table.
func TestConformance(t *testing.T) {
	proxytest.Conformance(t, func(t *testing.T) proxytest.Dataplane {
		h, addrs, ipt := ipvstest.New(), ipvstest.NewAddrs(), iptablestest.New(iptables.ModeNFT)
		b, err := ipvs.New(context.Background(), ipvs.Config{IPVS: h, Addrs: addrs, Exec: ipt, Mode: iptables.ModeNFT,
			Sysctl: func(string, string) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		return &fakeDataplane{Backend: b, addrs: addrs, tracer: &ipvstest.Tracer{IPVS: h, IPTables: ipt}}
	})
}

type fakeDataplane struct {
	*ipvs.Backend
	addrs  *ipvstest.Addrs
	tracer *ipvstest.Tracer
}

// packet also refreshes the tracer's local addresses: the node's and
// those the backend bound.
func (d *fakeDataplane) packet(p proxytest.Packet) (iptablestest.Packet, error) {
	bound, err := d.addrs.List()
	if err != nil {
		return iptablestest.Packet{}, err
	}
	d.tracer.Env.LocalAddrs = slices.Concat(proxytest.NodeAddrs(), bound)
	return iptablestest.Packet{Src: p.From.IP, Dst: p.Dst.Addr(), Proto: strings.ToLower(p.Proto),
		SPort: 40000, DPort: p.Dst.Port(), Local: p.From.Node}, nil
}

func (d *fakeDataplane) Trace(p proxytest.Packet) ([]proxytest.Result, error) {
	pkt, err := d.packet(p)
	if err != nil {
		return nil, err
	}
	outs, err := d.tracer.Trace(pkt)
	if err != nil {
		return nil, err
	}
	var rs []proxytest.Result
	for _, o := range outs {
		r, err := o.Result()
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func (d *fakeDataplane) Connect(p proxytest.Packet) (proxytest.Result, error) {
	pkt, err := d.packet(p)
	if err != nil {
		return proxytest.Result{}, err
	}
	o, err := d.tracer.Connect(pkt)
	if err != nil {
		return proxytest.Result{}, err
	}
	return o.Result()
}
