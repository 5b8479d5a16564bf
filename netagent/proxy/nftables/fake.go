package nftables

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Fake is a stateful, validating Kernel for tests. It applies transactions
// to an in-memory ruleset the way the kernel does (all or nothing) and
// rejects what the kernel would reject: a rule or element referring to a
// missing chain or set, an element for a missing set or of the wrong shape,
// deleting a chain or set that is still referred to, a duplicate key with
// another value, deleting a missing element, a jump loop, and NAT or reject
// statements reachable from a hook where they are not allowed.
type Fake struct {
	mu     sync.Mutex
	tables map[fakeTableKey]*fakeTable
	// Transactions is every transaction Run accepted, in order.
	Transactions []*Transaction
	// FailNext, when set, makes the next Run fail with it (and is cleared).
	FailNext error
}

type fakeTableKey struct {
	family Family
	name   string
}

type fakeTable struct {
	chains map[string]*Chain
	sets   map[string]*fakeSet
}

type fakeSet struct {
	spec  *Set
	elems map[string]Element
}

// NewFake returns an empty Fake.
func NewFake() *Fake { return &Fake{tables: map[fakeTableKey]*fakeTable{}} }

var _ Kernel = (*Fake)(nil)

func (t *fakeTable) clone() *fakeTable {
	c := &fakeTable{chains: make(map[string]*Chain, len(t.chains)), sets: make(map[string]*fakeSet, len(t.sets))}
	for n, ch := range t.chains {
		cc := *ch
		cc.Rules = slices.Clone(ch.Rules)
		c.chains[n] = &cc
	}
	for n, s := range t.sets {
		c.sets[n] = &fakeSet{spec: s.spec, elems: maps.Clone(s.elems)}
	}
	return c
}

// Run applies tx atomically.
func (f *Fake) Run(_ context.Context, tx *Transaction) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.FailNext; err != nil {
		f.FailNext = nil
		return err
	}
	key := fakeTableKey{tx.Family, tx.Table}
	var t *fakeTable
	if cur := f.tables[key]; cur != nil {
		t = cur.clone()
	}
	for i, op := range tx.Ops {
		var err error
		t, err = applyOp(t, op)
		if err != nil {
			return fmt.Errorf("fake nftables: op %d (%s): %w", i, op.opString(tx.Family, tx.Table), err)
		}
	}
	if t != nil {
		if err := validateTable(tx.Family, t); err != nil {
			return fmt.Errorf("fake nftables: %w", err)
		}
		f.tables[key] = t
	} else {
		delete(f.tables, key)
	}
	f.Transactions = append(f.Transactions, tx)
	return nil
}

// Errors the Fake returns (wrapped), like the kernel's errnos.
var (
	ErrFakeNotFound = errors.New("no such file or directory")
	ErrFakeExists   = errors.New("file exists")
	ErrFakeBusy     = errors.New("device or resource busy")
	ErrFakeInvalid  = errors.New("invalid argument")
	ErrFakeLoop     = errors.New("too many levels of symbolic links")
	ErrFakeHook     = errors.New("operation not supported")
)

