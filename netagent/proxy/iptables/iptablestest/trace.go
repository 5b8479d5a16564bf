package iptablestest

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Packet is the first packet of a new connection.
type Packet struct {
	Src, Dst     netip.Addr
	Proto        string // "tcp" or "udp"
	SPort, DPort uint16
	// Local: sent by a process of the node (OUTPUT path); else it arrives
	// on an interface (PREROUTING path), from a pod or from outside.
	Local bool
}

// Env is the node the packet meets.
type Env struct {
	// LocalAddrs are the node's addresses (addrtype LOCAL); 127.0.0.0/8
	// is always local.
	LocalAddrs []netip.Addr
	// Recent holds the "-m recent" lists: name -> source addresses.
	Recent map[string][]netip.Addr
}

func (e Env) local(a netip.Addr) bool {
	return a.IsLoopback() || slices.Contains(e.LocalAddrs, a)
}

// Outcome is one way the packet can go, with its probability.
type Outcome struct {
	Prob float64
	// Verdict: ACCEPT, DROP or REJECT.
	Verdict string
	// Dst is where the packet goes after NAT; DNAT says it was rewritten.
	Dst  netip.AddrPort
	DNAT bool
	// Masquerade: its source is rewritten on the way out.
	Masquerade bool
	// Delivered: "local" (INPUT) or "forward", "" when dropped.
	Delivered string
	Mark      uint32
	// RoutedMark is the mark at the routing decision, after the first
	// nat hook (what a hook between it and POSTROUTING, such as IPVS's,
	// hands on).
	RoutedMark uint32
	// RecentSet: the recent lists it was added to (--set).
	RecentSet []string
	// Path: the chains and rules it went through.
	Path []string
}

// Endpoint returns Dst as "ip:port".
func (o Outcome) Endpoint() string { return o.Dst.String() }

// walk is one branch being traced.
type walk struct {
	prob       float64
	dst        netip.Addr
	dport      uint16
	dnat       bool
	masq       bool
	mark       uint32
	recentSet  []string
	path       []string
	hooks      []hook
	stack      []frame
	verdict    string
	delivered  string
	steps      int
	routedOnce bool
	routedMark uint32
}

type hook struct{ table, chain string }

type frame struct {
	chain string
	next  int
}

func (w *walk) clone() *walk {
	c := *w
	c.recentSet = slices.Clone(w.recentSet)
	c.path = slices.Clone(w.path)
	c.hooks = slices.Clone(w.hooks)
	c.stack = slices.Clone(w.stack)
	return &c
}

// Trace returns every outcome of p through the nat and filter hooks, with
// probabilities (they sum to 1). The first nat hook (PREROUTING or OUTPUT)
// may rewrite the destination; the routing decision after it picks INPUT
// for a local destination, else FORWARD and POSTROUTING.
func (f *Fake) Trace(env Env, p Packet) ([]Outcome, error) {
	first := &walk{prob: 1, dst: p.Dst, dport: p.DPort}
	if p.Local {
		first.hooks = []hook{{"nat", "OUTPUT"}, {"filter", "OUTPUT"}}
	} else {
		first.hooks = []hook{{"nat", "PREROUTING"}}
	}
	return f.trace(env, p, first)
}

// Postrouting traces p through the nat POSTROUTING hook only, carrying
// the packet mark mark: a packet that another part of the kernel (IPVS)
// rewrote and sent out after the hooks Trace follows. It tells whether
// the packet is masqueraded.
func (f *Fake) Postrouting(env Env, p Packet, mark uint32) ([]Outcome, error) {
	first := &walk{prob: 1, dst: p.Dst, dport: p.DPort, mark: mark, routedOnce: true,
		hooks: []hook{{"nat", "POSTROUTING"}}, delivered: "forward"}
	return f.trace(env, p, first)
}

func (f *Fake) trace(env Env, p Packet, first *walk) ([]Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Outcome
	work := []*walk{first}
	for len(work) > 0 {
		w := work[len(work)-1]
		work = work[:len(work)-1]
		forks, err := f.run(env, p, w)
		if err != nil {
			return nil, err
		}
		work = append(work, forks...)
		if w.verdict != "" {
			if w.verdict != "ACCEPT" {
				w.delivered = ""
			}
			out = append(out, Outcome{
				Prob: w.prob, Verdict: w.verdict, Dst: netip.AddrPortFrom(w.dst, w.dport), DNAT: w.dnat,
				Masquerade: w.masq, Delivered: w.delivered, Mark: w.mark, RoutedMark: w.routedMark, RecentSet: w.recentSet, Path: w.path,
			})
		}
	}
	return out, nil
}

