package nftables

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	mdnetlink "github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
)

var _ proxy.RuleTracer = (*Proxier)(nil)

// ruleReader is a Kernel that can read a Service's rules back (Netlink).
type ruleReader interface {
	traceRules(ctx context.Context, f Family, table string, dst netip.AddrPort, proto Proto) ([]api.TraceRule, error)
}

// TraceRules reads back, from the kernel, what a new connection to dst
// meets in Skiff's table: the element of the service-ips map (or of
// service-nodeports, or of the no-endpoint maps) for daddr . proto .
// dport, then the rules of the chains it leads to, and for the
// "numgen random mod N offset O map @endpoints-K" rule each element
// O..O+N-1 of that endpoint map. Probability on an entry with an Endpoint
// is the chance a new connection reaching the Service chain ends there
// (1/N per numgen element; for session affinity, the chance among clients
// without an affinity entry yet). Only the Netlink kernel can read rules.
func (p *Proxier) TraceRules(ctx context.Context, dst netip.AddrPort, protocol string) ([]api.TraceRule, error) {
	r, ok := p.kernel.(ruleReader)
	if !ok {
		return nil, fmt.Errorf("nftables: trace: the %T kernel cannot read rules back", p.kernel)
	}
	proto, ok := ParseProto(protocol)
	if !ok {
		return nil, fmt.Errorf("nftables: trace: protocol %q", protocol)
	}
	f := IPv4
	if dst.Addr().Is6() {
		f = IPv6
	}
	out, err := r.traceRules(ctx, f, TableName, netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port()), proto)
	if errors.Is(err, syscall.ENOENT) {
		return nil, nil // no table (yet): no rule
	}
	return out, err
}

// withConn runs fn on the lasting connection, under the lock.
func (n *Netlink) withConn(ctx context.Context, fn func(c *gnft.Conn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	c, err := n.getConn()
	if err != nil {
		return err
	}
	return fn(c)
}

func (n *Netlink) traceRules(ctx context.Context, f Family, table string, dst netip.AddrPort, proto Proto) (out []api.TraceRule, err error) {
	err = n.withConn(ctx, func(c *gnft.Conn) error {
		out, err = n.traceRulesOn(c, f, table, dst, proto)
		return err
	})
	return out, err
}

func (n *Netlink) traceRulesOn(c *gnft.Conn, f Family, table string, dst netip.AddrPort, proto Proto) ([]api.TraceRule, error) {
	t := &gnft.Table{Name: table, Family: gFamily(f)}
	tname := f.String() + " " + table
	w := &nlWalker{c: c, t: t, f: f, tname: tname, seen: map[string]bool{}, sets: map[string][]gnft.SetElement{}}

	key := valsBytes([]Val{AddrVal(dst.Addr()), ProtoVal(proto), PortVal(dst.Port())})
	keyText := fmt.Sprintf("%s . %s . %d", dst.Addr(), proto, dst.Port())
	npKey := valsBytes([]Val{ProtoVal(proto), PortVal(dst.Port())})
	npText := fmt.Sprintf("%s . %d", proto, dst.Port())
	for _, m := range []struct {
		set  string
		key  []byte
		text string
	}{
		{serviceIPsMap, key, keyText}, {noEndpointServicesMap, key, keyText},
		{serviceNodePortsMap, npKey, npText}, {noEndpointNodePortsMap, npKey, npText},
	} {
		els, err := w.elements(m.set)
		if err != nil {
			return nil, err
		}
		for _, e := range els {
			v := elementVerdict(e)
			if !bytes.Equal(e.Key, m.key) || v == nil {
				continue
			}
			w.out = append(w.out, api.TraceRule{Table: tname, Chain: m.set, Text: m.text + " : " + verdictText(v)})
			if ch := v.Chain; ch != "" && v.Kind != expr.VerdictReturn {
				if err := w.walk(ch, 1); err != nil {
					return nil, err
				}
			}
		}
		if len(w.out) > 0 && (m.set == serviceIPsMap || m.set == noEndpointServicesMap) {
			break // a Service address: the NodePort maps are not reached
		}
	}
	return w.out, nil
}

// elementVerdict decodes a vmap element's verdict: google/nftables leaves
// it in Val as the nested NFTA_VERDICT_CODE / NFTA_VERDICT_CHAIN
// attributes.
func elementVerdict(e gnft.SetElement) *expr.Verdict {
	if e.VerdictData != nil {
		return e.VerdictData
	}
	ad, err := mdnetlink.NewAttributeDecoder(e.Val)
	if err != nil {
		return nil
	}
	ad.ByteOrder = binary.BigEndian
	var v *expr.Verdict
	for ad.Next() {
		switch ad.Type() {
		case unix.NFTA_VERDICT_CODE:
			if v == nil {
				v = &expr.Verdict{}
			}
			v.Kind = expr.VerdictKind(int32(ad.Uint32()))
		case unix.NFTA_VERDICT_CHAIN:
			if v == nil {
				v = &expr.Verdict{}
			}
			v.Chain = strings.TrimRight(ad.String(), "\x00")
		}
	}
	if ad.Err() != nil {
		return nil
	}
	return v
}

type nlWalker struct {
	c     *gnft.Conn
	t     *gnft.Table
	f     Family
	tname string
	seen  map[string]bool
	sets  map[string][]gnft.SetElement
	out   []api.TraceRule
}

func (w *nlWalker) elements(name string) ([]gnft.SetElement, error) {
	if els, ok := w.sets[name]; ok {
		return els, nil
	}
	s, err := w.c.GetSetByName(w.t, name)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			w.sets[name] = nil
			return nil, nil
		}
		return nil, fmt.Errorf("nftables: trace: set %s: %w", name, err)
	}
	els, err := w.c.GetSetElements(s)
	if err != nil {
		return nil, fmt.Errorf("nftables: trace: elements of %s: %w", name, err)
	}
	w.sets[name] = els
	return els, nil
}

