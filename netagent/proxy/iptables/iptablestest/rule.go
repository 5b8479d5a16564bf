package iptablestest

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one parsed rule. Every option the backend uses is understood;
// anything else is an error, so a typo in generated rules fails a test.
type Rule struct {
	Chain string
	// IP header matches (printed first, as iptables-save does).
	Src, Dst       netip.Prefix
	NotSrc, NotDst bool
	Proto          string
	NotProto       bool
	// Matches, in the order given.
	Matches []Match
	// Target and its options; Target is "" for a rule without -j.
	Target     string
	TargetOpts []Opt
}

// Match is one -m module with its options.
type Match struct {
	Module string
	Opts   []Opt
}

// Opt is one option: --name value (Value "" for a flag), maybe negated.
type Opt struct {
	Name  string
	Value string
	Not   bool
}

// Get returns the value of option name ("" when absent) and whether it
// was given.
func (m Match) Get(name string) (string, bool) {
	for _, o := range m.Opts {
		if o.Name == name {
			return o.Value, true
		}
	}
	return "", false
}

func (r *Rule) targetOpt(name string) string {
	for _, o := range r.TargetOpts {
		if o.Name == name {
			return o.Value
		}
	}
	return ""
}

// moduleOpts: for each match module, its options and whether each takes a
// value.
var moduleOpts = map[string]map[string]bool{
	"tcp":       {"--dport": true, "--sport": true},
	"udp":       {"--dport": true, "--sport": true},
	"comment":   {"--comment": true},
	"statistic": {"--mode": true, "--probability": true},
	"addrtype":  {"--dst-type": true, "--src-type": true},
	"recent":    {"--name": true, "--rcheck": false, "--set": false, "--seconds": true, "--reap": false},
	"mark":      {"--mark": true},
	"conntrack": {"--ctstate": true},
}

// targetOpts: for each target, its options (all take a value except
// --random-fully).
var targetOpts = map[string]map[string]bool{
	"ACCEPT":     {},
	"DROP":       {},
	"RETURN":     {},
	"REJECT":     {"--reject-with": true},
	"DNAT":       {"--to-destination": true},
	"MASQUERADE": {"--random-fully": false},
	"MARK":       {"--or-mark": true, "--xor-mark": true, "--set-xmark": true},
}

// isBuiltinTarget reports whether t is a target, not a chain.
func isBuiltinTarget(t string) bool {
	_, ok := targetOpts[t]
	return ok
}

