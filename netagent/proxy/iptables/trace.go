package iptables

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
)

var _ proxy.RuleTracer = (*Backend)(nil)

// TraceRules reads the nat table back (iptables-save, on demand only:
// never from the sync loop) and returns the rules a new connection to dst
// meets, in order (see TraceSave). When no nat rule DNATs it, the packet
// reaches the filter table with dst unchanged: then the filter rules that
// match it (the REJECT of a Service without endpoints, of a port no
// Service has) follow.
func (b *Backend) TraceRules(ctx context.Context, dst netip.AddrPort, protocol string) ([]api.TraceRule, error) {
	read := func(table string) ([]api.TraceRule, error) {
		save, err := b.ex.Run(ctx, nil, b.mode.tool("iptables-save"), "-t", table)
		if err != nil {
			return nil, fmt.Errorf("iptables: trace: read the %s table: %w", table, err)
		}
		return TraceSave(save, table, dst, protocol)
	}
	out, err := read("nat")
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		if r.Endpoint != "" {
			return out, nil // DNATed: the filter chains see the endpoint, not dst
		}
	}
	filter, err := read("filter")
	if err != nil {
		return nil, err
	}
	return append(out, filter...), nil
}

// savedRule is one -A line of iptables-save.
type savedRule struct {
	chain, text string
	dst         netip.Prefix
	negDst      bool
	proto       string
	dport       int
	dstLocal    bool    // -m addrtype --dst-type LOCAL
	srcCond     bool    // a -s match (the source is not known to the trace)
	prob        float64 // --probability
	target      string
	toDest      string // --to-destination
}

// TraceSave walks one table of iptables-save output the way a new
// connection to dst (protocol TCP or UDP) goes through kube-proxy's layout
// from KUBE-SERVICES (and KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES):
//
//   - in a chain, every rule whose destination, protocol and port match is
//     recorded; rules that test the source are recorded and walked but do
//     not end the chain (the trace does not know the source);
//   - a --probability rule is recorded with its probability, and its
//     target is walked; the walk goes on with the next rule;
//   - a jump to a KUBE-* chain other than KUBE-MARK-MASQ is walked; an
//     unconditional one ends the chain (every service chain ends in a
//     DNAT or a REJECT);
//   - a rule reached with -m addrtype --dst-type LOCAL (the NodePort jump)
//     is walked only when nothing before it ended the chain;
//   - a DNAT records its --to-destination as Endpoint; a jump to a
//     KUBE-SEP chain gets the Endpoint of the DNAT it leads to, and
//     probability 1 when it has no --probability (the last choice).
func TraceSave(save []byte, table string, dst netip.AddrPort, protocol string) ([]api.TraceRule, error) {
	chains := map[string][]savedRule{}
	sc := bufio.NewScanner(bytes.NewReader(save))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "-A ") {
			continue
		}
		r, err := parseSaved(line)
		if err != nil {
			return nil, fmt.Errorf("iptables: trace: %w", err)
		}
		chains[r.chain] = append(chains[r.chain], r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("iptables: trace: %w", err)
	}
	w := &walker{table: table, chains: chains, dst: dst, proto: strings.ToLower(protocol), seen: map[string]bool{}}
	for _, start := range []string{chainServices, chainExternalServices} {
		if _, ok := chains[start]; ok {
			w.walk(start)
		}
	}
	return w.out, nil
}

type walker struct {
	table  string
	chains map[string][]savedRule
	dst    netip.AddrPort
	proto  string
	seen   map[string]bool
	out    []api.TraceRule
}

// walk records the matching rules of chain and returns the endpoint a
// DNAT in it (or below it) sends to, when there is exactly one path.
func (w *walker) walk(chain string) string {
	if w.seen[chain] {
		return ""
	}
	w.seen[chain] = true
	endpoint := ""
	for _, r := range w.chains[chain] {
		if !w.matches(r) {
			continue
		}
		i := len(w.out)
		w.out = append(w.out, api.TraceRule{Table: w.table, Chain: chain, Text: r.text, Probability: r.prob})
		switch {
		case r.target == "DNAT":
			w.out[i].Endpoint = r.toDest
			return r.toDest
		case r.target == "RETURN", r.target == "REJECT", r.target == "DROP", r.target == "ACCEPT":
			return ""
		case r.target == chainMarkMasq || !strings.HasPrefix(r.target, "KUBE-"):
			continue
		}
		ep := w.walk(r.target)
		if r.dstLocal && len(w.out) == i+1 {
			w.out = w.out[:i] // the NodePort jump, and no NodePort matched
			continue
		}
		if strings.HasPrefix(r.target, prefixSEP) {
			w.out[i].Endpoint = ep
			if r.prob == 0 {
				w.out[i].Probability = 1 // the last choice: taken whenever reached
			}
		}
		if r.prob == 0 && !r.srcCond && !r.dstLocal {
			if endpoint == "" {
				endpoint = ep
			}
			return endpoint
		}
	}
	return endpoint
}

func (w *walker) matches(r savedRule) bool {
	if r.proto != "" && r.proto != w.proto {
		return false
	}
	if r.dport != 0 && r.dport != int(w.dst.Port()) {
		return false
	}
	if r.dst.IsValid() && r.dst.Contains(w.dst.Addr()) == r.negDst {
		return false
	}
	return true
}

func parseSaved(line string) (savedRule, error) {
	f, err := splitQuoted(line)
	if err != nil {
		return savedRule{}, err
	}
	r := savedRule{chain: f[1], text: line}
	neg := false
	for i := 2; i < len(f); i++ {
		arg := func() string {
			if i+1 < len(f) {
				i++
				return f[i]
			}
			return ""
		}
		switch f[i] {
		case "!":
			neg = true
			continue
		case "-d", "--destination":
			v := arg()
			p, err := netip.ParsePrefix(v)
			if err != nil {
				a, aerr := netip.ParseAddr(v)
				if aerr != nil {
					return savedRule{}, fmt.Errorf("rule %q: -d %q", line, v)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			r.dst, r.negDst = p, neg
		case "-s", "--source":
			arg()
			r.srcCond = true
		case "-p", "--protocol":
			r.proto = strings.ToLower(arg())
		case "--dport":
			n, err := strconv.Atoi(arg())
			if err != nil {
				return savedRule{}, fmt.Errorf("rule %q: --dport: %w", line, err)
			}
			r.dport = n
		case "--dst-type":
			if arg() == "LOCAL" && !neg {
				r.dstLocal = true
			}
		case "--probability":
			p, err := strconv.ParseFloat(arg(), 64)
			if err != nil {
				return savedRule{}, fmt.Errorf("rule %q: --probability: %w", line, err)
			}
			r.prob = p
		case "-j", "--jump", "-g", "--goto":
			r.target = arg()
		case "--to-destination":
			r.toDest = arg()
		case "--comment", "-m", "--mode", "--mark", "--or-mark", "--set-xmark", "--name", "--seconds", "--mask", "--rsource", "-i", "-o", "--reject-with", "--ctstate", "--src-type":
			arg()
		}
		neg = false
	}
	return r, nil
}

// splitQuoted splits an iptables-save line on spaces, keeping "quoted
// strings" (with \" escapes) whole.
func splitQuoted(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case in && c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == '"':
			in, have = !in, true
		case c == ' ' && !in:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if in {
		return nil, fmt.Errorf("unbalanced quote in %q", line)
	}
	if have {
		out = append(out, cur.String())
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("short rule %q", line)
	}
	return out, nil
}
