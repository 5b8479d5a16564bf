package ipvstest

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
)

// Tracer follows the first packet of a connection through the ipvs mode's
// dataplane as the kernel runs it: the iptables rules (nat PREROUTING or
// OUTPUT, filter), then IPVS, which takes a packet for a local address
// (LOCAL_IN) or sent by the node (LOCAL_OUT) when a virtual server has its
// protocol, address and port, then nat POSTROUTING with the mark the nat
// rules set (net.ipv4.vs.conntrack=1 lets it see IPVS traffic).
type Tracer struct {
	IPVS     *Fake
	IPTables *iptablestest.Fake
	// Env is the node; its LocalAddrs must hold the addresses bound to
	// the virtual-IP interface (Addrs.List), as the kernel's local routes
	// do.
	Env iptablestest.Env
	// templates are the persistence templates of persistent virtual
	// servers (sessionAffinity ClientIP): client address -> real server.
	templates map[Key]map[netip.Addr]netip.AddrPort
}

// flagPersistent is IP_VS_SVC_F_PERSISTENT.
const flagPersistent = 0x1

// Trace returns every outcome of p, with probabilities: a packet IPVS
// takes is sent to each real server with its weight share (as rr and wrr
// do over many connections), or to the one a persistence template names;
// a virtual server without real servers answers ICMP port unreachable
// (ip_vs_leave), reported as REJECT. It records nothing.
func (t *Tracer) Trace(p iptablestest.Packet) ([]iptablestest.Outcome, error) {
	outs, _, err := t.trace(p)
	return outs, err
}

// Connect opens one connection: the first outcome of Trace, remembered in
// a persistence template when the virtual server is persistent.
func (t *Tracer) Connect(p iptablestest.Packet) (iptablestest.Outcome, error) {
	outs, k, err := t.trace(p)
	if err != nil {
		return iptablestest.Outcome{}, err
	}
	o := outs[0]
	if v := t.IPVS.Get(k); v != nil && v.Service.Flags&flagPersistent != 0 && o.DNAT {
		if t.templates == nil {
			t.templates = map[Key]map[netip.Addr]netip.AddrPort{}
		}
		if t.templates[k] == nil {
			t.templates[k] = map[netip.Addr]netip.AddrPort{}
		}
		t.templates[k][p.Src] = o.Dst
	}
	return o, nil
}

func (t *Tracer) trace(p iptablestest.Packet) ([]iptablestest.Outcome, Key, error) {
	outs, err := t.IPTables.Trace(t.Env, p)
	if err != nil {
		return nil, "", err
	}
	var res []iptablestest.Outcome
	var vsKey Key
	for _, o := range outs {
		if o.Verdict != "ACCEPT" || o.DNAT || (!p.Local && o.Delivered != "local") {
			res = append(res, o)
			continue
		}
		k := Key(strings.ToUpper(p.Proto) + " " + o.Dst.String())
		v := t.IPVS.Get(k)
		if v == nil {
			res = append(res, o) // not a virtual server: the local stack's
			continue
		}
		vsKey = k
		weights := map[netip.AddrPort]int{}
		total := 0
		for ap, d := range v.Dests {
			if d.Weight > 0 {
				weights[ap] = d.Weight
				total += d.Weight
			}
		}
		if rs, ok := t.templates[k][p.Src]; ok && weights[rs] > 0 {
			weights, total = map[netip.AddrPort]int{rs: 1}, 1
		}
		if total == 0 {
			res = append(res, iptablestest.Outcome{Prob: o.Prob, Verdict: "REJECT", Dst: o.Dst, Mark: o.Mark, Path: o.Path})
			continue
		}
		for ap, w := range weights {
			post, err := t.IPTables.Postrouting(t.Env, iptablestest.Packet{Src: p.Src, Dst: ap.Addr(), Proto: p.Proto,
				SPort: p.SPort, DPort: ap.Port()}, o.RoutedMark)
			if err != nil {
				return nil, "", err
			}
			if len(post) != 1 || post[0].Verdict != "ACCEPT" {
				return nil, "", fmt.Errorf("ipvstest: trace: nat POSTROUTING of %v to %v: %+v", p, ap, post)
			}
			res = append(res, iptablestest.Outcome{
				Prob: o.Prob * float64(w) / float64(total), Verdict: "ACCEPT", Dst: ap, DNAT: true,
				Masquerade: post[0].Masquerade, Delivered: "forward", Mark: post[0].Mark,
				Path: slices.Concat(o.Path, []string{"ipvs " + string(k)}, post[0].Path),
			})
		}
	}
	return res, vsKey, nil
}
