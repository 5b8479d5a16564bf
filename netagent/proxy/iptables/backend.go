package iptables

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// DefaultMaxChainsPerTransaction: in nft mode a full sync commits the nat
// table in transactions of about this many chains (see doc.go, "Why a
// full sync is split").
const DefaultMaxChainsPerTransaction = 1000

// Config configures the backend.
type Config struct {
	// Exec runs the iptables tools; nil runs the real ones here.
	Exec Exec
	// Mode: ModeNFT or ModeLegacy; "" detects it (Detect).
	Mode Mode
	// MaxChainsPerTransaction: nft mode only; 0 means the default, < 0
	// never splits. Legacy mode never splits (each commit there rewrites
	// the whole table).
	MaxChainsPerTransaction int
	// Logger; nil discards.
	Logger *slog.Logger
}

// Backend programs kube-proxy's iptables layout with one iptables-restore
// per sync. It keeps what it wrote instead of reading the rules back.
type Backend struct {
	// These are effectively const after New.
	ex    Exec
	mode  Mode
	split int
	log   *slog.Logger

	mu sync.Mutex // serialises Sync and Cleanup; protects the fields below
	// gen generates rules; its probability cache lives across syncs.
	gen generator
	// written: what each Service port has in the kernel.
	written map[proxy.ServicePortName]*written
	// present: the rules in the shared nat chains (KUBE-SERVICES and
	// KUBE-NODEPORTS).
	present *sharedSet
	// stale: per-service chains flushed by a partial sync but kept (a
	// shared rule may still jump to them); a full sync deletes them.
	stale map[string]bool
	// filterRules: the ports that have filter rules, and those rules.
	filterRules map[proxy.ServicePortName][]rule
	// lastFilter: the filter block last written.
	lastFilter []byte
	needFull   bool
	// discovered: the chains left by an earlier run were read (once, at
	// the first full sync).
	discovered bool
	// jumpChecks counts full syncs that checked the jump rules.
	jumpChecks int
	stats      Stats
}

// written is one Service port's share of the kernel state.
type written struct {
	chains []string
	shared []rule
	filter []rule
	// rulesByChain: the chains' rules, only between rendering and writing.
	rulesByChain []chainRules
}

// Stats describes the last successful sync.
type Stats struct {
	Full         bool
	Transactions int
	Rules        int
	Bytes        int
	Restore      time.Duration
	Total        time.Duration
}

var _ proxy.Backend = (*Backend)(nil)