// walk records the rules of chain; share is the chance a connection that
// reached the Service gets here.
func (w *nlWalker) walk(chain string, share float64) error {
	if w.seen[chain] || chain == markMasqChain {
		return nil
	}
	w.seen[chain] = true
	rules, err := w.c.GetRules(w.t, &gnft.Chain{Name: chain, Table: w.t})
	if err != nil {
		return fmt.Errorf("nftables: trace: rules of %s: %w", chain, err)
	}
	left := share // what reaches the next rule (numgen == 0 rules take a part)
	for _, r := range rules {
		d := describe(w.f, r.Exprs)
		e := api.TraceRule{Table: w.tname, Chain: chain, Text: d.text}
		switch {
		case d.dnatMap != "":
			w.out = append(w.out, e)
			els, err := w.elements(d.dnatMap)
			if err != nil {
				return err
			}
			for i := uint32(0); i < d.mod; i++ {
				k := binary.NativeEndian.AppendUint32(nil, d.offset+i)
				for _, el := range els {
					if !bytes.Equal(el.Key, k) {
						continue
					}
					vals, err := decodeVals([]DataType{w.f.addrType(), TypeInetService}, el.Val)
					if err != nil || len(vals) != 2 {
						continue
					}
					ep := netip.AddrPortFrom(vals[0].Addr, uint16(vals[1].Num))
					w.out = append(w.out, api.TraceRule{Table: w.tname, Chain: d.dnatMap,
						Text:        fmt.Sprintf("%d : %s . %d", d.offset+i, vals[0].Addr, vals[1].Num),
						Probability: left / float64(d.mod), Endpoint: ep.String()})
				}
			}
			return nil
		case d.dnatTo.IsValid():
			e.Endpoint = d.dnatTo.String()
			e.Probability = left
			w.out = append(w.out, e)
			return nil
		case d.verdict != nil && (d.verdict.Kind == expr.VerdictJump || d.verdict.Kind == expr.VerdictGoto):
			w.out = append(w.out, e)
			if d.verdict.Chain == markMasqChain {
				continue
			}
			if d.conditional && d.numgenMod == 0 {
				// A source, set or mark test the trace cannot decide (an
				// affinity entry, a pod source): shown, not followed.
				continue
			}
			part := left
			if d.numgenMod > 0 {
				part = left / float64(d.numgenMod)
			}
			if err := w.walk(d.verdict.Chain, part); err != nil {
				return err
			}
			left -= part
			if d.verdict.Kind == expr.VerdictGoto && !d.conditional && d.numgenMod == 0 {
				return nil
			}
		default:
			w.out = append(w.out, e)
		}
	}
	return nil
}

// ruleDesc is what the trace needs of a rule read from the kernel.
type ruleDesc struct {
	text        string
	verdict     *expr.Verdict
	conditional bool // it tests something besides numgen
	numgenMod   uint32
	dnatMap     string
	mod, offset uint32
	dnatTo      netip.AddrPort
}

