// Package iptablestest is a stateful, validating fake of the iptables
// tools for tests of netagent/proxy/iptables, and a packet tracer over its
// rules.
//
// # The fake
//
// Fake implements iptables.Exec for iptables-restore, iptables-save and
// iptables (-S, -D, --version), in nft or legacy naming. iptables-restore
// input is parsed into tables, chains and rules, and each table block is
// applied as one transaction on top of the previous state, as
// iptables-nft does: a block that fails leaves its table unchanged (the
// blocks before it stay committed) and the command fails with the line.
// It rejects what the kernel or the tools would: a rule in a chain that
// does not exist, a jump to a chain that does not exist (at that point of
// the transaction), an unknown match, target or option, -D of a rule that
// is not there, -X of a chain that is built in, not empty or still
// referenced, a jump loop, a DNAT or MASQUERADE outside the nat table, a
// REJECT outside the filter table, and a block without COMMIT.
//
// # The tracer
//
// Trace walks a new connection's first packet through the nat and filter
// hooks and returns every possible outcome with its probability: a
// "statistic --mode random" rule splits the walk in two branches.
// Postrouting runs only nat POSTROUTING with a given mark, for a packet
// another hook rewrote (the ipvs mode's tracer, ipvstest.Tracer).
package iptablestest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
)

// builtinChains of each table, in iptables-save order.
var builtinChains = map[string][]string{
	"filter": {"INPUT", "FORWARD", "OUTPUT"},
	"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
	"mangle": {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
	"raw":    {"PREROUTING", "OUTPUT"},
}

// Table is one table's chains.
type Table struct {
	Name   string
	Chains map[string]*Chain
}

// Chain is one chain and its rules.
type Chain struct {
	Name    string
	Builtin bool
	Policy  string
	Rules   []*Rule
}

func newTable(name string) *Table {
	t := &Table{Name: name, Chains: map[string]*Chain{}}
	for _, c := range builtinChains[name] {
		t.Chains[c] = &Chain{Name: c, Builtin: true, Policy: "ACCEPT"}
	}
	return t
}

func (t *Table) clone() *Table {
	c := &Table{Name: t.Name, Chains: make(map[string]*Chain, len(t.Chains))}
	for n, ch := range t.Chains {
		cc := *ch
		cc.Rules = slices.Clone(ch.Rules)
		c.Chains[n] = &cc
	}
	return c
}

// chainOrder: built-in chains first, then the others sorted.
func (t *Table) chainOrder() []string {
	out := slices.Clone(builtinChains[t.Name])
	var user []string
	for n, c := range t.Chains {
		if !c.Builtin {
			user = append(user, n)
		}
	}
	slices.Sort(user)
	return append(out, user...)
}

// referenced reports whether a rule in t jumps to chain.
func (t *Table) referenced(chain string) bool {
	for _, c := range t.Chains {
		for _, r := range c.Rules {
			if r.Target == chain {
				return true
			}
		}
	}
	return false
}

// Fake is a stateful iptables. The zero value is not usable; use New.
type Fake struct {
	mode iptables.Mode

	mu     sync.Mutex
	tables map[string]*Table
	// Restores: every restore input received, in order.
	restores [][]byte
	// commands: every command run, as "name args...".
	commands []string
	// failNext: the next restore fails with this error (once).
	failNext error
}

var _ iptables.Exec = (*Fake)(nil)

// New returns an empty fake of the given mode (names its binaries and
// its --version output).
func New(mode iptables.Mode) *Fake {
	f := &Fake{mode: mode, tables: map[string]*Table{}}
	for name := range builtinChains {
		f.tables[name] = newTable(name)
	}
	return f
}

// FailNextRestore makes the next iptables-restore fail with err, changing
// nothing.
func (f *Fake) FailNextRestore(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = err
}

// Restores returns the restore inputs received so far.
func (f *Fake) Restores() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.restores)
}

// Commands returns the commands run so far.
func (f *Fake) Commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.commands)
}