// New returns a backend. With an empty Mode it detects the host's iptables
// backend; it fails when the tools are missing.
func New(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.Exec == nil {
		cfg.Exec = OSExec{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Mode == "" {
		m, err := Detect(ctx, cfg.Exec)
		if err != nil {
			return nil, err
		}
		cfg.Mode = m
	}
	if cfg.Mode != ModeNFT && cfg.Mode != ModeLegacy {
		return nil, fmt.Errorf("iptables: unknown mode %q", cfg.Mode)
	}
	if _, err := cfg.Exec.Run(ctx, nil, cfg.Mode.tool("iptables-restore"), "--version"); err != nil {
		return nil, fmt.Errorf("iptables: %s is not usable: %w", cfg.Mode.tool("iptables-restore"), err)
	}
	split := cfg.MaxChainsPerTransaction
	if split == 0 {
		split = DefaultMaxChainsPerTransaction
	}
	if cfg.Mode == ModeLegacy || split < 0 {
		split = 0
	}
	return &Backend{
		ex:       cfg.Exec,
		mode:     cfg.Mode,
		split:    split,
		log:      cfg.Logger.With("component", "proxy/iptables", "iptables", string(cfg.Mode)),
		written:  map[proxy.ServicePortName]*written{},
		present:  newSharedSet(),
		stale:    map[string]bool{},
		needFull: true,
	}, nil
}

// Name is "iptables".
func (b *Backend) Name() string { return "iptables" }

// Mode is the iptables backend in use.
func (b *Backend) Mode() Mode { return b.mode }

// LastStats describes the last successful sync.
func (b *Backend) LastStats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Sync programs st: a full sync when changed is nil (or after a failure),
// else a partial sync of the changed Service ports.
func (b *Backend) Sync(ctx context.Context, st *proxy.State, changed []proxy.ServicePortName) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := time.Now()
	b.gen.clusterCIDR = st.ClusterCIDR
	if !b.gen.clusterCIDR.Addr().Is4() {
		b.gen.clusterCIDR = netip.Prefix{}
	}
	b.gen.nodeIPs = st.NodeIPs
	var err error
	full := changed == nil || b.needFull
	if full {
		err = b.fullSync(ctx, st)
	} else {
		err = b.partialSync(ctx, st, changed)
	}
	if err != nil {
		b.needFull = true
		return err
	}
	b.needFull = false
	b.stats.Full = full
	b.stats.Total = time.Since(start)
	return nil
}

// restore runs one iptables-restore --noflush with p.
func (b *Backend) restore(ctx context.Context, p *payload) error {
	data := p.bytes()
	if len(data) == 0 {
		return nil
	}
	start := time.Now()
	_, err := b.ex.Run(ctx, data, b.mode.tool("iptables-restore"), "-w", "--noflush")
	b.stats.Restore = time.Since(start)
	b.stats.Bytes = len(data)
	b.stats.Rules = p.lines()
	b.stats.Transactions = 0
	for _, bl := range p.blocks {
		if !bl.empty() {
			b.stats.Transactions++
		}
	}
	if err != nil {
		return fmt.Errorf("iptables: restore (%d bytes): %w", len(data), err)
	}
	return nil
}

// generate computes the rules of every Service port, sorted by name.
func (b *Backend) generate(st *proxy.State) ([]proxy.ServicePortName, map[proxy.ServicePortName]*written) {
	names := slices.SortedFunc(maps.Keys(st.Services), proxy.ServicePortName.Compare)
	out := make(map[proxy.ServicePortName]*written, len(names))
	for _, n := range names {
		out[n] = b.render(st, n)
	}
	return names, out
}

// render generates one port's rules (an empty *written when it has none).
func (b *Backend) render(st *proxy.State, n proxy.ServicePortName) *written {
	sp := st.Services[n]
	if sp == nil {
		return &written{}
	}
	r := b.gen.service(sp, st.Endpoints[n])
	w := &written{shared: r.shared, filter: r.filter}
	for _, c := range r.chains {
		w.chains = append(w.chains, c.name)
	}
	w.rulesByChain = r.chains
	return w
}

// fullSync rewrites everything Skiff owns, in one iptables-restore: the
// filter chains, every nat chain (split into several transactions in nft
// mode), the shared chains last, then deletes the chains no longer used.
func (b *Backend) fullSync(ctx context.Context, st *proxy.State) error {
	if !b.discovered {
		leftovers, err := b.existingServiceChains(ctx)
		if err != nil {
			return err
		}
		for _, c := range leftovers {
			b.stale[c] = true
		}
		b.discovered = true
	}
	jumps, err := b.missingJumps(ctx)
	if err != nil {
		return err
	}
	names, all := b.generate(st)

	var p payload
	mangle := p.newBlock("mangle")
	mangle.declare(chainHint)

	filterRules := map[proxy.ServicePortName][]rule{}
	for _, n := range names {
		if f := all[n].filter; len(f) > 0 {
			filterRules[n] = f
		}
	}
	filter := b.filterBlock(filterRules, st)
	filterBytes := blockBytes(filter) // without the jumps, as partial syncs compare it
	for _, j := range jumps {
		if j.table == "filter" {
			filter.lines = append(filter.lines, "-I "+j.chain+" "+j.spec)
		}
	}
	p.blocks = append(p.blocks, filter)

	// The per-service nat chains, each declared (created or flushed) just
	// before its rules. All endpoint chains first, in one transaction and
	// in descending name order; then the service chains, in transactions
	// of about b.split chains in nft mode (see doc.go, "Why a full sync is
	// split").
	nat := p.newBlock("nat")
	nat.declare(chainMarkMasq)
	nat.declare(chainPostrouting)
	for _, r := range fixedNATRules() {
		nat.append(r)
	}
	newChains := map[string]bool{}
	var seps []chainRules
	type svcChains struct {
		key    string
		chains []chainRules
	}
	var others []svcChains
	for _, n := range names {
		var mine []chainRules
		for _, c := range all[n].rulesByChain {
			newChains[c.name] = true
			if strings.HasPrefix(c.name, prefixSEP) {
				seps = append(seps, c)
			} else {
				mine = append(mine, c)
			}
		}
		if len(mine) > 0 {
			others = append(others, svcChains{key: mine[0].name, chains: mine})
		}
	}
	slices.SortFunc(seps, func(x, y chainRules) int { return strings.Compare(y.name, x.name) })
	for _, c := range seps {
		nat.declareInline(c.name)
		for _, r := range c.rules {
			nat.append(r)
		}
	}
	slices.SortFunc(others, func(x, y svcChains) int { return strings.Compare(y.key, x.key) })
	chainsInBlock := 0
	if b.split > 0 && len(others) > 0 {
		nat = p.newBlock("nat")
	}
	for _, o := range others {
		if b.split > 0 && chainsInBlock > 0 && chainsInBlock+len(o.chains) > b.split {
			nat = p.newBlock("nat")
			chainsInBlock = 0
		}
		for _, c := range o.chains {
			nat.declareInline(c.name)
			for _, r := range c.rules {
				nat.append(r)
			}
		}
		chainsInBlock += len(o.chains)
	}

	// The shared chains last, once every chain they jump to exists.
	last := nat
	if b.split > 0 && chainsInBlock > 0 {
		last = p.newBlock("nat")
	}
	last.declare(chainServices)
	last.declare(chainNodePorts)
	var shared []rule
	for _, n := range names {
		shared = append(shared, all[n].shared...)
	}
	// Ordered by target, descending: iptables-nft keeps the chain names a
	// transaction mentions in a sorted list, and this order makes each
	// insertion O(1) (see doc.go).
	slices.SortStableFunc(shared, func(x, y rule) int { return cmp.Compare(y.target(), x.target()) })
	present := newSharedSet()
	for _, r := range shared {
		last.append(r)
		present.add(r)
	}
	last.append(nodePortsTail())
	for _, j := range jumps {
		if j.table == "nat" {
			last.lines = append(last.lines, "-I "+j.chain+" "+j.spec)
		}
	}
	// Chains no longer used: flush (declare) and delete.
	var gone []string
	for _, w := range b.written {
		for _, c := range w.chains {
			if !newChains[c] {
				gone = append(gone, c)
			}
		}
	}
	for c := range b.stale {
		if !newChains[c] {
			gone = append(gone, c)
		}
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	for _, c := range gone {
		last.declare(c)
	}
	for _, c := range gone {
		last.deleteChain(c)
	}

	if err := b.restore(ctx, &p); err != nil {
		// Whatever exists now is unknown: a later full sync deletes every
		// chain either side could have made.
		for _, w := range all {
			for _, c := range w.chains {
				b.stale[c] = true
			}
		}
		for _, w := range b.written {
			for _, c := range w.chains {
				b.stale[c] = true
			}
		}
		return err
	}
	for _, w := range all {
		w.rulesByChain = nil // not needed once written
	}
	b.written = all
	b.present = present
	b.stale = map[string]bool{}
	b.filterRules = filterRules
	b.lastFilter = filterBytes
	return nil
}

// filterBlock is the whole filter table content: kube-proxy's filter
// chains, the per-service REJECT/DROP/ACCEPT rules, and the rule that
// rejects anything else sent to the service CIDR.
func (b *Backend) filterBlock(rules map[proxy.ServicePortName][]rule, st *proxy.State) *block {
	f := &block{table: "filter"}
	for _, c := range []string{chainServices, chainExternalServices, chainForward, chainNodePorts, chainFirewall} {
		f.declare(c)
	}
	for _, n := range slices.SortedFunc(maps.Keys(rules), proxy.ServicePortName.Compare) {
		for _, r := range rules[n] {
			f.append(r)
		}
	}
	if st.ServiceCIDR.IsValid() && st.ServiceCIDR.Addr().Is4() {
		f.append(rule{chainServices, []string{"-m", "comment", "--comment", "no Service port at this ClusterIP: reject, never route it",
			"-d", st.ServiceCIDR.Masked().String(), "-j", "REJECT"}})
	}
	for _, r := range forwardRules() {
		f.append(r)
	}
	return f
}

// partialSync rewrites only the changed ports' chains. The shared chains
// are edited, not rewritten: new rules are inserted (-I KUBE-SERVICES puts
// them before the NodePort tail rule), and a rule of a port that lost its
// endpoints is left in place with its target chain flushed, so it matches
// nothing; the next full sync removes both. The rules of a deleted Service
// port, and a rule that would still lead somewhere wrong (its chain is
// still in use), are deleted with -D. Removed endpoint
// chains are deleted at once.
func (b *Backend) partialSync(ctx context.Context, st *proxy.State, changed []proxy.ServicePortName) error {
	nat := &block{table: "nat"}
	updates := map[proxy.ServicePortName]*written{}
	view := &sharedView{base: b.present, added: map[string]rule{}, removed: map[string]bool{}}
	stale := maps.Clone(b.stale)
	var flushed []string

	for _, n := range changed {
		old := b.written[n]
		if old == nil {
			old = &written{}
		}
		w := b.render(st, n)
		updates[n] = w
		newChains := map[string]bool{}
		for _, c := range w.rulesByChain {
			nat.declare(c.name)
			newChains[c.name] = true
			delete(stale, c.name)
		}
		for _, c := range w.rulesByChain {
			for _, r := range c.rules {
				nat.append(r)
			}
		}
		newShared := map[string]bool{}
		for _, r := range w.shared {
			newShared[sharedKey(r)] = true
		}
		// A shared rule that is not wanted but jumps to a chain in use
		// would misroute: delete it. (It may be one left by an earlier
		// partial sync, when this chain was flushed.)
		for c := range newChains {
			for _, r := range view.targeting(c) {
				if k := sharedKey(r); !newShared[k] {
					nat.add("-D", r)
					view.remove(k)
				}
			}
		}
		// A removed Service port loses its dispatch rules at once (a
		// deletion adds no jump, so it costs no table validation), and
		// its chains with them: nothing of a deleted Service stays in
		// the kernel. (A port that only lost its endpoints keeps its
		// dispatch rule, to an empty chain, for when they come back.)
		if _, ok := st.Services[n]; !ok {
			for _, r := range old.shared {
				if k := sharedKey(r); !newShared[k] && view.has(k) {
					nat.add("-D", r)
					view.remove(k)
				}
			}
		}
		for _, r := range w.shared {
			if view.has(sharedKey(r)) {
				continue
			}
			view.add(r)
			if r.chain == chainServices {
				nat.add("-I", r) // before the NodePort tail rule
			} else {
				nat.append(r)
			}
		}
		for _, c := range old.chains {
			if !newChains[c] {
				nat.declare(c) // flush
				flushed = append(flushed, c)
			}
		}
	}
	// Delete the flushed chains no shared rule jumps to; keep the others
	// (empty) until the next full sync.
	for _, c := range flushed {
		if len(view.targeting(c)) > 0 {
			stale[c] = true
			continue
		}
		delete(stale, c)
		nat.deleteChain(c)
	}

	// The filter table is small: rewrite it when its content changed.
	filterRules := maps.Clone(b.filterRules)
	for n, w := range updates {
		if len(w.filter) > 0 {
			filterRules[n] = w.filter
		} else {
			delete(filterRules, n)
		}
	}
	filter := b.filterBlock(filterRules, st)
	filterBytes := blockBytes(filter)

	var p payload
	if !bytes.Equal(filterBytes, b.lastFilter) {
		p.blocks = append(p.blocks, filter)
	}
	p.blocks = append(p.blocks, nat)
	if err := b.restore(ctx, &p); err != nil {
		for _, w := range updates {
			for _, c := range w.chains {
				b.stale[c] = true
			}
		}
		return err
	}
	for n, w := range updates {
		w.rulesByChain = nil
		if len(w.chains) == 0 && len(w.shared) == 0 && len(w.filter) == 0 {
			delete(b.written, n)
		} else {
			b.written[n] = w
		}
	}
	view.apply()
	b.stale = stale
	b.filterRules = filterRules
	b.lastFilter = filterBytes
	return nil
}

// fixedNATRules are KUBE-MARK-MASQ and KUBE-POSTROUTING.
func fixedNATRules() []rule {
	return []rule{
		{chainMarkMasq, []string{"-j", "MARK", "--or-mark", masqMark}},
		{chainPostrouting, []string{"-m", "mark", "!", "--mark", masqMark + "/" + masqMark, "-j", "RETURN"}},
		// Clear the mark, so a packet that traverses the stack again is
		// not masqueraded twice.
		{chainPostrouting, []string{"-j", "MARK", "--xor-mark", masqMark}},
		{chainPostrouting, []string{"-m", "comment", "--comment", "kubernetes service traffic requiring SNAT", "-j", "MASQUERADE", "--random-fully"}},
	}
}

// nodePortsTail is the last rule of nat KUBE-SERVICES: traffic to any
// local address (but loopback) goes on to the NodePorts.
func nodePortsTail() rule {
	return rule{chainServices, []string{"-m", "comment", "--comment", "kubernetes service nodeports; NOTE: this must be the last rule in this chain",
		"-m", "addrtype", "--dst-type", "LOCAL", "!", "-d", "127.0.0.0/8", "-j", chainNodePorts}}
}

// forwardRules are KUBE-FORWARD's.
func forwardRules() []rule {
	return []rule{
		{chainForward, []string{"-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP"}},
		{chainForward, []string{"-m", "comment", "--comment", "kubernetes forwarding rules", "-m", "mark", "--mark", masqMark + "/" + masqMark, "-j", "ACCEPT"}},
		{chainForward, []string{"-m", "comment", "--comment", "kubernetes forwarding conntrack rule", "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"}},
	}
}

// jumpRule is a rule in a built-in chain that leads to one of ours.
type jumpRule struct {
	table, chain string
	// spec: as `iptables -S` prints it, so that it can be compared.
	spec string
}

// jumpRules are kube-proxy's jumps from the built-in chains.
var jumpRules = []jumpRule{
	{"filter", "INPUT", `-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES`},
	{"filter", "FORWARD", `-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES`},
	{"filter", "INPUT", `-m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS`},
	{"filter", "FORWARD", `-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`},
	{"filter", "OUTPUT", `-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`},
	{"filter", "FORWARD", `-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD`},
	{"filter", "INPUT", `-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`},
	{"filter", "OUTPUT", `-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`},
	{"filter", "FORWARD", `-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`},
	{"nat", "OUTPUT", `-m comment --comment "kubernetes service portals" -j KUBE-SERVICES`},
	{"nat", "PREROUTING", `-m comment --comment "kubernetes service portals" -j KUBE-SERVICES`},
	{"nat", "POSTROUTING", `-m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING`},
}

// listChain returns the rules of one built-in chain as `iptables -S`
// prints them, without the "-A CHAIN " prefix. Listing one built-in chain
// is cheap in both modes, unlike iptables-save of a large table.
func (b *Backend) listChain(ctx context.Context, table, chain string) ([]string, error) {
	out, err := b.ex.Run(ctx, nil, b.mode.tool("iptables"), "-w", "-t", table, "-S", chain)
	if err != nil {
		return nil, fmt.Errorf("iptables: list %s %s: %w", table, chain, err)
	}
	var specs []string
	prefix := "-A " + chain + " "
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			specs = append(specs, strings.TrimSpace(s))
		}
	}
	return specs, nil
}

