package nftables

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// Config configures a Proxier.
type Config struct {
	// Kernel applies transactions: NewNetlink for real, NewFake in tests.
	Kernel Kernel
	// Logger; slog.Default() when nil.
	Logger *slog.Logger
}

// Proxier is the nftables proxy.Backend.
type Proxier struct {
	kernel Kernel
	log    *slog.Logger

	mu       sync.Mutex
	tables   map[Family]*tableState // as of the last successful sync
	needFull bool
}

var _ proxy.Backend = (*Proxier)(nil)

// New returns a Proxier. Its first Sync is always full.
func New(cfg Config) (*Proxier, error) {
	if cfg.Kernel == nil {
		return nil, errors.New("nftables: Config.Kernel is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Proxier{kernel: cfg.Kernel, log: log, tables: map[Family]*tableState{}, needFull: true}, nil
}

// Name is "nftables".
func (p *Proxier) Name() string { return "nftables" }

// tableState is what the last successful sync wrote into one table.
type tableState struct {
	g       globalConfig
	frags   map[proxy.ServicePortName]*fragment
	hairpin map[netip.Addr]int // endpoint address -> fragments using it
	owner   map[string]proxy.ServicePortName
	slots   *slotAlloc
}

func ownerKey(set, key string) string { return set + "\x00" + key }

// Sync programs st. changed lists the Service ports that changed since the
// last successful sync (nil: full sync). A partial sync rewrites only the
// chains and elements of those ports; a full sync rewrites the whole table
// in one transaction (without deleting it first, so that no packet ever
// sees an empty table, and keeping the affinity maps).
func (p *Proxier) Sync(ctx context.Context, st *proxy.State, changed []proxy.ServicePortName) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	full := changed == nil || p.needFull
	var errs []error
	for _, f := range []Family{IPv4, IPv6} {
		g := newGlobalConfig(f, st)
		ts := p.tables[f]
		var err error
		switch {
		case f == IPv6 && !needsIPv6(st):
			if ts != nil || full {
				err = p.removeTable(ctx, f)
			}
		case full || ts == nil || !ts.g.equal(g):
			err = p.syncFull(ctx, st, g)
		default:
			err = p.syncPartial(ctx, st, ts, changed)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		p.needFull = true
		return errors.Join(errs...)
	}
	p.needFull = false
	return nil
}

func needsIPv6(st *proxy.State) bool {
	for _, sp := range st.Services {
		for _, ip := range sp.ClusterIPs {
			if ip.Is6() && !ip.Is4In6() {
				return true
			}
		}
	}
	return false
}

func (p *Proxier) removeTable(ctx context.Context, f Family) error {
	if _, _, err := p.kernel.List(ctx, f, TableName); errors.Is(err, ErrNoTable) {
		delete(p.tables, f)
		return nil
	} else if err != nil {
		return fmt.Errorf("nftables: list %s table: %w", f, err)
	}
	if err := p.kernel.Run(ctx, &Transaction{Family: f, Table: TableName, Ops: []Op{DeleteTable{}}}); err != nil {
		return fmt.Errorf("nftables: delete %s table: %w", f, err)
	}
	delete(p.tables, f)
	return nil
}

// Cleanup deletes Skiff's tables.
func (p *Proxier) Cleanup(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, f := range []Family{IPv4, IPv6} {
		if err := p.removeTable(ctx, f); err != nil {
			errs = append(errs, err)
		}
	}
	p.needFull = true
	return errors.Join(errs...)
}

func (p *Proxier) syncFull(ctx context.Context, st *proxy.State, g globalConfig) error {
	f := g.family
	oldChains, oldSets, err := p.kernel.List(ctx, f, TableName)
	if err != nil && !errors.Is(err, ErrNoTable) {
		return fmt.Errorf("nftables: full sync: list %s table: %w", f, err)
	}
	ts := &tableState{g: g, frags: map[proxy.ServicePortName]*fragment{}, hairpin: map[netip.Addr]int{},
		owner: map[string]proxy.ServicePortName{}, slots: &slotAlloc{}}
	b := newBuilder(g, ts.slots)

	chains := baseChains(g)
	sets := sharedSets(f)
	elems := map[string][]Element{}
	// Sorted, so that transactions are deterministic.
	for _, name := range slices.SortedFunc(maps.Keys(st.Services), proxy.ServicePortName.Compare) {
		fr := b.fragment(st.Services[name], st.Endpoints[name], nil)
		if fr == nil {
			continue
		}
		ts.frags[name] = fr
		chains = append(chains, fr.chains...)
		sets = append(sets, fr.sets...)
		for _, setName := range slices.Sorted(maps.Keys(fr.elems)) {
			for _, e := range fr.elems[setName] {
				k := ownerKey(setName, e.KeyString())
				if other, taken := ts.owner[k]; taken {
					p.log.Warn("nftables: two Service ports claim one map key; keeping the first",
						"set", setName, "key", e.KeyString(), "kept", other.String(), "dropped", name.String())
					continue
				}
				ts.owner[k] = name
				elems[setName] = append(elems[setName], e)
			}
		}
		for a := range fr.addrs {
			ts.hairpin[a]++
		}
	}
	var hairpin []Element
	for _, a := range slices.SortedFunc(maps.Keys(ts.hairpin), netip.Addr.Compare) {
		hairpin = append(hairpin, Element{Key: []Val{AddrVal(a), AddrVal(a)}})
	}
	elems[hairpinSet] = hairpin

	wantChain := map[string]bool{}
	for _, c := range chains {
		wantChain[c.Name] = true
	}
	wantSet := map[string]*Set{}
	for _, s := range sets {
		wantSet[s.Name] = s
	}

	tx := &Transaction{Family: f, Table: TableName, Ops: []Op{AddTable{}}}
	// 1. No rule refers to anything any more.
	for _, c := range oldChains {
		tx.Ops = append(tx.Ops, FlushChain{Name: c})
	}
	// 2. No element refers to a chain any more; sets we keep are emptied,
	// except the affinity sets (clients stay with their endpoints).
	for _, s := range oldSets {
		want := wantSet[s.Name]
		switch {
		case want == nil || (want.Timeout > 0 && s.Set != nil && s.Set.Timeout != want.Timeout):
			tx.Ops = append(tx.Ops, DeleteSet{Set: s.Set})
		case want.Timeout > 0:
		default:
			tx.Ops = append(tx.Ops, FlushSet{Set: want})
		}
	}
	for _, c := range oldChains {
		if !wantChain[c] {
			tx.Ops = append(tx.Ops, DeleteChain{Name: c})
		}
	}
	// 3. Everything we want (what exists already is only flushed above).
	haveChain := map[string]bool{}
	for _, c := range oldChains {
		haveChain[c] = true
	}
	kept := map[string]bool{}
	for _, op := range tx.Ops {
		if fs, ok := op.(FlushSet); ok {
			kept[fs.Set.Name] = true
		}
	}
	for _, s := range oldSets {
		if want := wantSet[s.Name]; want != nil && want.Timeout > 0 && s.Set != nil && s.Set.Timeout == want.Timeout {
			kept[s.Name] = true
		}
	}
	for _, s := range sets {
		if !kept[s.Name] {
			tx.Ops = append(tx.Ops, AddSet{Set: s})
		}
	}
	for _, c := range chains {
		if !haveChain[c.Name] {
			tx.Ops = append(tx.Ops, AddChain{Chain: c})
		}
	}
	for _, c := range chains {
		for _, r := range c.Rules {
			tx.Ops = append(tx.Ops, AddRule{Chain: c.Name, Rule: r})
		}
	}
	for _, s := range sets {
		if es := elems[s.Name]; len(es) > 0 {
			tx.Ops = append(tx.Ops, AddElements{Set: s, Elements: es})
		}
	}
	if err := p.kernel.Run(ctx, tx); err != nil {
		return fmt.Errorf("nftables: full sync of %s table: %w", f, err)
	}
	p.tables[f] = ts
	return nil
}

// phases collects a partial sync's operations in an order the kernel
// accepts: objects are created before anything refers to them, and
// references are gone before objects are deleted.
type phases struct {
	addSets, addChains, flushChains, replaceSets, addRules, delElems, addElems, delChains, delSets []Op
}

func (ph *phases) ops() []Op {
	var out []Op
	for _, l := range [][]Op{ph.addSets, ph.addChains, ph.flushChains, ph.replaceSets, ph.addRules, ph.delElems, ph.addElems, ph.delChains, ph.delSets} {
		out = append(out, l...)
	}
	return out
}

func (p *Proxier) syncPartial(ctx context.Context, st *proxy.State, ts *tableState, changed []proxy.ServicePortName) error {
	f := ts.g.family
	b := newBuilder(ts.g, ts.slots)
	var ph phases
	newFrags := map[proxy.ServicePortName]*fragment{}
	seen := map[proxy.ServicePortName]bool{}
	var names []proxy.ServicePortName
	for _, n := range changed {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	slices.SortFunc(names, proxy.ServicePortName.Compare)

	// Element changes, by set and key, across all changed ports.
	type elemChange struct {
		set      *Set
		old, new *Element
		owner    proxy.ServicePortName
	}
	changes := map[string]*elemChange{}
	hairpinDelta := map[netip.Addr]int{}

	for _, name := range names {
		old := ts.frags[name]
		var nf *fragment
		if sp := st.Services[name]; sp != nil {
			nf = b.fragment(sp, st.Endpoints[name], old)
		}
		newFrags[name] = nf
		diffFragment(f, old, nf, &ph)
		if old != nil {
			for setName, es := range old.elems {
				for i := range es {
					k := ownerKey(setName, es[i].KeyString())
					if ts.owner[k] != name {
						continue // another port's element
					}
					c := changes[k]
					if c == nil {
						c = &elemChange{set: old.setOf[setName]}
						changes[k] = c
					}
					c.old = &es[i]
				}
			}
			for a := range old.addrs {
				hairpinDelta[a]--
			}
		}
		if nf != nil {
			for setName, es := range nf.elems {
				for i := range es {
					k := ownerKey(setName, es[i].KeyString())
					if o, taken := ts.owner[k]; taken && o != name && !seen[o] {
						p.log.Warn("nftables: two Service ports claim one map key; keeping the first",
							"set", setName, "key", es[i].KeyString(), "kept", o.String(), "dropped", name.String())
						continue
					}
					c := changes[k]
					if c == nil {
						c = &elemChange{set: nf.setOf[setName]}
						changes[k] = c
					}
					if c.new != nil {
						continue // claimed by an earlier changed port
					}
					c.new = &es[i]
					c.owner = name
				}
			}
			for a := range nf.addrs {
				hairpinDelta[a]++
			}
		}
	}

	// Group element changes into one op per set.
	delBySet := map[string][]Element{}
	addBySet := map[string][]Element{}
	setByName := map[string]*Set{}
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		c := changes[k]
		setByName[c.set.Name] = c.set
		switch {
		case c.old != nil && c.new != nil && c.old.sameValue(*c.new):
		case c.old != nil && c.new != nil:
			delBySet[c.set.Name] = append(delBySet[c.set.Name], Element{Key: c.old.Key})
			addBySet[c.set.Name] = append(addBySet[c.set.Name], *c.new)
		case c.old != nil:
			delBySet[c.set.Name] = append(delBySet[c.set.Name], Element{Key: c.old.Key})
		case c.new != nil:
			addBySet[c.set.Name] = append(addBySet[c.set.Name], *c.new)
		}
	}
	newHairpin := map[netip.Addr]int{}
	var hpDel, hpAdd []Element
	for _, a := range slices.SortedFunc(maps.Keys(hairpinDelta), netip.Addr.Compare) {
		d := hairpinDelta[a]
		before := ts.hairpin[a]
		after := before + d
		newHairpin[a] = after
		switch {
		case before > 0 && after <= 0:
			hpDel = append(hpDel, Element{Key: []Val{AddrVal(a), AddrVal(a)}})
		case before <= 0 && after > 0:
			hpAdd = append(hpAdd, Element{Key: []Val{AddrVal(a), AddrVal(a)}})
		}
	}
	hp := &Set{Name: hairpinSet, Key: []DataType{f.addrType(), f.addrType()}}
	if len(hpDel) > 0 {
		delBySet[hairpinSet] = hpDel
		setByName[hairpinSet] = hp
	}
	if len(hpAdd) > 0 {
		addBySet[hairpinSet] = hpAdd
		setByName[hairpinSet] = hp
	}
	for _, s := range slices.Sorted(maps.Keys(delBySet)) {
		ph.delElems = append(ph.delElems, DeleteElements{Set: setByName[s], Elements: delBySet[s]})
	}
	for _, s := range slices.Sorted(maps.Keys(addBySet)) {
		ph.addElems = append(ph.addElems, AddElements{Set: setByName[s], Elements: addBySet[s]})
	}

	tx := &Transaction{Family: f, Table: TableName, Ops: ph.ops()}
	if len(tx.Ops) > 0 {
		if err := p.kernel.Run(ctx, tx); err != nil {
			for _, s := range b.allocated {
				ts.slots.put(s)
			}
			return fmt.Errorf("nftables: partial sync of %s table: %w", f, err)
		}
	}
	// Commit the new state.
	for _, name := range names {
		old, nf := ts.frags[name], newFrags[name]
		if old != nil {
			for k, g := range old.groups {
				if g.hasSlot && (nf == nil || nf.groups[k] == nil || !nf.groups[k].hasSlot) {
					ts.slots.put(g.slot)
				}
			}
		}
		if nf == nil {
			delete(ts.frags, name)
		} else {
			ts.frags[name] = nf
		}
	}
	for k, c := range changes {
		switch {
		case c.new != nil:
			ts.owner[k] = c.owner
		case c.old != nil:
			delete(ts.owner, k)
		}
	}
	for a, n := range newHairpin {
		if n > 0 {
			ts.hairpin[a] = n
		} else {
			delete(ts.hairpin, a)
		}
	}
	return nil
}

// diffFragment adds the chain and set operations that turn old into nf.
func diffFragment(f Family, old, nf *fragment, ph *phases) {
	oldChains := map[string]*Chain{}
	oldSets := map[string]*Set{}
	if old != nil {
		for _, c := range old.chains {
			oldChains[c.Name] = c
		}
		for _, s := range old.sets {
			oldSets[s.Name] = s
		}
	}
	newChains := map[string]bool{}
	newSets := map[string]bool{}
	replaced := false
	if nf != nil {
		for _, s := range nf.sets {
			newSets[s.Name] = true
			switch os := oldSets[s.Name]; {
			case os == nil:
				ph.addSets = append(ph.addSets, AddSet{Set: s})
			case !os.sameSpec(s):
				// A new affinity timeout: the map is replaced (its entries
				// go) once no rule refers to it.
				ph.replaceSets = append(ph.replaceSets, DeleteSet{Set: os}, AddSet{Set: s})
				replaced = true
			}
		}
		for _, c := range nf.chains {
			newChains[c.Name] = true
			oc := oldChains[c.Name]
			switch {
			case oc == nil:
				ph.addChains = append(ph.addChains, AddChain{Chain: c})
			case !replaced && rulesEqual(f, oc.Rules, c.Rules):
				continue
			default:
				ph.flushChains = append(ph.flushChains, FlushChain{Name: c.Name})
			}
			for _, r := range c.Rules {
				ph.addRules = append(ph.addRules, AddRule{Chain: c.Name, Rule: r})
			}
		}
	}
	if old != nil {
		for _, c := range old.chains {
			if !newChains[c.Name] {
				ph.flushChains = append(ph.flushChains, FlushChain{Name: c.Name})
				ph.delChains = append(ph.delChains, DeleteChain{Name: c.Name})
			}
		}
		for _, s := range old.sets {
			if !newSets[s.Name] {
				ph.delSets = append(ph.delSets, DeleteSet{Set: s})
			}
		}
	}
}