// Table returns a copy of one table.
func (f *Fake) Table(name string) *Table {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.tables[name]; t != nil {
		return t.clone()
	}
	return nil
}

// Run implements iptables.Exec.
func (f *Fake) Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = append(f.commands, strings.TrimSpace(name+" "+strings.Join(args, " ")))
	base := path.Base(name)
	tool, mode := base, ""
	for _, m := range []string{"-nft", "-legacy"} {
		if i := strings.Index(base, m); i >= 0 {
			tool = base[:i] + base[i+len(m):]
			mode = m[1:]
		}
	}
	if mode != "" && mode != string(f.mode) {
		return nil, &iptables.ExitError{Command: name, Code: 127, Stderr: "fake: no " + mode + " tables here"}
	}
	fail := func(code int, format string, a ...any) ([]byte, error) {
		return nil, &iptables.ExitError{Command: name, Code: code, Stderr: fmt.Sprintf(format, a...)}
	}
	switch tool {
	case "iptables-restore":
		if slices.Contains(args, "--version") {
			return []byte(f.version("iptables-restore")), nil
		}
		noflush := false
		for _, a := range args {
			switch a {
			case "--noflush", "-n":
				noflush = true
			case "-w", "--wait":
			default:
				return fail(2, "fake iptables-restore: unsupported argument %q", a)
			}
		}
		f.restores = append(f.restores, slices.Clone(stdin))
		if err := f.failNext; err != nil {
			f.failNext = nil
			return fail(1, "%v", err)
		}
		if err := f.restore(stdin, noflush); err != nil {
			return fail(1, "%v", err)
		}
		return nil, nil
	case "iptables-save":
		table := ""
		for i := 0; i < len(args); i++ {
			if args[i] == "-t" && i+1 < len(args) {
				table = args[i+1]
				i++
			}
		}
		return f.save(table), nil
	case "iptables":
		return f.command(name, args)
	}
	return fail(127, "fake: unknown command %s", name)
}

func (f *Fake) version(tool string) string {
	kind := "nf_tables"
	if f.mode == iptables.ModeLegacy {
		kind = "legacy"
	}
	return tool + " v1.8.9 (" + kind + ")\n"
}

// command handles `iptables [-w] [-t table] -S|-D|-C|-A|-I chain ...`.
func (f *Fake) command(name string, args []string) ([]byte, error) {
	fail := func(code int, format string, a ...any) ([]byte, error) {
		return nil, &iptables.ExitError{Command: name, Code: code, Stderr: fmt.Sprintf(format, a...)}
	}
	table := "filter"
	var rest []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-w", "--wait":
		case "--version":
			return []byte(f.version("iptables")), nil
		case "-t":
			if i+1 >= len(args) {
				return fail(2, "-t needs a table")
			}
			table = args[i+1]
			i++
		default:
			rest = append(rest, args[i])
		}
	}
	t := f.tables[table]
	if t == nil {
		return fail(2, "table %q does not exist", table)
	}
	if len(rest) < 2 {
		return fail(2, "fake iptables: unsupported command %v", rest)
	}
	op, chain := rest[0], rest[1]
	c := t.Chains[chain]
	if c == nil {
		return fail(1, "iptables: No chain/target/match by that name.")
	}
	switch op {
	case "-S":
		var b bytes.Buffer
		if c.Builtin {
			fmt.Fprintf(&b, "-P %s %s\n", chain, c.Policy)
		} else {
			fmt.Fprintf(&b, "-N %s\n", chain)
		}
		for _, r := range c.Rules {
			b.WriteString(r.String())
			b.WriteByte('\n')
		}
		return b.Bytes(), nil
	case "-D", "-C", "-A", "-I":
		r, err := ParseRule(chain, rest[2:])
		if err != nil {
			return fail(2, "%v", err)
		}
		if r.Target != "" && !isBuiltinTarget(r.Target) && t.Chains[r.Target] == nil {
			// As the real tools: a jump to a missing chain is a usage
			// error (2), for -C and -D too, not "no such rule" (1).
			return fail(2, "iptables v1.8.9 (%s): Chain '%s' does not exist", f.mode, r.Target)
		}
		next := t.clone()
		if err := applyRule(next, op, r, 0); err != nil {
			if op == "-C" || op == "-D" {
				return fail(1, "iptables: Bad rule (does a matching rule exist in that chain?).")
			}
			return fail(1, "%v", err)
		}
		if op != "-C" {
			f.tables[table] = next
		}
		return nil, nil
	}
	return fail(2, "fake iptables: unsupported command %s", op)
}