func applyOp(t *fakeTable, op Op) (*fakeTable, error) {
	if _, ok := op.(AddTable); ok {
		if t == nil {
			t = &fakeTable{chains: map[string]*Chain{}, sets: map[string]*fakeSet{}}
		}
		return t, nil
	}
	if t == nil {
		return nil, fmt.Errorf("table: %w", ErrFakeNotFound)
	}
	switch o := op.(type) {
	case DeleteTable:
		return nil, nil
	case AddChain:
		if cur := t.chains[o.Chain.Name]; cur != nil {
			if (cur.Base == nil) != (o.Chain.Base == nil) || (cur.Base != nil && *cur.Base != *o.Chain.Base) {
				return t, fmt.Errorf("chain %s exists with another hook: %w", o.Chain.Name, ErrFakeExists)
			}
			return t, nil
		}
		if o.Chain.Name == "" || len(o.Chain.Name) > nameLengthMax {
			return t, fmt.Errorf("chain name %q: %w", o.Chain.Name, ErrFakeInvalid)
		}
		t.chains[o.Chain.Name] = &Chain{Name: o.Chain.Name, Base: o.Chain.Base}
	case FlushChain:
		c := t.chains[o.Name]
		if c == nil {
			return t, fmt.Errorf("chain %s: %w", o.Name, ErrFakeNotFound)
		}
		c.Rules = nil
	case DeleteChain:
		c := t.chains[o.Name]
		if c == nil {
			return t, fmt.Errorf("chain %s: %w", o.Name, ErrFakeNotFound)
		}
		if len(c.Rules) > 0 {
			return t, fmt.Errorf("chain %s has rules: %w", o.Name, ErrFakeBusy)
		}
		if by := t.chainUsers(o.Name); by != "" {
			return t, fmt.Errorf("chain %s is used by %s: %w", o.Name, by, ErrFakeBusy)
		}
		delete(t.chains, o.Name)
	case AddRule:
		c := t.chains[o.Chain]
		if c == nil {
			return t, fmt.Errorf("chain %s: %w", o.Chain, ErrFakeNotFound)
		}
		if err := t.checkRule(o.Rule); err != nil {
			return t, err
		}
		c.Rules = append(c.Rules, o.Rule)
	case AddSet:
		if cur := t.sets[o.Set.Name]; cur != nil {
			if !cur.spec.sameSpec(o.Set) {
				return t, fmt.Errorf("set %s exists with another spec: %w", o.Set.Name, ErrFakeExists)
			}
			return t, nil
		}
		if o.Set.Name == "" || len(o.Set.Name) > nameLengthMax || len(o.Set.Key) == 0 {
			return t, fmt.Errorf("set %q: %w", o.Set.Name, ErrFakeInvalid)
		}
		t.sets[o.Set.Name] = &fakeSet{spec: o.Set, elems: map[string]Element{}}
	case FlushSet:
		s := t.sets[o.Set.Name]
		if s == nil {
			return t, fmt.Errorf("set %s: %w", o.Set.Name, ErrFakeNotFound)
		}
		s.elems = map[string]Element{}
	case DeleteSet:
		if t.sets[o.Set.Name] == nil {
			return t, fmt.Errorf("set %s: %w", o.Set.Name, ErrFakeNotFound)
		}
		if by := t.setUsers(o.Set.Name); by != "" {
			return t, fmt.Errorf("set %s is used by %s: %w", o.Set.Name, by, ErrFakeBusy)
		}
		delete(t.sets, o.Set.Name)
	case AddElements:
		s := t.sets[o.Set.Name]
		if s == nil {
			return t, fmt.Errorf("set %s: %w", o.Set.Name, ErrFakeNotFound)
		}
		for _, e := range o.Elements {
			if err := t.checkElement(s.spec, e); err != nil {
				return t, err
			}
			k := e.KeyString()
			if cur, ok := s.elems[k]; ok && !cur.sameValue(e) {
				return t, fmt.Errorf("element %s of %s: %w", k, o.Set.Name, ErrFakeExists)
			}
			s.elems[k] = e
		}
	case DeleteElements:
		s := t.sets[o.Set.Name]
		if s == nil {
			return t, fmt.Errorf("set %s: %w", o.Set.Name, ErrFakeNotFound)
		}
		for _, e := range o.Elements {
			k := e.KeyString()
			if _, ok := s.elems[k]; !ok {
				return t, fmt.Errorf("element %s of %s: %w", k, o.Set.Name, ErrFakeNotFound)
			}
			delete(s.elems, k)
		}
	default:
		return t, fmt.Errorf("unknown op %T: %w", op, ErrFakeInvalid)
	}
	return t, nil
}

func (t *fakeTable) checkRule(r Rule) error {
	if len(r.Exprs) == 0 {
		return fmt.Errorf("empty rule: %w", ErrFakeInvalid)
	}
	for i, e := range r.Exprs {
		if v, ok := e.(*Verdict); ok && i != len(r.Exprs)-1 {
			return fmt.Errorf("verdict %s is not last: %w", v, ErrFakeInvalid)
		}
		chains, sets := exprRefs(e)
		for _, c := range chains {
			if err := t.checkJumpTarget(c); err != nil {
				return err
			}
		}
		for _, s := range sets {
			if t.sets[s] == nil {
				return fmt.Errorf("rule refers to set %s: %w", s, ErrFakeNotFound)
			}
		}
		switch x := e.(type) {
		case VMap:
			s := t.sets[x.Map].spec
			if len(s.Value) != 1 || s.Value[0] != TypeVerdict || len(s.Key) != len(x.Fields) {
				return fmt.Errorf("vmap @%s is not a verdict map keyed like %v: %w", x.Map, x.Fields, ErrFakeInvalid)
			}
		case MatchSet:
			if len(t.sets[x.Set].spec.Key) != len(x.Fields) {
				return fmt.Errorf("lookup @%s with %d fields: %w", x.Set, len(x.Fields), ErrFakeInvalid)
			}
		case DNATRandom:
			if err := checkEndpointMap(t.sets[x.Map].spec); err != nil {
				return err
			}
			if x.Mod == 0 {
				return fmt.Errorf("numgen mod 0: %w", ErrFakeInvalid)
			}
		case UpdateSaddr:
			if t.sets[x.Set].spec.Timeout <= 0 || len(t.sets[x.Set].spec.Key) != 1 {
				return fmt.Errorf("update @%s: not a dynamic set of addresses: %w", x.Set, ErrFakeInvalid)
			}
		case MatchNumgen:
			if x.Mod == 0 || x.Value >= x.Mod {
				return fmt.Errorf("numgen mod %d == %d: %w", x.Mod, x.Value, ErrFakeInvalid)
			}
		}
	}
	return nil
}

