package iptables_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestConformance runs the shared conformance table against the backend
// on the validating fake (both backends' tools), tracing each packet
// through the nat and filter tables.
func TestConformance(t *testing.T) {
	for _, mode := range []iptables.Mode{iptables.ModeNFT, iptables.ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			proxytest.Conformance(t, func(t *testing.T) proxytest.Dataplane {
				fake := iptablestest.New(mode)
				b, err := iptables.New(context.Background(), iptables.Config{Exec: fake, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				return &fakeDataplane{Backend: b, fake: fake, env: iptablestest.Env{LocalAddrs: proxytest.NodeAddrs(), Recent: map[string][]netip.Addr{}}}
			})
		})
	}
}

// fakeDataplane is the backend with the fake's packet tracer; env keeps
// the "-m recent" lists connections filled (session affinity).
type fakeDataplane struct {
	*iptables.Backend
	fake *iptablestest.Fake
	env  iptablestest.Env
}

// results maps the tracer's outcomes to conformance results.
func results(outs []iptablestest.Outcome) ([]proxytest.Result, error) {
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

func (d *fakeDataplane) trace(p proxytest.Packet) ([]iptablestest.Outcome, error) {
	return d.fake.Trace(d.env, iptablestest.Packet{Src: p.From.IP, Dst: p.Dst.Addr(), Proto: strings.ToLower(p.Proto),
		SPort: 40000, DPort: p.Dst.Port(), Local: p.From.Node})
}

func (d *fakeDataplane) Trace(p proxytest.Packet) ([]proxytest.Result, error) {
	outs, err := d.trace(p)
	if err != nil {
		return nil, err
	}
	return results(outs)
}

// Connect takes the first outcome and adds the client to the recent lists
// that path set, as the kernel does.
func (d *fakeDataplane) Connect(p proxytest.Packet) (proxytest.Result, error) {
	outs, err := d.trace(p)
	if err != nil {
		return proxytest.Result{}, err
	}
	rs, err := results(outs[:1])
	if err != nil {
		return proxytest.Result{}, err
	}
	for _, name := range outs[0].RecentSet {
		d.env.Recent[name] = append(d.env.Recent[name], p.From.IP)
	}
	return rs[0], nil
}
