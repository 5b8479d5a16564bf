package ipvs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
)

// The iptables chains of the ipvs mode (see doc.go). Their names differ
// from the iptables mode's, so that switching modes never mixes the two.
const (
	chainServices    = "KUBE-IPVS-SERVICES"    // nat: mark what needs masquerading
	chainMarkMasq    = "KUBE-IPVS-MARK-MASQ"   // nat
	chainPostrouting = "KUBE-IPVS-POSTROUTING" // nat: hairpin, masquerade the mark
	chainFilter      = "KUBE-IPVS-FILTER"      // filter: REJECT, source ranges
	fwChainPrefix    = "KUBE-IPVSFW-"          // filter: one per LB port with source ranges
	masqMark         = "0x4000"
)

// jump is a rule in a built-in chain that enters one of ours.
type jump struct{ table, chain, spec string }

// jumps are the rules from the built-in chains. The specs are written as
// `iptables -S` prints them, so they can be compared.
var jumps = []jump{
	{"nat", "PREROUTING", "-m comment --comment skiff-ipvs-services -j " + chainServices},
	{"nat", "OUTPUT", "-m comment --comment skiff-ipvs-services -j " + chainServices},
	{"nat", "POSTROUTING", "-m comment --comment skiff-ipvs-postrouting -j " + chainPostrouting},
	{"filter", "INPUT", "-m conntrack --ctstate NEW -m comment --comment skiff-ipvs-filter -j " + chainFilter},
	{"filter", "FORWARD", "-m conntrack --ctstate NEW -m comment --comment skiff-ipvs-filter -j " + chainFilter},
	{"filter", "OUTPUT", "-m conntrack --ctstate NEW -m comment --comment skiff-ipvs-filter -j " + chainFilter},
}

// chainID is a table and chain.
type chainID struct{ table, chain string }

// ruleset is the rendered content of every chain the mode owns.
type ruleset map[chainID][]string

// fwChain is the source-range chain of a Service port (28 characters at
// most, as iptables requires): kube-proxy's hash of "ns/name:port" and the
// protocol.
func fwChain(n proxy.ServicePortName) string {
	h := sha256.Sum256([]byte(n.PortString() + strings.ToLower(n.Protocol)))
	return fwChainPrefix + base32.StdEncoding.EncodeToString(h[:])[:16]
}

// portRules are one Service port's share of the chains.
type portRules struct {
	nat    []string // KUBE-IPVS-SERVICES
	filter []string // KUBE-IPVS-FILTER
	fw     []string // its KUBE-IPVSFW- chain (empty: none)
	// extra: bound addresses outside the service CIDR (an unknown port of
	// them is rejected).
	extra []netip.Addr
}

func (r *portRules) equal(o *portRules) bool {
	return slices.Equal(r.nat, o.nat) && slices.Equal(r.filter, o.filter) && slices.Equal(r.fw, o.fw) && slices.Equal(r.extra, o.extra)
}

// renderPort computes one port's rules (p.vs, p.hasAny must be set).
func renderPort(st *proxy.State, p *portPlan) portRules {
	var r portRules
	if len(p.vs) == 0 && len(p.bind) == 0 {
		return r
	}
	sp := p.sp
	notCluster := ""
	if st.ClusterCIDR.IsValid() && st.ClusterCIDR.Addr().Is4() {
		notCluster = "! -s " + st.ClusterCIDR.Masked().String() + " "
	}
	svcCIDR := st.ServiceCIDR.IsValid() && st.ServiceCIDR.Addr().Is4()
	proto := strings.ToLower(sp.Protocol)
	cmt := "-m comment --comment \"" + sp.Name.PortString() + "\""
	dport := func(port int32) string { return "-p " + proto + " -m " + proto + " --dport " + strconv.Itoa(int(port)) }
	nat := func(spec string) { r.nat = append(r.nat, "-A "+chainServices+" "+spec) }
	filter := func(spec string) { r.filter = append(r.filter, "-A "+chainFilter+" "+spec) }
	for _, a := range sp.ClusterIPs {
		if a.Is4() && (!svcCIDR || !st.ServiceCIDR.Contains(a)) {
			nat(notCluster + "-d " + a.String() + "/32 " + dport(sp.Port) + " " + cmt + " -j " + chainMarkMasq)
		}
	}
	var ext []netip.Addr
	for _, a := range slices.Concat(sp.ExternalIPs, sp.LoadBalancerIPs) {
		if a.Is4() {
			ext = append(ext, a)
		}
	}
	if !sp.ExternalPolicyLocal {
		for _, a := range ext {
			nat("-d " + a.String() + "/32 " + dport(sp.Port) + " " + cmt + " -j " + chainMarkMasq)
		}
		if sp.NodePort != 0 {
			nat(dport(sp.NodePort) + " -m addrtype --dst-type LOCAL " + cmt + " -j " + chainMarkMasq)
		}
	}
	for _, a := range p.bind {
		if !svcCIDR || !st.ServiceCIDR.Contains(a) {
			r.extra = append(r.extra, a)
		}
	}
	// filter: accept known ports, reject those without endpoints.
	verdict := "-j RETURN"
	if !p.hasAny {
		verdict = "-j REJECT --reject-with icmp-port-unreachable"
	}
	for _, a := range sp.ClusterIPs {
		if a.Is4() {
			filter("-d " + a.String() + "/32 " + dport(sp.Port) + " " + cmt + " " + verdict)
		}
	}
	lbs := map[netip.Addr]bool{}
	for _, a := range sp.LoadBalancerIPs {
		lbs[a] = true
	}
	fw := ""
	if p.hasAny && len(sp.LoadBalancerSourceRanges) > 0 && len(lbs) > 0 {
		fw = fwChain(sp.Name)
		for _, rg := range sp.LoadBalancerSourceRanges {
			if rg.Addr().Is4() {
				r.fw = append(r.fw, "-A "+fw+" -s "+rg.Masked().String()+" "+cmt+" -j RETURN")
			}
		}
		r.fw = append(r.fw, "-A "+fw+" "+cmt+" -j DROP")
	}
	for _, a := range ext {
		if lbs[a] && fw != "" {
			// The firewall chain drops what is out of range and returns
			// the rest, which the next rule lets through.
			filter("-d " + a.String() + "/32 " + dport(sp.Port) + " " + cmt + " -j " + fw)
		}
		filter("-d " + a.String() + "/32 " + dport(sp.Port) + " " + cmt + " " + verdict)
	}
	if sp.NodePort != 0 && !p.hasAny {
		filter(dport(sp.NodePort) + " -m addrtype --dst-type LOCAL " + cmt + " " + verdict)
	}
	return r
}