func checkEndpointMap(s *Set) error {
	if len(s.Key) != 1 || s.Key[0] != TypeInteger || len(s.Value) != 2 || s.Value[1] != TypeInetService {
		return fmt.Errorf("@%s is not an endpoint map: %w", s.Name, ErrFakeInvalid)
	}
	return nil
}

func (t *fakeTable) checkJumpTarget(name string) error {
	c := t.chains[name]
	if c == nil {
		return fmt.Errorf("jump to chain %s: %w", name, ErrFakeNotFound)
	}
	if c.Base != nil {
		return fmt.Errorf("jump to base chain %s: %w", name, ErrFakeInvalid)
	}
	return nil
}

func (t *fakeTable) checkElement(s *Set, e Element) error {
	if len(e.Key) != len(s.Key) {
		return fmt.Errorf("element %s has %d key fields, set %s has %d: %w", e, len(e.Key), s.Name, len(s.Key), ErrFakeInvalid)
	}
	for i, v := range e.Key {
		if v.Type != s.Key[i] {
			return fmt.Errorf("element %s: key field %d is %s, set %s wants %s: %w", e, i, v.Type, s.Name, s.Key[i], ErrFakeInvalid)
		}
	}
	switch {
	case !s.IsMap():
		if e.Verdict != nil || len(e.Value) > 0 {
			return fmt.Errorf("element %s has a value in set %s: %w", e, s.Name, ErrFakeInvalid)
		}
	case s.Value[0] == TypeVerdict:
		if e.Verdict == nil {
			return fmt.Errorf("element %s has no verdict for vmap %s: %w", e, s.Name, ErrFakeInvalid)
		}
		if e.Verdict.Kind == VerdictJump || e.Verdict.Kind == VerdictGoto {
			if err := t.checkJumpTarget(e.Verdict.Chain); err != nil {
				return fmt.Errorf("element %s of %s: %w", e, s.Name, err)
			}
		}
	default:
		if len(e.Value) != len(s.Value) {
			return fmt.Errorf("element %s: value has %d fields, map %s wants %d: %w", e, len(e.Value), s.Name, len(s.Value), ErrFakeInvalid)
		}
		for i, v := range e.Value {
			if v.Type != s.Value[i] {
				return fmt.Errorf("element %s: value field %d is %s, map %s wants %s: %w", e, i, v.Type, s.Name, s.Value[i], ErrFakeInvalid)
			}
		}
	}
	return nil
}

// chainUsers names a rule or element that refers to the chain ("" if none).
func (t *fakeTable) chainUsers(name string) string {
	for _, c := range t.chains {
		for _, r := range c.Rules {
			for _, e := range r.Exprs {
				chains, _ := exprRefs(e)
				if slices.Contains(chains, name) {
					return "a rule of chain " + c.Name
				}
			}
		}
	}
	for _, s := range t.sets {
		for _, e := range s.elems {
			if e.Verdict != nil && e.Verdict.Chain == name {
				return "element " + e.KeyString() + " of " + s.spec.Name
			}
		}
	}
	return ""
}

func (t *fakeTable) setUsers(name string) string {
	for _, c := range t.chains {
		for _, r := range c.Rules {
			for _, e := range r.Exprs {
				_, sets := exprRefs(e)
				if slices.Contains(sets, name) {
					return "a rule of chain " + c.Name
				}
			}
		}
	}
	return ""
}

// validateTable walks every base chain as the kernel does at commit: no
// jump loops, and statements only where their hook allows them.
func validateTable(f Family, t *fakeTable) error {
	for _, c := range t.chains {
		if c.Base == nil {
			continue
		}
		if err := t.validateChain(c, c.Base, 0); err != nil {
			return fmt.Errorf("from base chain %s: %w", c.Name, err)
		}
	}
	return nil
}