// natCheckEvery: in legacy mode, the nat jumps are checked on every
// tenth full sync (see missingJumps).
const natCheckEvery = 10

// missingJumps lists the jump rules not in their built-in chain. Listing
// one built-in chain is cheap with iptables-nft, but iptables-legacy loads
// the whole table to list it (~0.3 s for the nat table at 10k Services).
// So in legacy mode the nat chains are listed at the first full sync, when
// the mangle hint chain Skiff writes on every full sync has gone (someone
// deleted the chains), and every natCheckEvery full syncs; the small filter
// table is always checked.
func (b *Backend) missingJumps(ctx context.Context) ([]jumpRule, error) {
	checkNAT := true
	if b.mode == ModeLegacy && b.jumpChecks > 0 && b.jumpChecks%natCheckEvery != 0 {
		hint, err := b.listChainIfExists(ctx, "mangle", chainHint)
		if err != nil {
			return nil, err
		}
		checkNAT = !hint
	}
	b.jumpChecks++
	cache := map[string][]string{}
	var missing []jumpRule
	for _, j := range jumpRules {
		if j.table == "nat" && !checkNAT {
			continue
		}
		key := j.table + "/" + j.chain
		specs, ok := cache[key]
		if !ok {
			var err error
			if specs, err = b.listChain(ctx, j.table, j.chain); err != nil {
				return nil, err
			}
			cache[key] = specs
		}
		if !slices.Contains(specs, j.spec) {
			missing = append(missing, j)
		}
	}
	return missing, nil
}