// render assembles every chain from the ports' rules, in name order.
func render(st *proxy.State, plans []*portPlan) ruleset {
	rs := ruleset{}
	add := func(id chainID, ls ...string) { rs[id] = append(rs[id], ls...) }
	svcs, masq, post, filt := chainID{"nat", chainServices}, chainID{"nat", chainMarkMasq}, chainID{"nat", chainPostrouting}, chainID{"filter", chainFilter}
	for _, c := range []chainID{svcs, masq, post, filt} {
		rs[c] = nil // every chain exists even when empty
	}
	svcCIDR := st.ServiceCIDR.IsValid() && st.ServiceCIDR.Addr().Is4()
	if svcCIDR {
		notCluster := ""
		if st.ClusterCIDR.IsValid() && st.ClusterCIDR.Addr().Is4() {
			notCluster = "! -s " + st.ClusterCIDR.Masked().String() + " "
		}
		add(svcs, "-A "+chainServices+" "+notCluster+"-d "+st.ServiceCIDR.Masked().String()+
			" -m comment --comment \"cluster IPs from outside the cluster\" -j "+chainMarkMasq)
	}
	add(masq, "-A "+chainMarkMasq+" -j MARK --or-mark "+masqMark)
	hairpin := map[netip.Addr]bool{}
	var extra []netip.Addr
	for _, p := range plans {
		add(svcs, p.rules.nat...)
		add(filt, p.rules.filter...)
		if len(p.rules.fw) > 0 {
			add(chainID{"filter", fwChain(p.name)}, p.rules.fw...)
		}
		extra = append(extra, p.rules.extra...)
		for _, a := range p.hairpin {
			hairpin[a] = true
		}
	}
	// Anything else sent to the service CIDR or to a bound address: an
	// unknown port, an unallocated ClusterIP.
	if svcCIDR {
		add(filt, "-A "+chainFilter+" -d "+st.ServiceCIDR.Masked().String()+" -m comment --comment \"unknown service ports\" -j REJECT --reject-with icmp-port-unreachable")
	}
	slices.SortFunc(extra, netip.Addr.Compare)
	for _, a := range slices.Compact(extra) {
		add(filt, "-A "+chainFilter+" -d "+a.String()+"/32 -m comment --comment \"unknown service ports\" -j REJECT --reject-with icmp-port-unreachable")
	}
	for _, a := range slices.SortedFunc(maps.Keys(hairpin), netip.Addr.Compare) {
		add(post, "-A "+chainPostrouting+" -s "+a.String()+"/32 -d "+a.String()+"/32 -m comment --comment hairpin -j MASQUERADE")
	}
	add(post, "-A "+chainPostrouting+" -m mark ! --mark "+masqMark+"/"+masqMark+" -j RETURN",
		"-A "+chainPostrouting+" -j MARK --xor-mark "+masqMark,
		"-A "+chainPostrouting+" -m comment --comment \"skiff ipvs service traffic requiring SNAT\" -j MASQUERADE --random-fully")
	return rs
}

