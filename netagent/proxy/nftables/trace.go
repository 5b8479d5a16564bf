package nftables

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Packet is the first packet of a connection, for Trace.
type Packet struct {
	Src, Dst netip.Addr
	Proto    Proto
	Dport    uint16
	// FromNode: sent by a process of the node's own netns (output path);
	// otherwise it arrives on an interface (a pod or another host:
	// prerouting, then input or forward).
	FromNode bool
}

// TraceConfig describes the node for Trace.
type TraceConfig struct {
	// LocalAddrs are the addresses of the node's netns ("fib ... type
	// local"); 127.0.0.0/8 and ::1 are always local.
	LocalAddrs []netip.Addr
	// Pick, when set, chooses numgen results (and affinity entries are
	// recorded in the fake's maps, as the kernel does). When nil, Trace
	// follows every possible numgen result and records nothing.
	Pick func(mod uint32) uint32
}

// Outcome is where one possible path of a packet ends.
type Outcome struct {
	// Verdict is "accept", "drop" or "reject".
	Verdict string
	// DNAT is the endpoint the packet was sent to (invalid if none).
	DNAT netip.AddrPort
	// Masquerade: the packet was masqueraded in postrouting.
	Masquerade bool
	// Chains is every chain the packet entered, in order.
	Chains []string
}

func (o Outcome) String() string {
	s := o.Verdict
	if o.DNAT.IsValid() {
		s += " dnat " + o.DNAT.String()
	}
	if o.Masquerade {
		s += " masq"
	}
	return s
}

// Trace follows a packet through the fake's table of the family and
// returns its possible outcomes (one per numgen result unless cfg.Pick is
// set), sorted by String.
func (f *Fake) Trace(family Family, pkt Packet, cfg TraceConfig) ([]Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tables[fakeTableKey{family, TableName}]
	if t == nil {
		return []Outcome{{Verdict: "accept"}}, nil
	}
	var out []Outcome
	if cfg.Pick != nil {
		o, err := (&tracer{t: t, family: family, cfg: cfg, pick: cfg.Pick, record: true}).run(pkt)
		if err != nil {
			return nil, err
		}
		return []Outcome{o}, nil
	}
	// Enumerate every sequence of numgen results like an odometer.
	var prefix []uint32
	for {
		var mods []uint32
		i := 0
		tr := &tracer{t: t, family: family, cfg: cfg, pick: func(mod uint32) uint32 {
			defer func() { i++ }()
			mods = append(mods, mod)
			if i < len(prefix) {
				return prefix[i]
			}
			return 0
		}}
		o, err := tr.run(pkt)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
		choices := append(slices.Clone(prefix), make([]uint32, len(mods)-min(len(mods), len(prefix)))...)[:len(mods)]
		j := len(choices) - 1
		for ; j >= 0; j-- {
			if choices[j]+1 < mods[j] {
				choices[j]++
				break
			}
		}
		if j < 0 {
			break
		}
		prefix = choices[:j+1]
	}
	slices.SortFunc(out, func(a, b Outcome) int { return cmp.Compare(a.String(), b.String()) })
	return out, nil
}

type tracer struct {
	t      *fakeTable
	family Family
	cfg    TraceConfig
	pick   func(uint32) uint32
	record bool

	pkt    Packet
	mark   uint32
	dnat   netip.AddrPort
	masq   bool
	chains []string
	steps  int
}

const (
	resNone = iota
	resAccept
	resDrop
	resReject
)

func (tr *tracer) isLocal(a netip.Addr) bool {
	if tr.family.loopback().Contains(a) {
		return true
	}
	return slices.Contains(tr.cfg.LocalAddrs, a)
}

