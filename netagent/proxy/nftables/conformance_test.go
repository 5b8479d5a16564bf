package nftables

import (
	"fmt"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestConformance runs the shared conformance table against the Proxier
// on the fake, tracing each packet through the programmed table.
func TestConformance(t *testing.T) {
	proxytest.Conformance(t, func(t *testing.T) proxytest.Dataplane {
		p, f := newFakeProxier(t)
		return &fakeDataplane{Proxier: p, fake: f}
	})
}

// fakeDataplane is the Proxier with the fake's packet tracer.
type fakeDataplane struct {
	*Proxier
	fake *Fake
}

func (d *fakeDataplane) packet(p proxytest.Packet) (Packet, error) {
	proto, ok := ParseProto(p.Proto)
	if !ok {
		return Packet{}, fmt.Errorf("protocol %q", p.Proto)
	}
	return Packet{Src: p.From.IP, Dst: p.Dst.Addr(), Proto: proto, Dport: p.Dst.Port(), FromNode: p.From.Node}, nil
}

func (d *fakeDataplane) trace(p proxytest.Packet, pick func(uint32) uint32) ([]proxytest.Result, error) {
	pkt, err := d.packet(p)
	if err != nil {
		return nil, err
	}
	fam := IPv4
	if pkt.Dst.Is6() {
		fam = IPv6
	}
	outs, err := d.fake.Trace(fam, pkt, TraceConfig{LocalAddrs: proxytest.NodeAddrs(), Pick: pick})
	if err != nil {
		return nil, err
	}
	var rs []proxytest.Result
	for _, o := range outs {
		r := proxytest.Result{Masquerade: o.Masquerade}
		switch {
		case o.Verdict == "accept" && o.DNAT.IsValid():
			r.Verdict, r.Endpoint = proxytest.VerdictDNAT, o.DNAT
		case o.Verdict == "accept":
			r.Verdict = proxytest.VerdictAccept
		case o.Verdict == "drop":
			r.Verdict = proxytest.VerdictDrop
		case o.Verdict == "reject":
			r.Verdict = proxytest.VerdictReject
		default:
			return nil, fmt.Errorf("trace %v: verdict %q", p, o.Verdict)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func (d *fakeDataplane) Trace(p proxytest.Packet) ([]proxytest.Result, error) { return d.trace(p, nil) }

// Connect picks the first numgen result; the tracer records the client in
// the affinity set of the endpoint it reaches, as the kernel does.
func (d *fakeDataplane) Connect(p proxytest.Packet) (proxytest.Result, error) {
	rs, err := d.trace(p, func(uint32) uint32 { return 0 })
	if err != nil {
		return proxytest.Result{}, err
	}
	return rs[0], nil
}