// diffPayload is the iptables-restore --noflush input that turns old into
// new: every changed or new chain is declared (which flushes it) and
// refilled; chains gone are flushed and deleted after the rest. Nil when
// nothing changed.
func diffPayload(old, new ruleset) []byte {
	var buf bytes.Buffer
	for _, table := range []string{"nat", "filter"} {
		var decl, gone []string
		var lines []string
		for _, id := range sortedIDs(new, table) {
			if o, ok := old[id]; ok && slices.Equal(o, new[id]) {
				continue
			}
			decl = append(decl, id.chain)
			lines = append(lines, new[id]...)
		}
		for _, id := range sortedIDs(old, table) {
			if _, ok := new[id]; !ok {
				decl = append(decl, id.chain)
				gone = append(gone, id.chain)
			}
		}
		if len(decl) == 0 {
			continue
		}
		buf.WriteString("*" + table + "\n")
		for _, c := range decl {
			buf.WriteString(":" + c + " - [0:0]\n")
		}
		for _, l := range lines {
			buf.WriteString(l + "\n")
		}
		for _, c := range gone {
			buf.WriteString("-X " + c + "\n")
		}
		buf.WriteString("COMMIT\n")
	}
	if buf.Len() == 0 {
		return nil
	}
	return buf.Bytes()
}

func sortedIDs(rs ruleset, table string) []chainID {
	var ids []chainID
	for id := range rs {
		if id.table == table {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b chainID) int { return strings.Compare(a.chain, b.chain) })
	return ids
}

// rules runs the iptables tools for the backend.
type rules struct {
	ex   iptables.Exec
	mode iptables.Mode
}

func (r rules) restore(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if _, err := r.ex.Run(ctx, data, r.mode.Tool("iptables-restore"), "-w", "--noflush"); err != nil {
		return fmt.Errorf("ipvs: iptables-restore: %w", err)
	}
	return nil
}

// listChain returns a built-in chain's rules as `iptables -S` prints them,
// without the "-A CHAIN " prefix.
func (r rules) listChain(ctx context.Context, table, chain string) ([]string, error) {
	out, err := r.ex.Run(ctx, nil, r.mode.Tool("iptables"), "-w", "-t", table, "-S", chain)
	if err != nil {
		return nil, fmt.Errorf("ipvs: list %s %s: %w", table, chain, err)
	}
	var specs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "-A "+chain+" "); ok {
			specs = append(specs, strings.TrimSpace(s))
		}
	}
	return specs, sc.Err()
}

// ensureJumps inserts the jumps missing from the built-in chains (our
// chains must exist first).
func (r rules) ensureJumps(ctx context.Context) error {
	cache := map[string][]string{}
	for _, j := range jumps {
		key := j.table + "/" + j.chain
		specs, ok := cache[key]
		if !ok {
			var err error
			if specs, err = r.listChain(ctx, j.table, j.chain); err != nil {
				return err
			}
			cache[key] = specs
		}
		if slices.Contains(specs, j.spec) {
			continue
		}
		args := append([]string{"-w", "-t", j.table, "-I", j.chain}, strings.Fields(j.spec)...)
		if _, err := r.ex.Run(ctx, nil, r.mode.Tool("iptables"), args...); err != nil {
			return fmt.Errorf("ipvs: insert jump %s %s: %w", j.table, j.chain, err)
		}
	}
	return nil
}

// existing lists the chains of ours in a table (Cleanup, first sync).
func (r rules) existing(ctx context.Context, table string) ([]string, error) {
	out, err := r.ex.Run(ctx, nil, r.mode.Tool("iptables-save"), "-t", table)
	if err != nil {
		return nil, fmt.Errorf("ipvs: iptables-save -t %s: %w", table, err)
	}
	var chains []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, ":KUBE-IPVS") {
			name, _, _ := strings.Cut(l[1:], " ")
			chains = append(chains, name)
		}
	}
	return chains, sc.Err()
}

// cleanup deletes the jumps and every chain of ours.
func (r rules) cleanup(ctx context.Context) error {
	var errs []error
	for _, j := range jumps {
		specs, err := r.listChain(ctx, j.table, j.chain)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range specs {
			if s != j.spec {
				continue
			}
			args := append([]string{"-w", "-t", j.table, "-D", j.chain}, strings.Fields(j.spec)...)
			if _, err := r.ex.Run(ctx, nil, r.mode.Tool("iptables"), args...); err != nil {
				errs = append(errs, fmt.Errorf("ipvs: delete jump %s %s: %w", j.table, j.chain, err))
			}
		}
	}
	old := ruleset{}
	for _, table := range []string{"nat", "filter"} {
		chains, err := r.existing(ctx, table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range chains {
			old[chainID{table, c}] = []string{"?"}
		}
	}
	if err := r.restore(ctx, diffPayload(old, ruleset{})); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