// run advances w until it ends; a statistic rule forks it, and the forks
// are returned to be run too.
func (f *Fake) run(env Env, p Packet, w *walk) ([]*walk, error) {
	var forks []*walk
	for {
		if w.steps++; w.steps > 100000 {
			return nil, fmt.Errorf("trace: too many steps (a loop?)")
		}
		if len(w.stack) == 0 {
			if len(w.hooks) == 0 {
				w.verdict = "ACCEPT"
				return forks, nil
			}
			h := w.hooks[0]
			w.hooks = w.hooks[1:]
			w.path = append(w.path, h.table+"/"+h.chain)
			w.stack = []frame{{chain: h.table + "/" + h.chain}}
		}
		top := &w.stack[len(w.stack)-1]
		table, chainName, _ := strings.Cut(top.chain, "/")
		t := f.tables[table]
		c := t.Chains[chainName]
		if c == nil {
			return nil, fmt.Errorf("trace: chain %s/%s does not exist", table, chainName)
		}
		if top.next >= len(c.Rules) {
			// End of chain: return, or the built-in chain's policy.
			w.stack = w.stack[:len(w.stack)-1]
			if len(w.stack) == 0 {
				if c.Policy != "ACCEPT" {
					w.verdict = c.Policy
					return forks, nil
				}
				f.endHook(env, w, table, chainName)
			}
			continue
		}
		r := c.Rules[top.next]
		top.next++
		matched, fork, err := match(env, p, w, r)
		if err != nil {
			return nil, err
		}
		if fork != nil {
			forks = append(forks, fork)
		}
		if !matched {
			continue
		}
		w.path = append(w.path, r.String())
		for _, m := range r.Matches {
			if m.Module == "recent" {
				if _, ok := m.Get("--set"); ok {
					name, _ := m.Get("--name")
					w.recentSet = append(w.recentSet, name)
				}
			}
		}
		switch r.Target {
		case "":
			// A rule without a target only counts.
		case "ACCEPT":
			w.stack = nil
			f.endHook(env, w, table, chainName)
		case "DROP", "REJECT":
			w.verdict = r.Target
			return forks, nil
		case "RETURN":
			w.stack = w.stack[:len(w.stack)-1]
			if len(w.stack) == 0 {
				f.endHook(env, w, table, chainName)
			}
		case "DNAT":
			ap, _ := netip.ParseAddrPort(r.targetOpt("--to-destination"))
			w.dst, w.dport, w.dnat = ap.Addr(), ap.Port(), true
			w.stack = nil
			f.endHook(env, w, table, "")
		case "MASQUERADE":
			w.masq = true
			w.stack = nil
			f.endHook(env, w, table, "")
		case "MARK":
			o := r.TargetOpts[0]
			v, m, _ := parseMark(o.Value)
			switch o.Name {
			case "--or-mark":
				w.mark |= v
			case "--xor-mark":
				w.mark ^= v
			case "--set-xmark":
				w.mark = (w.mark &^ m) ^ v
			}
		default:
			w.stack = append(w.stack, frame{chain: table + "/" + r.Target})
		}
	}
}

// endHook is called when a hook is done with the packet; after the first
// nat hook it adds the hooks the routing decision leads to.
func (f *Fake) endHook(env Env, w *walk, table, _ string) {
	w.stack = nil
	if w.routedOnce || table != "nat" {
		return
	}
	w.routedOnce = true
	w.routedMark = w.mark
	localDst := env.local(w.dst)
	switch {
	case len(w.hooks) == 0 && !localDst: // arrived, to forward
		w.hooks = []hook{{"filter", "FORWARD"}, {"nat", "POSTROUTING"}}
		w.delivered = "forward"
	case len(w.hooks) == 0: // arrived, for this node
		w.hooks = []hook{{"filter", "INPUT"}}
		w.delivered = "local"
	case localDst: // sent locally to this node (nat OUTPUT done)
		w.hooks = append(w.hooks, hook{"nat", "POSTROUTING"}, hook{"filter", "INPUT"})
		w.delivered = "local"
	default: // sent locally, out
		w.hooks = append(w.hooks, hook{"nat", "POSTROUTING"})
		w.delivered = "forward"
	}
}

// match evaluates r's matches; a statistic match returns both branches:
// w continues as "matched" and fork as "not matched" (or the reverse when
// the probability is 0 or 1).
func match(env Env, p Packet, w *walk, r *Rule) (bool, *walk, error) {
	pfx := func(pr netip.Prefix, a netip.Addr, not bool) bool { return pr.Contains(a) != not }
	if r.Src.IsValid() && !pfx(r.Src, p.Src, r.NotSrc) {
		return false, nil, nil
	}
	if r.Dst.IsValid() && !pfx(r.Dst, w.dst, r.NotDst) {
		return false, nil, nil
	}
	if r.Proto != "" && (r.Proto == p.Proto) == r.NotProto {
		return false, nil, nil
	}
	var fork *walk
	for _, m := range r.Matches {
		ok := true
		for _, o := range m.Opts {
			var res bool
			switch m.Module + " " + o.Name {
			case "tcp --dport", "udp --dport":
				n, _ := strconv.Atoi(o.Value)
				res = uint16(n) == w.dport
			case "tcp --sport", "udp --sport":
				n, _ := strconv.Atoi(o.Value)
				res = uint16(n) == p.SPort
			case "comment --comment", "statistic --mode":
				res = true
			case "statistic --probability":
				prob, _ := strconv.ParseFloat(o.Value, 64)
				switch {
				case prob <= 0:
					res = false
				case prob >= 1:
					res = true
				default:
					fork = w.clone()
					fork.prob *= 1 - prob
					w.prob *= prob
					res = true
				}
			case "addrtype --dst-type":
				res = env.local(w.dst)
			case "addrtype --src-type":
				res = env.local(p.Src)
			case "recent --name", "recent --seconds", "recent --reap":
				res = true
			case "recent --rcheck":
				name, _ := m.Get("--name")
				res = slices.Contains(env.Recent[name], p.Src)
			case "recent --set":
				res = true
			case "mark --mark":
				v, mask, _ := parseMark(o.Value)
				res = w.mark&mask == v
			case "conntrack --ctstate":
				res = false
				for _, st := range strings.Split(o.Value, ",") {
					if st == "NEW" || (st == "DNAT" && w.dnat) {
						res = true
					}
				}
			default:
				return false, nil, fmt.Errorf("trace: cannot evaluate %s %s", m.Module, o.Name)
			}
			if res == o.Not {
				ok = false
			}
		}
		if !ok {
			if fork != nil {
				// A later match failed: neither branch matches.
				w.prob += fork.prob
				fork = nil
			}
			return false, nil, nil
		}
	}
	if fork != nil {
		return true, fork, nil
	}
	return true, nil, nil
}