// listChainIfExists reports whether a chain exists (exit status 1 of
// iptables -S means it does not).
func (b *Backend) listChainIfExists(ctx context.Context, table, chain string) (bool, error) {
	_, err := b.ex.Run(ctx, nil, b.mode.tool("iptables"), "-w", "-t", table, "-S", chain)
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, fmt.Errorf("iptables: list %s %s: %w", table, chain, err)
}

// existingServiceChains reads, once, the per-service chains a previous run
// left in the nat table, so that the first full sync deletes those no
// longer needed.
func (b *Backend) existingServiceChains(ctx context.Context) ([]string, error) {
	out, err := b.ex.Run(ctx, nil, b.mode.tool("iptables-save"), "-t", "nat")
	if err != nil {
		return nil, fmt.Errorf("iptables: read existing chains: %w", err)
	}
	var chains []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, ":") {
			continue
		}
		name, _, _ := strings.Cut(line[1:], " ")
		if isServiceChain(name) {
			chains = append(chains, name)
		}
	}
	return chains, sc.Err()
}

// Cleanup removes everything this layout programs: the jump rules, every
// KUBE-* chain of the nat and filter tables it owns, and the mangle hint.
// It reads the current chains (iptables-save) since it must also remove
// what an earlier run left.
func (b *Backend) Cleanup(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for _, j := range jumpRules {
		specs, err := b.listChain(ctx, j.table, j.chain)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for range countOf(specs, j.spec) {
			args := append([]string{"-w", "-t", j.table, "-D", j.chain}, splitSpec(j.spec)...)
			if _, err := b.ex.Run(ctx, nil, b.mode.tool("iptables"), args...); err != nil {
				errs = append(errs, fmt.Errorf("iptables: delete jump %s %s: %w", j.table, j.chain, err))
			}
		}
	}
	var p payload
	for _, t := range []struct {
		table string
		fixed []string
	}{
		{"nat", []string{chainServices, chainNodePorts, chainPostrouting, chainMarkMasq}},
		{"filter", []string{chainServices, chainExternalServices, chainForward, chainNodePorts, chainFirewall}},
		{"mangle", []string{chainHint}},
	} {
		out, err := b.ex.Run(ctx, nil, b.mode.tool("iptables-save"), "-t", t.table)
		if err != nil {
			errs = append(errs, fmt.Errorf("iptables: read %s: %w", t.table, err))
			continue
		}
		existing := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, ":") {
				name, _, _ := strings.Cut(line[1:], " ")
				existing[name] = true
			}
		}
		bl := p.newBlock(t.table)
		var del []string
		for _, c := range t.fixed {
			if existing[c] {
				del = append(del, c)
			}
		}
		for c := range existing {
			if t.table == "nat" && isServiceChain(c) {
				del = append(del, c)
			}
		}
		slices.Sort(del)
		for _, c := range del {
			bl.declare(c)
		}
		for _, c := range del {
			bl.deleteChain(c)
		}
	}
	if err := b.restore(ctx, &p); err != nil {
		errs = append(errs, err)
	}
	b.written = map[proxy.ServicePortName]*written{}
	b.present = newSharedSet()
	b.stale = map[string]bool{}
	b.filterRules = nil
	b.lastFilter = nil
	b.needFull = true
	return errors.Join(errs...)
}

func countOf(specs []string, s string) int {
	n := 0
	for _, x := range specs {
		if x == s {
			n++
		}
	}
	return n
}

// splitSpec splits a spec into arguments, honouring double quotes.
func splitSpec(s string) []string {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			inQuote = !inQuote
			have = true
		case c == ' ' && !inQuote:
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
	if have {
		out = append(out, cur.String())
	}
	return out
}