// ParseRule parses the arguments of "-A chain ..." (after the chain).
func ParseRule(chain string, args []string) (*Rule, error) {
	r := &Rule{Chain: chain}
	var cur *Match
	not := false
	next := func(i *int, opt string) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("option %s needs a value", opt)
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "!" {
			if not {
				return nil, fmt.Errorf("double negation")
			}
			not = true
			continue
		}
		switch a {
		case "-s", "--source", "-d", "--destination":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			p, err := parsePrefix(v)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", a, v, err)
			}
			if a == "-s" || a == "--source" {
				r.Src, r.NotSrc = p, not
			} else {
				r.Dst, r.NotDst = p, not
			}
			not = false
			cur = nil
			continue
		case "-p", "--protocol":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			if v != "tcp" && v != "udp" && v != "icmp" && v != "sctp" {
				return nil, fmt.Errorf("unknown protocol %q", v)
			}
			r.Proto, r.NotProto = v, not
			not = false
			cur = nil
			continue
		case "-m", "--match":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			if not {
				return nil, fmt.Errorf("! before -m")
			}
			if _, ok := moduleOpts[v]; !ok {
				return nil, fmt.Errorf("unknown match %q", v)
			}
			r.Matches = append(r.Matches, Match{Module: v})
			cur = &r.Matches[len(r.Matches)-1]
			continue
		case "-j", "--jump":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			if not {
				return nil, fmt.Errorf("! before -j")
			}
			r.Target = v
			opts, known := targetOpts[v]
			for i+1 < len(args) {
				o := args[i+1]
				if !strings.HasPrefix(o, "--") {
					return nil, fmt.Errorf("unexpected %q after -j %s", o, v)
				}
				if !known {
					return nil, fmt.Errorf("chain target %s takes no option %s", v, o)
				}
				takes, ok := opts[o]
				if !ok {
					return nil, fmt.Errorf("target %s has no option %s", v, o)
				}
				i++
				opt := Opt{Name: o}
				if takes {
					val, err := next(&i, o)
					if err != nil {
						return nil, err
					}
					opt.Value = val
				}
				r.TargetOpts = append(r.TargetOpts, opt)
			}
			continue
		}
		if !strings.HasPrefix(a, "--") {
			return nil, fmt.Errorf("unexpected argument %q", a)
		}
		// A module option: of the current -m, or --dport/--sport after
		// -p tcp|udp (iptables loads the protocol match implicitly).
		if cur == nil || !hasOpt(cur.Module, a) {
			cur = nil
			for j := len(r.Matches) - 1; j >= 0; j-- {
				if hasOpt(r.Matches[j].Module, a) {
					cur = &r.Matches[j]
					break
				}
			}
		}
		if cur == nil {
			if (a == "--dport" || a == "--sport") && (r.Proto == "tcp" || r.Proto == "udp") {
				r.Matches = append(r.Matches, Match{Module: r.Proto})
				cur = &r.Matches[len(r.Matches)-1]
			} else {
				return nil, fmt.Errorf("unknown option %q", a)
			}
		}
		o := Opt{Name: a, Not: not}
		not = false
		if moduleOpts[cur.Module][a] {
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			o.Value = v
		}
		cur.Opts = append(cur.Opts, o)
	}
	if not {
		return nil, fmt.Errorf("a dangling ! negates nothing")
	}
	return r, r.validate()
}