// save prints one table, or all, as iptables-save does.
func (f *Fake) save(only string) []byte {
	var b bytes.Buffer
	names := []string{"raw", "mangle", "filter", "nat"}
	for _, name := range names {
		if only != "" && name != only {
			continue
		}
		t := f.tables[name]
		fmt.Fprintf(&b, "*%s\n", name)
		order := t.chainOrder()
		for _, cn := range order {
			c := t.Chains[cn]
			pol := "-"
			if c.Builtin {
				pol = c.Policy
			}
			fmt.Fprintf(&b, ":%s %s [0:0]\n", cn, pol)
		}
		for _, cn := range order {
			for _, r := range t.Chains[cn].Rules {
				b.WriteString(r.String())
				b.WriteByte('\n')
			}
		}
		b.WriteString("COMMIT\n")
	}
	return b.Bytes()
}

// Save is the iptables-save output of one table ("" for all).
func (f *Fake) Save(table string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return string(f.save(table))
}

// restore applies an iptables-restore input, table block by table block.
func (f *Fake) restore(input []byte, noflush bool) error {
	sc := bufio.NewScanner(bytes.NewReader(input))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	var (
		cur      *Table
		curName  string
		startRow int
	)
	row := 0
	for sc.Scan() {
		row++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		errAt := func(err error) error { return fmt.Errorf("line %d: %s: %w", row, line, err) }
		switch {
		case strings.HasPrefix(line, "*"):
			if cur != nil {
				return errAt(fmt.Errorf("table %s (line %d) has no COMMIT", curName, startRow))
			}
			curName = line[1:]
			base := f.tables[curName]
			if base == nil {
				return errAt(fmt.Errorf("unknown table"))
			}
			if noflush {
				cur = base.clone()
			} else {
				cur = newTable(curName)
			}
			startRow = row
		case line == "COMMIT":
			if cur == nil {
				return errAt(fmt.Errorf("COMMIT outside a table"))
			}
			if err := checkLoops(cur); err != nil {
				return errAt(err)
			}
			f.tables[curName] = cur
			cur = nil
		case cur == nil:
			return errAt(fmt.Errorf("outside a table"))
		case strings.HasPrefix(line, ":"):
			fields := strings.Fields(line[1:])
			if len(fields) < 2 {
				return errAt(fmt.Errorf("bad chain line"))
			}
			name, policy := fields[0], fields[1]
			if c := cur.Chains[name]; c != nil && c.Builtin {
				if policy == "-" {
					return errAt(fmt.Errorf("built-in chain needs a policy"))
				}
				c.Policy = policy
				continue
			}
			if policy != "-" {
				return errAt(fmt.Errorf("user chain %s with policy %s", name, policy))
			}
			if len(name) > 28 {
				return errAt(fmt.Errorf("chain name %q is longer than 28 characters", name))
			}
			if c := cur.Chains[name]; c != nil {
				c.Rules = nil // flush
			} else {
				cur.Chains[name] = &Chain{Name: name}
			}
		default:
			toks, err := Tokenize(line)
			if err != nil {
				return errAt(err)
			}
			if err := applyLine(cur, toks); err != nil {
				return errAt(err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if cur != nil {
		return fmt.Errorf("table %s (line %d) has no COMMIT", curName, startRow)
	}
	return nil
}

// applyLine applies one command line of a restore block.
func applyLine(t *Table, toks []string) error {
	if len(toks) < 2 {
		return fmt.Errorf("incomplete command")
	}
	op, chain := toks[0], toks[1]
	switch op {
	case "-A", "-D", "-I":
		args := toks[2:]
		pos := 0
		if op == "-I" && len(args) > 0 {
			if n, err := strconv.Atoi(args[0]); err == nil {
				pos = n
				args = args[1:]
			}
		}
		if op == "-D" && len(args) == 1 {
			if n, err := strconv.Atoi(args[0]); err == nil {
				c := t.Chains[chain]
				if c == nil || n < 1 || n > len(c.Rules) {
					return fmt.Errorf("no rule %d in chain %s", n, chain)
				}
				c.Rules = slices.Delete(c.Rules, n-1, n)
				return nil
			}
		}
		r, err := ParseRule(chain, args)
		if err != nil {
			return err
		}
		return applyRule(t, op, r, pos)
	case "-N":
		if t.Chains[chain] != nil {
			return fmt.Errorf("chain %s already exists", chain)
		}
		t.Chains[chain] = &Chain{Name: chain}
		return nil
	case "-F":
		c := t.Chains[chain]
		if c == nil {
			return fmt.Errorf("chain %s does not exist", chain)
		}
		c.Rules = nil
		return nil
	case "-X":
		c := t.Chains[chain]
		switch {
		case c == nil:
			return fmt.Errorf("chain %s does not exist", chain)
		case c.Builtin:
			return fmt.Errorf("cannot delete built-in chain %s", chain)
		case len(c.Rules) > 0:
			return fmt.Errorf("chain %s is not empty", chain)
		case t.referenced(chain):
			return fmt.Errorf("chain %s is still referenced", chain)
		}
		delete(t.Chains, chain)
		return nil
	}
	return fmt.Errorf("unsupported command %s", op)
}

// applyRule adds, inserts, deletes or checks r in t.
func applyRule(t *Table, op string, r *Rule, pos int) error {
	c := t.Chains[r.Chain]
	if c == nil {
		return fmt.Errorf("chain %s does not exist", r.Chain)
	}
	if r.Target != "" && !isBuiltinTarget(r.Target) {
		if t.Chains[r.Target] == nil {
			return fmt.Errorf("chain '%s' does not exist (jump target)", r.Target)
		}
		if t.Chains[r.Target].Builtin {
			return fmt.Errorf("cannot jump to built-in chain %s", r.Target)
		}
	}
	switch r.Target {
	case "DNAT", "MASQUERADE":
		if t.Name != "nat" {
			return fmt.Errorf("%s is only valid in the nat table", r.Target)
		}
	case "REJECT":
		if t.Name != "filter" {
			return fmt.Errorf("REJECT is only valid in the filter table")
		}
	}
	spec := r.Spec()
	switch op {
	case "-A":
		c.Rules = append(c.Rules, r)
	case "-I":
		if pos == 0 {
			pos = 1
		}
		if pos < 1 || pos > len(c.Rules)+1 {
			return fmt.Errorf("index of insertion too big")
		}
		c.Rules = slices.Insert(c.Rules, pos-1, r)
	case "-D", "-C":
		for i, x := range c.Rules {
			if x.Spec() == spec {
				if op == "-D" {
					c.Rules = slices.Delete(c.Rules, i, i+1)
				}
				return nil
			}
		}
		return fmt.Errorf("no rule %q in chain %s", spec, r.Chain)
	}
	return nil
}

// checkLoops rejects a jump cycle among user chains.
func checkLoops(t *Table) error {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(string) error
	visit = func(name string) error {
		switch state[name] {
		case active:
			return fmt.Errorf("loop through chain %s", name)
		case done:
			return nil
		}
		state[name] = active
		for _, r := range t.Chains[name].Rules {
			if r.Target != "" && !isBuiltinTarget(r.Target) {
				if err := visit(r.Target); err != nil {
					return err
				}
			}
		}
		state[name] = done
		return nil
	}
	for name := range t.Chains {
		if err := visit(name); err != nil {
			return err
		}
	}
	return nil
}