func (tr *tracer) hookChains(hook string) []*Chain {
	var out []*Chain
	for _, c := range tr.t.chains {
		if c.Base != nil && c.Base.Hook == hook {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *Chain) int {
		return cmp.Or(cmp.Compare(a.Base.Priority, b.Base.Priority), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func (tr *tracer) outcome(res int) Outcome {
	o := Outcome{Verdict: "accept", DNAT: tr.dnat, Masquerade: tr.masq, Chains: tr.chains}
	switch res {
	case resDrop:
		o.Verdict = "drop"
	case resReject:
		o.Verdict = "reject"
	}
	return o
}

func (tr *tracer) run(pkt Packet) (Outcome, error) {
	tr.pkt = pkt
	// hooks runs the base chains of the hooks in order; natDone skips nat
	// chains (a connection is NATed once).
	hooks := func(natDone bool, names ...string) (int, error) {
		for _, h := range names {
			for _, c := range tr.hookChains(h) {
				if natDone && c.Base.Type == "nat" {
					continue
				}
				res, err := tr.runBase(c)
				if err != nil {
					return 0, err
				}
				if res == resDrop || res == resReject {
					return res, nil
				}
			}
		}
		return resAccept, nil
	}
	var res int
	var err error
	if pkt.FromNode {
		if res, err = hooks(false, "output"); err != nil || res != resAccept {
			return tr.outcome(res), err
		}
		if tr.isLocal(tr.pkt.Dst) {
			// Delivered over loopback: input runs too (nat already done).
			res, err = hooks(true, "postrouting", "input")
		} else {
			res, err = hooks(false, "postrouting")
		}
		return tr.outcome(res), err
	}
	if res, err = hooks(false, "prerouting"); err != nil || res != resAccept {
		return tr.outcome(res), err
	}
	if tr.isLocal(tr.pkt.Dst) {
		res, err = hooks(false, "input")
	} else {
		res, err = hooks(false, "forward", "postrouting")
	}
	return tr.outcome(res), err
}

// runBase evaluates a base chain; the result is accept, drop or reject.
func (tr *tracer) runBase(c *Chain) (int, error) {
	res, _, err := tr.runChain(c, 0)
	if err != nil {
		return 0, err
	}
	if res == resNone {
		return resAccept, nil // policy accept
	}
	return res, nil
}

// runChain evaluates c's rules. It returns a final result (accept, drop,
// reject) or resNone when the chain ran off its end or returned.
func (tr *tracer) runChain(c *Chain, depth int) (int, bool, error) {
	if depth > 16 {
		return 0, false, fmt.Errorf("trace: jump depth exceeded at %s", c.Name)
	}
	tr.chains = append(tr.chains, c.Name)
	for _, r := range c.Rules {
		tr.steps++
		if tr.steps > 100000 {
			return 0, false, fmt.Errorf("trace: too many steps")
		}
		res, next, err := tr.runRule(r, depth)
		if err != nil {
			return 0, false, err
		}
		if next != nil { // goto
			return tr.runChain(next, depth)
		}
		if res == resReturn {
			return resNone, true, nil
		}
		if res != resNone {
			return res, false, nil
		}
	}
	return resNone, false, nil
}

const resReturn = 100

// runRule evaluates one rule: resNone to go on with the next rule, a final
// result, resReturn, or a chain to go to.
func (tr *tracer) runRule(r Rule, depth int) (int, *Chain, error) {
	for _, e := range r.Exprs {
		switch x := e.(type) {
		case MatchAddr:
			a := tr.pkt.Dst
			if x.Src {
				a = tr.pkt.Src
			}
			if x.Prefix.Contains(a) == x.Not {
				return resNone, nil, nil
			}
		case MatchDport:
			if tr.pkt.Proto != x.Proto || tr.pkt.Dport != x.Port {
				return resNone, nil, nil
			}
		case MatchFibLocal:
			a := tr.pkt.Dst
			if x.Src {
				a = tr.pkt.Src
			}
			if !tr.isLocal(a) {
				return resNone, nil, nil
			}
		case MatchCtNew:
			// Trace follows first packets only.
		case MatchCtDNAT:
			if !tr.dnat.IsValid() {
				return resNone, nil, nil
			}
		case MatchMarkClear:
			if tr.mark&x.Bits != 0 {
				return resNone, nil, nil
			}
		case MatchSet:
			if _, ok := tr.t.sets[x.Set].elems[tr.key(x.Fields)]; !ok {
				return resNone, nil, nil
			}
		case SetMark:
			if x.Xor {
				tr.mark ^= x.Bits
			} else {
				tr.mark |= x.Bits
			}
		case VMap:
			el, ok := tr.t.sets[x.Map].elems[tr.key(x.Fields)]
			if !ok {
				return resNone, nil, nil
			}
			return tr.verdict(el.Verdict, depth)
		case *Verdict:
			return tr.verdict(x, depth)
		case Reject:
			return resReject, nil, nil
		case Masquerade:
			tr.masq = true
			return resAccept, nil, nil
		case DNATRandom:
			if tr.pkt.Proto != x.Proto {
				return resNone, nil, nil
			}
			el, ok := tr.t.sets[x.Map].elems[IntVal(x.Offset+tr.pick(x.Mod)).String()]
			if !ok {
				return resNone, nil, nil
			}
			tr.doDNAT(el.Value)
			return resAccept, nil, nil
		case MatchNumgen:
			if tr.pick(x.Mod) != x.Value {
				return resNone, nil, nil
			}
		case UpdateSaddr:
			if tr.record {
				k := []Val{AddrVal(tr.pkt.Src)}
				tr.t.sets[x.Set].elems[valsString(k)] = Element{Key: k}
			}
		case DNATTo:
			if tr.pkt.Proto != x.Proto {
				return resNone, nil, nil
			}
			tr.doDNAT([]Val{AddrVal(x.Endpoint.Addr()), PortVal(x.Endpoint.Port())})
			return resAccept, nil, nil
		default:
			return 0, nil, fmt.Errorf("trace: unknown expression %T", e)
		}
	}
	return resNone, nil, nil
}

func (tr *tracer) doDNAT(v []Val) {
	tr.dnat = netip.AddrPortFrom(v[0].Addr, uint16(v[1].Num))
	tr.pkt.Dst = v[0].Addr
	tr.pkt.Dport = uint16(v[1].Num)
}

func (tr *tracer) verdict(v *Verdict, depth int) (int, *Chain, error) {
	switch v.Kind {
	case VerdictAccept:
		return resAccept, nil, nil
	case VerdictDrop:
		return resDrop, nil, nil
	case VerdictReturn:
		return resReturn, nil, nil
	case VerdictGoto:
		return resNone, tr.t.chains[v.Chain], nil
	case VerdictJump:
		res, _, err := tr.runChain(tr.t.chains[v.Chain], depth+1)
		return res, nil, err
	}
	return 0, nil, fmt.Errorf("trace: bad verdict %v", v)
}

func (tr *tracer) key(fields []KeyField) string {
	parts := make([]string, len(fields))
	for i, k := range fields {
		switch k {
		case FieldSaddr:
			parts[i] = tr.pkt.Src.String()
		case FieldDaddr:
			parts[i] = tr.pkt.Dst.String()
		case FieldL4Proto:
			parts[i] = tr.pkt.Proto.String()
		case FieldDport:
			parts[i] = fmt.Sprint(tr.pkt.Dport)
		}
	}
	return strings.Join(parts, " . ")
}