func hasOpt(module, opt string) bool {
	_, ok := moduleOpts[module][opt]
	return ok
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return p, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// validate checks what iptables would refuse.
func (r *Rule) validate() error {
	for _, m := range r.Matches {
		switch m.Module {
		case "tcp", "udp":
			if r.Proto != m.Module || r.NotProto {
				return fmt.Errorf("match %s needs -p %s", m.Module, m.Module)
			}
			for _, o := range m.Opts {
				if n, err := strconv.Atoi(o.Value); err != nil || n < 0 || n > 65535 {
					return fmt.Errorf("%s: bad port %q", o.Name, o.Value)
				}
			}
		case "comment":
			if v, _ := m.Get("--comment"); len(v) > 256 {
				return fmt.Errorf("comment longer than 256 characters")
			}
		case "statistic":
			if mode, _ := m.Get("--mode"); mode != "random" {
				return fmt.Errorf("statistic: only --mode random is supported")
			}
			p, ok := m.Get("--probability")
			f, err := strconv.ParseFloat(p, 64)
			if !ok || err != nil || f < 0 || f > 1 {
				return fmt.Errorf("statistic: bad --probability %q", p)
			}
		case "addrtype":
			for _, o := range m.Opts {
				if o.Value != "LOCAL" {
					return fmt.Errorf("addrtype: only LOCAL is supported, got %q", o.Value)
				}
			}
		case "recent":
			_, rcheck := m.Get("--rcheck")
			_, set := m.Get("--set")
			name, _ := m.Get("--name")
			if rcheck == set || name == "" {
				return fmt.Errorf("recent: need --name and exactly one of --rcheck, --set")
			}
			if _, ok := m.Get("--reap"); ok {
				if _, ok := m.Get("--seconds"); !ok {
					return fmt.Errorf("recent: --reap needs --seconds")
				}
			}
		case "mark":
			if _, _, err := parseMark(firstValue(m, "--mark")); err != nil {
				return err
			}
		case "conntrack":
			for _, st := range strings.Split(firstValue(m, "--ctstate"), ",") {
				switch st {
				case "NEW", "ESTABLISHED", "RELATED", "INVALID", "DNAT", "SNAT":
				default:
					return fmt.Errorf("conntrack: unknown state %q", st)
				}
			}
		}
	}
	switch r.Target {
	case "DNAT":
		if _, err := netip.ParseAddrPort(r.targetOpt("--to-destination")); err != nil {
			return fmt.Errorf("DNAT: bad --to-destination %q", r.targetOpt("--to-destination"))
		}
		if r.Proto == "" {
			return fmt.Errorf("DNAT to a port needs -p tcp|udp")
		}
	case "MARK":
		if len(r.TargetOpts) != 1 {
			return fmt.Errorf("MARK needs exactly one of --or-mark, --xor-mark, --set-xmark")
		}
		if _, _, err := parseMark(r.TargetOpts[0].Value); err != nil {
			return err
		}
	case "REJECT":
		if w := r.targetOpt("--reject-with"); w != "" && w != "icmp-port-unreachable" && w != "icmp-host-unreachable" && w != "tcp-reset" {
			return fmt.Errorf("REJECT: unknown --reject-with %q", w)
		}
	}
	return nil
}

func firstValue(m Match, name string) string {
	v, _ := m.Get(name)
	return v
}

// parseMark parses "value[/mask]".
func parseMark(s string) (value, mask uint32, err error) {
	v, m, hasMask := strings.Cut(s, "/")
	vv, err := strconv.ParseUint(v, 0, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("bad mark %q", s)
	}
	mask = 0xffffffff
	if hasMask {
		mm, err := strconv.ParseUint(m, 0, 32)
		if err != nil {
			return 0, 0, fmt.Errorf("bad mark mask %q", s)
		}
		mask = uint32(mm)
	}
	return uint32(vv), mask, nil
}

// String prints the rule as iptables-save does: "-A chain", the address
// and protocol matches, the -m matches in order, the target.
func (r *Rule) String() string {
	return "-A " + r.Chain + " " + r.Spec()
}

// Spec is String without "-A chain ".
func (r *Rule) Spec() string {
	var parts []string
	neg := func(n bool) {
		if n {
			parts = append(parts, "!")
		}
	}
	if r.Src.IsValid() {
		neg(r.NotSrc)
		parts = append(parts, "-s", r.Src.String())
	}
	if r.Dst.IsValid() {
		neg(r.NotDst)
		parts = append(parts, "-d", r.Dst.String())
	}
	if r.Proto != "" {
		neg(r.NotProto)
		parts = append(parts, "-p", r.Proto)
	}
	for _, m := range r.Matches {
		parts = append(parts, "-m", m.Module)
		for _, o := range m.Opts {
			neg(o.Not)
			parts = append(parts, o.Name)
			if moduleOpts[m.Module][o.Name] {
				if o.Name == "--comment" {
					parts = append(parts, saveString(o.Value))
				} else {
					parts = append(parts, o.Value)
				}
			}
		}
	}
	if r.Target != "" {
		parts = append(parts, "-j", r.Target)
		for _, o := range r.TargetOpts {
			parts = append(parts, o.Name)
			if o.Value != "" {
				parts = append(parts, o.Value)
			}
		}
	}
	return strings.Join(parts, " ")
}

// saveString quotes a value as iptables-save does (xtables_save_string):
// bare when it is only letters, digits, '_' and '-', else in double quotes
// with '"' and '\' escaped.
func saveString(s string) string {
	bare := s != ""
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			bare = false
			break
		}
	}
	if bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte('"')
	return b.String()
}

// Tokenize splits a restore line into arguments as iptables-restore does:
// whitespace separates, double quotes group, backslash escapes inside
// quotes.
func Tokenize(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == '"':
			inQuote = !inQuote
			have = true
		case !inQuote && (c == ' ' || c == '\t'):
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
	if inQuote {
		return nil, fmt.Errorf("unterminated quote")
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}