// describe renders a rule's expressions close to nft's syntax, for the
// layouts this package writes (unknown expressions show as their type).
func describe(f Family, exprs []expr.Any) ruleDesc {
	var d ruleDesc
	var parts []string
	var ng *expr.Numgen
	var imm [][]byte
	var mask []byte
	for i, e := range exprs {
		switch x := e.(type) {
		case *expr.Meta:
			if x.Key == expr.MetaKeyL4PROTO && i+1 < len(exprs) {
				if c, ok := exprs[i+1].(*expr.Cmp); ok && len(c.Data) == 1 {
					parts = append(parts, "meta l4proto "+Proto(c.Data[0]).String())
				}
			} else if x.Key == expr.MetaKeyMARK && !x.SourceRegister {
				parts = append(parts, "meta mark")
				d.conditional = true
			}
		case *expr.Payload:
			if x.Base == expr.PayloadBaseNetworkHeader && i+1 < len(exprs) {
				field := "daddr"
				if (f == IPv4 && x.Offset == 12) || (f == IPv6 && x.Offset == 8) {
					field = "saddr"
					d.conditional = true
				}
				parts = append(parts, f.String()+" "+field)
			} else if x.Base == expr.PayloadBaseTransportHeader {
				parts = append(parts, "th dport")
			}
		case *expr.Cmp:
			if len(parts) > 0 && strings.HasPrefix(parts[len(parts)-1], "numgen") && len(x.Data) == 4 {
				parts[len(parts)-1] += fmt.Sprintf(" == %d", binary.NativeEndian.Uint32(x.Data))
			} else if len(parts) > 0 && !strings.HasPrefix(parts[len(parts)-1], "meta l4proto") {
				op := "=="
				if x.Op == expr.CmpOpNeq {
					op = "!="
				}
				parts[len(parts)-1] += " " + op + " " + cmpData(x.Data)
				if ones := maskOnes(mask); mask != nil && len(mask) == len(x.Data) && ones < 8*len(mask) {
					parts[len(parts)-1] += fmt.Sprintf("/%d", ones)
				}
				mask = nil
			}
		case *expr.Fib:
			parts = append(parts, "fib addr type local")
			d.conditional = true
		case *expr.Numgen:
			ng = x
			if x.Offset == 0 && i+1 < len(exprs) {
				if _, ok := exprs[i+1].(*expr.Cmp); ok {
					d.numgenMod = x.Modulus
					parts = append(parts, fmt.Sprintf("numgen random mod %d", x.Modulus))
				}
			}
		case *expr.Lookup:
			switch {
			case ng != nil && x.IsDestRegSet:
				d.dnatMap, d.mod, d.offset = x.SetName, ng.Modulus, ng.Offset
			case x.IsDestRegSet:
				parts = append(parts, "vmap @"+x.SetName)
			default:
				parts = append(parts, "@"+x.SetName)
				d.conditional = true
			}
		case *expr.Immediate:
			imm = append(imm, x.Data)
		case *expr.NAT:
			switch {
			case d.dnatMap != "":
				parts = append(parts, fmt.Sprintf("dnat %s addr . port to numgen random mod %d offset %d map @%s", f, d.mod, d.offset, d.dnatMap))
			case len(imm) == 2:
				if a, ok := netip.AddrFromSlice(imm[0]); ok && len(imm[1]) == 2 {
					d.dnatTo = netip.AddrPortFrom(a, binary.BigEndian.Uint16(imm[1]))
					parts = append(parts, fmt.Sprintf("dnat %s to %s", f, d.dnatTo))
				}
			default:
				parts = append(parts, "dnat")
			}
		case *expr.Masq:
			parts = append(parts, "masquerade")
		case *expr.Reject:
			parts = append(parts, "reject")
		case *expr.Dynset:
			parts = append(parts, fmt.Sprintf("update @%s { %s saddr }", x.SetName, f))
		case *expr.Bitwise:
			mask = x.Mask // a prefix (or mark) test: the Cmp that follows shows it
		case *expr.Verdict:
			d.verdict = x
			parts = append(parts, verdictText(x))
		case *expr.Ct:
			parts = append(parts, "ct")
			d.conditional = true
		default:
			parts = append(parts, fmt.Sprintf("%T", e))
		}
	}
	d.text = strings.Join(parts, " ")
	return d
}

// maskOnes counts the leading one bits of a prefix mask.
func maskOnes(m []byte) int {
	n := 0
	for _, b := range m {
		for i := 7; i >= 0; i-- {
			if b&(1<<i) == 0 {
				return n
			}
			n++
		}
	}
	return n
}

func cmpData(b []byte) string {
	switch len(b) {
	case 4:
		if a, ok := netip.AddrFromSlice(b); ok {
			return a.String()
		}
	case 16:
		if a, ok := netip.AddrFromSlice(b); ok {
			return a.String()
		}
	case 2:
		return fmt.Sprint(binary.BigEndian.Uint16(b))
	}
	return fmt.Sprintf("0x%x", b)
}

func verdictText(v *expr.Verdict) string {
	switch v.Kind {
	case expr.VerdictAccept:
		return "accept"
	case expr.VerdictDrop:
		return "drop"
	case expr.VerdictReturn:
		return "return"
	case expr.VerdictJump:
		return "jump " + v.Chain
	case expr.VerdictGoto:
		return "goto " + v.Chain
	}
	return fmt.Sprintf("verdict %d", v.Kind)
}

// ChainRules reads the rules of one chain back from the kernel, rendered
// close to nft's syntax (as the trace shows them): for `skiff trace` of
// tables other than the proxy's (netagent/egress). A missing table or
// chain is ErrNoTable.
func (n *Netlink) ChainRules(ctx context.Context, f Family, table, chain string) ([]string, error) {
	var rules []*gnft.Rule
	err := n.withConn(ctx, func(c *gnft.Conn) error {
		t := &gnft.Table{Name: table, Family: gFamily(f)}
		var err error
		rules, err = c.GetRules(t, &gnft.Chain{Name: chain, Table: t})
		return err
	})
	if errors.Is(err, syscall.ENOENT) {
		return nil, ErrNoTable
	}
	if err != nil {
		return nil, fmt.Errorf("nftables: rules of %s %s %s: %w", f, table, chain, err)
	}
	out := []string{}
	for _, r := range rules {
		out = append(out, describe(f, r.Exprs).text)
	}
	return out, nil
}