func (t *fakeTable) validateChain(c *Chain, base *BaseChain, depth int) error {
	if depth > 16 {
		return fmt.Errorf("chain %s: %w", c.Name, ErrFakeLoop)
	}
	for _, r := range c.Rules {
		for _, e := range r.Exprs {
			switch e.(type) {
			case DNATRandom, DNATTo:
				if base.Type != "nat" || (base.Hook != "prerouting" && base.Hook != "output") {
					return fmt.Errorf("dnat in chain %s reached from a %s %s chain: %w", c.Name, base.Type, base.Hook, ErrFakeHook)
				}
			case Masquerade:
				if base.Type != "nat" || base.Hook != "postrouting" {
					return fmt.Errorf("masquerade in chain %s reached from a %s %s chain: %w", c.Name, base.Type, base.Hook, ErrFakeHook)
				}
			case Reject:
				// Linux >= 5.9 allows reject in prerouting too.
				if base.Hook == "postrouting" {
					return fmt.Errorf("reject in chain %s reached from hook %s: %w", c.Name, base.Hook, ErrFakeHook)
				}
			}
			var targets []string
			switch x := e.(type) {
			case *Verdict:
				if x.Kind == VerdictJump || x.Kind == VerdictGoto {
					targets = append(targets, x.Chain)
				}
			case VMap:
				for _, el := range t.sets[x.Map].elems {
					if el.Verdict != nil && (el.Verdict.Kind == VerdictJump || el.Verdict.Kind == VerdictGoto) {
						targets = append(targets, el.Verdict.Chain)
					}
				}
			}
			for _, name := range targets {
				if err := t.validateChain(t.chains[name], base, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// List returns the chains and sets of a table.
func (f *Fake) List(_ context.Context, family Family, table string) ([]string, []SetInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tables[fakeTableKey{family, table}]
	if t == nil {
		return nil, nil, ErrNoTable
	}
	chains := slices.Sorted(maps.Keys(t.chains))
	var sets []SetInfo
	for _, n := range slices.Sorted(maps.Keys(t.sets)) {
		sets = append(sets, SetInfo{Name: n, Set: t.sets[n].spec})
	}
	return chains, sets, nil
}

// HasTable reports whether the table exists.
func (f *Fake) HasTable(family Family, table string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tables[fakeTableKey{family, table}] != nil
}

// Chain returns a copy of a chain's rules rendered in nft syntax (nil if
// the chain does not exist).
func (f *Fake) Chain(family Family, table, chain string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tables[fakeTableKey{family, table}]
	if t == nil || t.chains[chain] == nil {
		return nil
	}
	out := []string{}
	for _, r := range t.chains[chain].Rules {
		out = append(out, r.Render(family))
	}
	return out
}

// Elements returns a set's elements rendered ("key : value"), sorted; nil
// if the set does not exist.
func (f *Fake) Elements(family Family, table, set string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tables[fakeTableKey{family, table}]
	if t == nil || t.sets[set] == nil {
		return nil
	}
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(t.sets[set].elems)) {
		out = append(out, t.sets[set].elems[k].String())
	}
	return out
}

// Dump renders a table like `nft list table`, with chains and sets sorted
// by name ("" if the table does not exist).
func (f *Fake) Dump(family Family, table string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tables[fakeTableKey{family, table}]
	if t == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table %s %s {\n", family, table)
	for _, n := range slices.Sorted(maps.Keys(t.sets)) {
		s := t.sets[n]
		fmt.Fprintf(&b, "\t%s %s %s\n", s.spec.kind(), n, s.spec.spec(family))
		for _, k := range slices.Sorted(maps.Keys(s.elems)) {
			fmt.Fprintf(&b, "\t\t%s\n", s.elems[k])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(t.chains)) {
		c := t.chains[n]
		fmt.Fprintf(&b, "\tchain %s {\n", n)
		if c.Base != nil {
			fmt.Fprintf(&b, "\t\ttype %s hook %s priority %d ;\n", c.Base.Type, c.Base.Hook, c.Base.Priority)
		}
		for _, r := range c.Rules {
			fmt.Fprintf(&b, "\t\t%s\n", r.Render(family))
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// ChainRules is Netlink.ChainRules on the fake: the chain's rules
// rendered, or ErrNoTable.
func (f *Fake) ChainRules(_ context.Context, family Family, table, chain string) ([]string, error) {
	rules := f.Chain(family, table, chain)
	if rules == nil {
		return nil, ErrNoTable
	}
	return rules, nil
}
