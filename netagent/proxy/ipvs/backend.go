package ipvs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
)

// DefaultScheduler is kube-proxy's default IPVS scheduler: round robin.
const DefaultScheduler = "rr"

// Schedulers are the IPVS schedulers of Linux (each is a module,
// ip_vs_<name>, loaded by the kernel on first use).
var Schedulers = []string{"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh", "twos"}

// Sysctls are the net.ipv4.vs settings the mode needs in the node's
// network namespace, as kube-proxy sets them: conntrack=1 so that iptables
// can masquerade IPVS traffic; expire_nodest_conn=1 so that the
// connections of a removed real server are dropped at their next packet
// (UDP flows then reach a new endpoint, as the conntrack clean-up does in
// the other modes); expire_quiescent_template=1 so that an affinity to a
// removed server ends too.
var Sysctls = [][2]string{
	{"net.ipv4.vs.conntrack", "1"},
	{"net.ipv4.vs.expire_nodest_conn", "1"},
	{"net.ipv4.vs.expire_quiescent_template", "1"},
}

// WriteSysctl sets a sysctl ("net.ipv4.vs.conntrack") through /proc/sys.
// /proc/sys/net belongs to the network namespace of the calling thread:
// run it on a thread inside the node's namespace (Config.Sysctl is
// usually WriteSysctl wrapped that way).
func WriteSysctl(key, value string) error {
	return os.WriteFile(filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/")), []byte(value), 0o644)
}

// Config configures the backend.
type Config struct {
	// IPVS programs the virtual servers. Required.
	IPVS Handle
	// Addrs holds the virtual IPs on the local interface. Required.
	Addrs AddrBinder
	// Exec runs the iptables tools (nil: the real ones here); Mode is the
	// iptables backend ("" detects it, as the iptables mode does).
	Exec iptables.Exec
	Mode iptables.Mode
	// Scheduler is --ipvs-scheduler ("" is rr).
	Scheduler string
	// Sysctl writes a net.ipv4.vs setting in the node's namespace (nil:
	// nothing is written; the kernel tests and RunProxy set one).
	Sysctl func(key, value string) error
	// Logger; nil discards.
	Logger *slog.Logger
}

// Backend is the ipvs proxy mode. Use New.
type Backend struct {
	h     Handle
	addrs AddrBinder
	ipt   rules
	sched string
	log   *slog.Logger

	mu sync.Mutex // serialises Sync, Cleanup and TraceRules' reads of state
	// written: the virtual servers in the kernel that are ours, as last
	// programmed.
	written map[vsKey]*vsSpec
	// byPort: the keys each Service port asked for; owner: the port that
	// programmed each key (two ports asking for one key: the last wins).
	byPort map[proxy.ServicePortName][]vsKey
	owner  map[vsKey]proxy.ServicePortName
	// plans: the last plan of every Service port (rendering the iptables
	// rules needs them all).
	plans map[proxy.ServicePortName]*portPlan
	// bound: the addresses on the interface.
	bound map[netip.Addr]bool
	// chains: the iptables chains as last written.
	chains   ruleset
	needFull bool
	stats    Stats
}

// Stats describes the last successful sync: how many kernel calls it
// made.
type Stats struct {
	Full bool
	// ServiceOps and DestOps count New/Update/Del calls; AddrOps binds
	// and unbinds.
	ServiceOps, DestOps, AddrOps int
	// RestoreBytes is the iptables-restore input (0: none ran).
	RestoreBytes int
	Total        time.Duration
}

var (
	_ proxy.Backend    = (*Backend)(nil)
	_ proxy.RuleTracer = (*Backend)(nil)
)

// New returns the backend. It checks the scheduler name, writes the
// sysctls and checks that the iptables tools run; it programs nothing
// until the first Sync.
func New(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.IPVS == nil || cfg.Addrs == nil {
		return nil, errors.New("ipvs: Config.IPVS and Config.Addrs are required")
	}
	if cfg.Scheduler == "" {
		cfg.Scheduler = DefaultScheduler
	}
	if !slices.Contains(Schedulers, cfg.Scheduler) {
		return nil, fmt.Errorf("ipvs: unknown scheduler %q (want one of %v)", cfg.Scheduler, Schedulers)
	}
	if cfg.Exec == nil {
		cfg.Exec = iptables.OSExec{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Mode == "" {
		m, err := iptables.Detect(ctx, cfg.Exec)
		if err != nil {
			return nil, fmt.Errorf("ipvs: %w", err)
		}
		cfg.Mode = m
	}
	if _, err := cfg.Exec.Run(ctx, nil, cfg.Mode.Tool("iptables-restore"), "--version"); err != nil {
		return nil, fmt.Errorf("ipvs: %s is not usable (the mode masquerades and rejects with iptables): %w", cfg.Mode.Tool("iptables-restore"), err)
	}
	if cfg.Sysctl != nil {
		for _, kv := range Sysctls {
			if err := cfg.Sysctl(kv[0], kv[1]); err != nil {
				return nil, fmt.Errorf("ipvs: sysctl %s=%s (is ip_vs loaded?): %w", kv[0], kv[1], err)
			}
		}
	}
	return &Backend{
		h:        cfg.IPVS,
		addrs:    cfg.Addrs,
		ipt:      rules{ex: cfg.Exec, mode: cfg.Mode},
		sched:    cfg.Scheduler,
		log:      cfg.Logger.With("component", "proxy/ipvs", "scheduler", cfg.Scheduler),
		written:  map[vsKey]*vsSpec{},
		byPort:   map[proxy.ServicePortName][]vsKey{},
		owner:    map[vsKey]proxy.ServicePortName{},
		plans:    map[proxy.ServicePortName]*portPlan{},
		bound:    map[netip.Addr]bool{},
		needFull: true,
	}, nil
}

// Name is "ipvs".
func (b *Backend) Name() string { return "ipvs" }

// Scheduler is the IPVS scheduler in use.
func (b *Backend) Scheduler() string { return b.sched }

// LastStats describes the last successful sync.
func (b *Backend) LastStats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Sync programs st: a full sync when changed is nil (or after a failure),
// else only the changed Service ports.
func (b *Backend) Sync(ctx context.Context, st *proxy.State, changed []proxy.ServicePortName) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := time.Now()
	b.stats = Stats{}
	full := changed == nil || b.needFull
	var err error
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

// fullSync reads the kernel's virtual servers and addresses and makes
// them what st asks: stale virtual servers (on our interface's addresses
// or a node address) and stale addresses are removed.
func (b *Backend) fullSync(ctx context.Context, st *proxy.State) error {
	if err := b.addrs.Ensure(); err != nil {
		return fmt.Errorf("ipvs: %w", err)
	}
	onDevice, err := b.addrs.List()
	if err != nil {
		return fmt.Errorf("ipvs: %w", err)
	}
	kernel, err := b.readKernel()
	if err != nil {
		return err
	}
	plans := map[proxy.ServicePortName]*portPlan{}
	want := map[vsKey]*vsSpec{}
	byPort := map[proxy.ServicePortName][]vsKey{}
	owner := map[vsKey]proxy.ServicePortName{}
	bind := map[netip.Addr]bool{}
	for _, n := range slices.SortedFunc(maps.Keys(st.Services), proxy.ServicePortName.Compare) {
		p := planPort(st, st.Services[n], b.sched)
		plans[n] = p
		for _, v := range p.vs {
			want[v.key] = v
			owner[v.key] = n
			byPort[n] = append(byPort[n], v.key)
		}
		for _, a := range p.bind {
			bind[a] = true
		}
	}
	// Addresses first, so a new virtual server answers at once.
	bound := map[netip.Addr]bool{}
	for _, a := range onDevice {
		bound[a] = true
	}
	for _, a := range slices.SortedFunc(maps.Keys(bind), netip.Addr.Compare) {
		if !bound[a] {
			if err := b.addrs.Add(a); err != nil {
				return fmt.Errorf("ipvs: %w", err)
			}
			b.stats.AddrOps++
			bound[a] = true
		}
	}
	b.bound = bound // kept up to date below, so a failure leaves it right
	written := map[vsKey]*vsSpec{}
	for k, v := range kernel {
		if bound[k.addr] || slices.Contains(st.NodeIPs, k.addr) || b.written[k] != nil {
			written[k] = v // ours: reconciled below
		}
	}
	b.written = written
	for _, k := range slices.SortedFunc(maps.Keys(want), vsKey.compare) {
		if err := b.apply(b.written[k], want[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(b.written), vsKey.compare) {
		if want[k] == nil {
			if err := b.delete(k); err != nil {
				return err
			}
		}
	}
	for _, a := range slices.SortedFunc(maps.Keys(bound), netip.Addr.Compare) {
		if !bind[a] {
			if err := b.addrs.Del(a); err != nil {
				return fmt.Errorf("ipvs: %w", err)
			}
			b.stats.AddrOps++
			delete(b.bound, a)
		}
	}
	b.byPort, b.owner, b.plans = byPort, owner, plans
	if b.chains == nil {
		// First full sync: chains an earlier run left, so that those no
		// longer needed are deleted.
		old := ruleset{}
		for _, table := range []string{"nat", "filter"} {
			chains, err := b.ipt.existing(ctx, table)
			if err != nil {
				return err
			}
			for _, c := range chains {
				old[chainID{table, c}] = []string{"?"} // differs from anything: rewritten
			}
		}
		b.chains = old
	}
	if err := b.writeRules(ctx, st); err != nil {
		return err
	}
	return b.ipt.ensureJumps(ctx)
}

// partialSync programs the changed Service ports only, from what the
// backend wrote last (the kernel is not read).
func (b *Backend) partialSync(ctx context.Context, st *proxy.State, changed []proxy.ServicePortName) error {
	bindChanged, rulesChanged := false, false
	for _, n := range changed {
		old := b.plans[n]
		var p *portPlan
		if sp := st.Services[n]; sp != nil {
			p = planPort(st, sp, b.sched)
			b.plans[n] = p
		} else {
			delete(b.plans, n)
		}
		if p == nil || old == nil || !slices.Equal(p.bind, old.bind) {
			bindChanged = true
		}
		if p == nil || old == nil || !p.rules.equal(&old.rules) || !slices.Equal(p.hairpin, old.hairpin) {
			rulesChanged = true
		}
		// Addresses of new virtual IPs first.
		if p != nil {
			for _, a := range p.bind {
				if !b.bound[a] {
					if err := b.addrs.Add(a); err != nil {
						return fmt.Errorf("ipvs: %w", err)
					}
					b.stats.AddrOps++
					b.bound[a] = true
				}
			}
		}
		keep := map[vsKey]bool{}
		var keys []vsKey
		if p != nil {
			for _, v := range p.vs {
				if err := b.apply(b.written[v.key], v); err != nil {
					return err
				}
				b.owner[v.key] = n
				keep[v.key] = true
				keys = append(keys, v.key)
			}
		}
		for _, k := range b.byPort[n] {
			if !keep[k] && b.owner[k] == n {
				if err := b.delete(k); err != nil {
					return err
				}
				delete(b.owner, k)
			}
		}
		if len(keys) == 0 {
			delete(b.byPort, n)
		} else {
			b.byPort[n] = keys
		}
	}
	if bindChanged {
		want := map[netip.Addr]bool{}
		for _, p := range b.plans {
			for _, a := range p.bind {
				want[a] = true
			}
		}
		for _, a := range slices.SortedFunc(maps.Keys(b.bound), netip.Addr.Compare) {
			if !want[a] {
				if err := b.addrs.Del(a); err != nil {
					return fmt.Errorf("ipvs: %w", err)
				}
				b.stats.AddrOps++
				delete(b.bound, a)
			}
		}
	}
	if !rulesChanged {
		return nil // the iptables rules depend on nothing that changed
	}
	return b.writeRules(ctx, st)
}

// writeRules renders the iptables chains and writes those that changed.
func (b *Backend) writeRules(ctx context.Context, st *proxy.State) error {
	plans := make([]*portPlan, 0, len(b.plans))
	for _, n := range slices.SortedFunc(maps.Keys(st.Services), proxy.ServicePortName.Compare) {
		if p := b.plans[n]; p != nil {
			plans = append(plans, p)
		}
	}
	rs := render(st, plans)
	data := diffPayload(b.chains, rs)
	if err := b.ipt.restore(ctx, data); err != nil {
		return err
	}
	b.stats.RestoreBytes = len(data)
	b.chains = rs
	return nil
}

// apply makes the virtual server cur (nil: absent) into want.
func (b *Backend) apply(cur, want *vsSpec) error {
	svc := want.service()
	if cur == nil {
		if err := b.h.NewService(svc); err != nil {
			return fmt.Errorf("ipvs: add virtual server %s: %w", want.key, err)
		}
		b.stats.ServiceOps++
		cur = &vsSpec{key: want.key, sched: want.sched, flags: want.flags, timeout: want.timeout, dests: map[netip.AddrPort]int{}}
		b.written[want.key] = cur
	} else if !cur.sameOptions(want) {
		if err := b.h.UpdateService(svc); err != nil {
			return fmt.Errorf("ipvs: update virtual server %s: %w", want.key, err)
		}
		b.stats.ServiceOps++
		cur.sched, cur.flags, cur.timeout = want.sched, want.flags, want.timeout
	}
	for _, ap := range slices.SortedFunc(maps.Keys(cur.dests), netip.AddrPort.Compare) {
		if _, ok := want.dests[ap]; ok {
			continue
		}
		if err := b.h.DelDestination(svc, destination(ap, cur.dests[ap])); err != nil {
			return fmt.Errorf("ipvs: delete real server %s from %s: %w", ap, want.key, err)
		}
		b.stats.DestOps++
		delete(cur.dests, ap)
	}
	for _, ap := range slices.SortedFunc(maps.Keys(want.dests), netip.AddrPort.Compare) {
		w := want.dests[ap]
		old, ok := cur.dests[ap]
		switch {
		case !ok:
			if err := b.h.NewDestination(svc, destination(ap, w)); err != nil {
				return fmt.Errorf("ipvs: add real server %s to %s: %w", ap, want.key, err)
			}
		case old != w:
			if err := b.h.UpdateDestination(svc, destination(ap, w)); err != nil {
				return fmt.Errorf("ipvs: update real server %s of %s: %w", ap, want.key, err)
			}
		default:
			continue
		}
		b.stats.DestOps++
		cur.dests[ap] = w
	}
	return nil
}

// delete removes a virtual server (and with it its real servers).
func (b *Backend) delete(k vsKey) error {
	cur := b.written[k]
	svc := k.service(b.sched, 0, 0)
	if cur != nil {
		svc = cur.service()
	}
	if err := b.h.DelService(svc); err != nil {
		return fmt.Errorf("ipvs: delete virtual server %s: %w", k, err)
	}
	b.stats.ServiceOps++
	delete(b.written, k)
	return nil
}

// readKernel lists every IPv4 virtual server and its real servers.
func (b *Backend) readKernel() (map[vsKey]*vsSpec, error) {
	svcs, err := b.h.GetServices()
	if err != nil {
		return nil, fmt.Errorf("ipvs: list virtual servers: %w", err)
	}
	out := make(map[vsKey]*vsSpec, len(svcs))
	for _, s := range svcs {
		k, ok := keyOf(s)
		if !ok {
			continue
		}
		v := &vsSpec{key: k, sched: s.SchedName, flags: s.Flags &^ FlagHashed, timeout: s.Timeout, dests: map[netip.AddrPort]int{}}
		if v.flags&FlagPersistent == 0 {
			v.timeout = 0
		}
		ds, err := b.h.GetDestinations(s)
		if err != nil {
			return nil, fmt.Errorf("ipvs: list real servers of %s: %w", k, err)
		}
		for _, d := range ds {
			ap, err := destKey(d)
			if err != nil {
				return nil, err
			}
			v.dests[ap] = d.Weight
		}
		out[k] = v
	}
	return out, nil
}

// Cleanup removes every virtual server on the interface's addresses or
// that the backend wrote, the interface itself, and the iptables chains
// and jumps.
func (b *Backend) Cleanup(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	onDevice, err := b.addrs.List()
	if err != nil {
		errs = append(errs, err)
	}
	mine := map[netip.Addr]bool{}
	for _, a := range onDevice {
		mine[a] = true
	}
	kernel, err := b.readKernel()
	if err != nil {
		errs = append(errs, err)
	}
	for _, k := range slices.SortedFunc(maps.Keys(kernel), vsKey.compare) {
		if mine[k.addr] || b.written[k] != nil {
			b.written[k] = kernel[k]
			if err := b.delete(k); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := b.addrs.Remove(); err != nil {
		errs = append(errs, fmt.Errorf("ipvs: %w", err))
	}
	if err := b.ipt.cleanup(ctx); err != nil {
		errs = append(errs, err)
	}
	b.written = map[vsKey]*vsSpec{}
	b.byPort = map[proxy.ServicePortName][]vsKey{}
	b.owner = map[vsKey]proxy.ServicePortName{}
	b.plans = map[proxy.ServicePortName]*portPlan{}
	b.bound = map[netip.Addr]bool{}
	b.chains = nil
	b.needFull = true
	return errors.Join(errs...)
}
