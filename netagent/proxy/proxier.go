package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Defaults of Config.
const (
	DefaultMinSyncPeriod = 100 * time.Millisecond
	DefaultSyncPeriod    = 30 * time.Second
)

// sliceIndex is the index the proxier adds to the EndpointSlice informer:
// "namespace/service-name" from the kubernetes.io/service-name label.
const sliceIndex = "proxy.service"

// ErrRunning is returned by a second call of Run.
var ErrRunning = errors.New("proxy: Run called more than once")

// Config is the node-level configuration of the proxy.
type Config struct {
	// NodeName: endpoints whose nodeName equals it are local.
	NodeName string
	// NodeIPs: this node's addresses (NodePorts and health checks answer
	// on them).
	NodeIPs []netip.Addr
	// ClusterCIDR: traffic to a ClusterIP from outside it is masqueraded.
	ClusterCIDR netip.Prefix
	// ServiceCIDR: packets to it that match no Service port are rejected.
	ServiceCIDR netip.Prefix
	// MinSyncPeriod: at most one sync per period (default 100 ms).
	MinSyncPeriod time.Duration
	// SyncPeriod: a full sync at least this often (default 30 s).
	SyncPeriod time.Duration
	// HealthTimeout: /healthz fails when the last successful sync is older
	// (default 2 × SyncPeriod).
	HealthTimeout time.Duration
	// Registerer receives the metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Conntrack deletes stale UDP entries; nil skips the clean-up.
	Conntrack Conntrack
	// Listen opens the healthCheckNodePort listeners; nil uses net.Listen.
	Listen ListenFunc
	// HealthCheckAddrs: where healthCheckNodePort servers listen; nil means
	// NodeIPs, and no NodeIPs means every address (":port").
	HealthCheckAddrs []netip.Addr
}

// Proxier watches Services and EndpointSlices and keeps a Backend in step.
//
// Handlers registered on the informers only record what changed; one
// runner goroutine (inside Run) builds the State and calls the Backend.
type Proxier struct {
	// These are effectively const after New.
	cfg      Config
	backend  Backend
	services *client.Informer
	slices   *client.Informer
	log      *slog.Logger
	tracker  *changeTracker
	runner   *runner
	metrics  *metrics
	health   *proxyHealth
	hc       *healthServers
	running  atomic.Bool

	// Owned by the runner goroutine.
	state    *State
	ports    map[string][]ServicePortName // "ns/name" -> its ports in state
	skipped  map[string]string            // "ns/name" -> last skip message logged
	needFull bool
	syncs    atomic.Uint64 // successful syncs, for tests and logs
}

// New returns a Proxier that programs backend from the two informers. It
// registers its handlers and an index on the informers, so call it before
// the informers run (later works too: they replay their caches).
func New(cfg Config, backend Backend, services, slices *client.Informer, log *slog.Logger) (*Proxier, error) {
	if backend == nil || services == nil || slices == nil {
		return nil, errors.New("proxy: New needs a backend and both informers")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MinSyncPeriod <= 0 {
		cfg.MinSyncPeriod = DefaultMinSyncPeriod
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	if cfg.SyncPeriod < cfg.MinSyncPeriod {
		return nil, fmt.Errorf("proxy: sync period %v is shorter than min sync period %v", cfg.SyncPeriod, cfg.MinSyncPeriod)
	}
	if cfg.HealthTimeout <= 0 {
		cfg.HealthTimeout = 2 * cfg.SyncPeriod
	}
	if cfg.Listen == nil {
		var lc net.ListenConfig
		cfg.Listen = lc.Listen
	}
	if cfg.HealthCheckAddrs == nil {
		cfg.HealthCheckAddrs = cfg.NodeIPs
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	log = log.With("component", "proxy", "mode", backend.Name())
	p := &Proxier{
		cfg:      cfg,
		backend:  backend,
		services: services,
		slices:   slices,
		log:      log,
		tracker:  newChangeTracker(time.Now()),
		metrics:  m,
		health:   &proxyHealth{timeout: cfg.HealthTimeout},
		ports:    map[string][]ServicePortName{},
		skipped:  map[string]string{},
		needFull: true,
	}
	p.hc = &healthServers{listen: cfg.Listen, addrs: cfg.HealthCheckAddrs, proxy: p.health, log: log}
	p.runner = newRunner(cfg.MinSyncPeriod, cfg.SyncPeriod, p.sync)
	wake := func() {
		m.lastQueued.SetToCurrentTime()
		p.runner.request()
	}
	slices.AddIndexer(sliceIndex, func(obj api.Object) []string {
		if sl, ok := obj.(*api.EndpointSlice); ok {
			if key := sliceService(sl); key != "" {
				return []string{key}
			}
		}
		return nil
	})
	services.AddEventHandler(p.tracker.serviceHandler(wake))
	slices.AddEventHandler(p.tracker.sliceHandler(wake))
	return p, nil
}

// Healthz is the proxy's /healthz: 200 while the last successful sync is
// recent (HealthTimeout), else 503, with kube-proxy's JSON body.
func (p *Proxier) Healthz() http.Handler { return p.health }

// Syncs returns how many syncs have completed successfully (rules,
// health check servers and conntrack clean-up).
func (p *Proxier) Syncs() uint64 { return p.syncs.Load() }

// Run waits until both informers have synced, then keeps the backend in
// step until ctx ends, and returns nil. It never syncs before both caches
// are complete. It does not remove the rules on return (an agent restart
// must not drop connections); Backend.Cleanup does that.
func (p *Proxier) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer p.hc.closeAll()
	p.log.Info("proxy: waiting for the Service and EndpointSlice caches")
	if !client.WaitForCacheSync(ctx, p.services.HasSynced, p.slices.HasSynced) {
		return nil
	}
	p.runner.loop(ctx)
	return nil
}

// portDiff is one Service port whose programming changed in a sync.
type portDiff struct {
	name           ServicePortName
	oldSP, newSP   *ServicePort
	oldEps, newEps []Endpoint
}

// sync is the runner's function: one State update and one Backend.Sync.
func (p *Proxier) sync(ctx context.Context, periodic bool) error {
	start := time.Now()
	ch := p.tracker.take()
	full := periodic || p.needFull || p.state == nil
	var diffs []portDiff
	if full {
		diffs = p.rebuildAll()
	} else {
		for _, key := range slices.Sorted(maps.Keys(ch.services)) {
			diffs = append(diffs, p.rebuildService(key)...)
		}
	}
	var changed []ServicePortName
	if !full {
		if len(diffs) == 0 && len(ch.triggers) == 0 {
			return nil // nothing this proxy programs changed
		}
		changed = make([]ServicePortName, 0, len(diffs))
		for _, d := range diffs {
			changed = append(changed, d.name)
		}
	}
	if err := p.backend.Sync(ctx, p.state, changed); err != nil {
		p.needFull = true
		p.tracker.putBack(changes{services: map[string]struct{}{}, triggers: ch.triggers})
		p.metrics.syncFailures.Inc()
		p.log.Error("proxy: sync failed; the next sync is full", "full", full, "err", err)
		return err
	}
	p.needFull = false
	end := time.Now()
	elapsed := end.Sub(start).Seconds()
	p.metrics.syncDuration.Observe(elapsed)
	if full {
		p.metrics.syncFullDuration.Observe(elapsed)
	} else {
		p.metrics.syncPartialDuration.Observe(elapsed)
	}
	p.metrics.lastSync.Set(float64(end.UnixNano()) / 1e9)
	for _, ts := range ch.triggers {
		for _, t := range ts {
			p.metrics.programming.Observe(end.Sub(t).Seconds())
		}
	}
	p.health.synced(end)
	p.hc.sync(ctx, p.healthServices())
	p.cleanConntrack(ctx, diffs)
	p.syncs.Add(1) // last: a sync counts once its clean-up is done
	p.log.Debug("proxy: synced", "full", full, "changed", len(diffs), "services", len(p.state.Services), "elapsed", end.Sub(start))
	return nil
}

// newState returns an empty State for this node.
func (p *Proxier) newState() *State {
	return &State{
		Services:    map[ServicePortName]*ServicePort{},
		Endpoints:   map[ServicePortName][]Endpoint{},
		NodeName:    p.cfg.NodeName,
		NodeIPs:     p.cfg.NodeIPs,
		ClusterCIDR: p.cfg.ClusterCIDR,
		ServiceCIDR: p.cfg.ServiceCIDR,
	}
}

// rebuildAll replaces the State with one built from the whole caches and
// returns the ports that differ from the previous one.
func (p *Proxier) rebuildAll() []portDiff {
	old := p.state
	if old == nil {
		old = p.newState()
	}
	p.state = p.newState()
	p.ports = map[string][]ServicePortName{}
	var keys []string
	for _, obj := range p.services.List() {
		if svc, ok := obj.(*api.Service); ok {
			keys = append(keys, svc.Namespace+"/"+svc.Name)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		p.loadService(key)
	}
	var diffs []portDiff
	for name := range p.state.Services {
		d, changed := diff(name, old, p.state)
		if !changed {
			// Keep the old values: stable pointers for backends.
			p.state.Services[name] = d.oldSP
			p.state.Endpoints[name] = d.oldEps
			continue
		}
		diffs = append(diffs, d)
	}
	for name := range old.Services {
		if p.state.Services[name] == nil {
			d, _ := diff(name, old, p.state)
			diffs = append(diffs, d)
		}
	}
	return diffs
}

// rebuildService re-reads one Service and its slices from the caches,
// patches the State and returns the ports that changed.
func (p *Proxier) rebuildService(key string) []portDiff {
	oldNames := p.ports[key]
	oldSPs := make(map[ServicePortName]*ServicePort, len(oldNames))
	oldEps := make(map[ServicePortName][]Endpoint, len(oldNames))
	for _, n := range oldNames {
		oldSPs[n] = p.state.Services[n]
		oldEps[n] = p.state.Endpoints[n]
		delete(p.state.Services, n)
		delete(p.state.Endpoints, n)
	}
	delete(p.ports, key)
	p.loadService(key)
	var diffs []portDiff
	names := append(slices.Clone(oldNames), p.ports[key]...)
	slices.SortFunc(names, ServicePortName.Compare)
	names = slices.Compact(names)
	for _, n := range names {
		d := portDiff{name: n, oldSP: oldSPs[n], oldEps: oldEps[n], newSP: p.state.Services[n], newEps: p.state.Endpoints[n]}
		if d.oldSP == nil && d.newSP == nil {
			continue
		}
		if d.oldSP != nil && d.newSP != nil && reflect.DeepEqual(d.oldSP, d.newSP) && slices.Equal(d.oldEps, d.newEps) {
			// Unchanged: keep the old values so that the State's
			// pointers stay stable for backends that compare them.
			p.state.Services[n] = d.oldSP
			p.state.Endpoints[n] = d.oldEps
			continue
		}
		diffs = append(diffs, d)
	}
	return diffs
}

// loadService adds the Service key's ports and endpoints to the State.
func (p *Proxier) loadService(key string) {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := p.services.Get(ns, name)
	if !ok {
		delete(p.skipped, key)
		return
	}
	svc, ok := obj.(*api.Service)
	if !ok {
		return
	}
	ports, skipped := ServicePortsFor(svc)
	if msg := strings.Join(skipped, "; "); msg != p.skipped[key] {
		if msg != "" {
			p.log.Info("proxy: not proxying some ports of a Service", "service", key, "why", msg)
			p.skipped[key] = msg
		} else {
			delete(p.skipped, key)
		}
	}
	if len(ports) == 0 {
		return
	}
	var sls []*api.EndpointSlice
	for _, obj := range p.slices.ByIndex(sliceIndex, key) {
		if sl, ok := obj.(*api.EndpointSlice); ok {
			sls = append(sls, sl)
		}
	}
	eps := EndpointsFor(ports, sls, p.cfg.NodeName)
	names := make([]ServicePortName, 0, len(ports))
	for _, sp := range ports {
		p.state.Services[sp.Name] = sp
		p.state.Endpoints[sp.Name] = eps[sp.Name]
		names = append(names, sp.Name)
	}
	p.ports[key] = names
}

// diff compares one port between two States; ok is false when equal.
func diff(name ServicePortName, old, cur *State) (portDiff, bool) {
	d := portDiff{name: name, oldSP: old.Services[name], newSP: cur.Services[name],
		oldEps: old.Endpoints[name], newEps: cur.Endpoints[name]}
	equal := (d.oldSP == nil) == (d.newSP == nil) &&
		(d.oldSP == nil || reflect.DeepEqual(d.oldSP, d.newSP)) && slices.Equal(d.oldEps, d.newEps)
	return d, !equal
}

// healthServices computes what each healthCheckNodePort server reports:
// the number of this node's ready endpoints of the Service (distinct
// addresses over its ports).
func (p *Proxier) healthServices() map[int32]healthService {
	out := map[int32]healthService{}
	local := map[int32]map[netip.Addr]bool{}
	for name, sp := range p.state.Services {
		if sp.HealthCheckNodePort == 0 {
			continue
		}
		port := sp.HealthCheckNodePort
		if _, ok := out[port]; !ok {
			out[port] = healthService{Namespace: name.Namespace, Name: name.Name}
			local[port] = map[netip.Addr]bool{}
		}
		for _, e := range p.state.Endpoints[name] {
			if e.IsLocal && e.Ready {
				local[port][e.IP] = true
			}
		}
	}
	for port, s := range out {
		s.LocalEndpoints = len(local[port])
		out[port] = s
	}
	return out
}

// cleanConntrack deletes the UDP conntrack entries the sync made stale.
func (p *Proxier) cleanConntrack(ctx context.Context, diffs []portDiff) {
	if p.cfg.Conntrack == nil {
		return
	}
	var filters []ConntrackFilter
	for _, d := range diffs {
		filters = append(filters, conntrackFilters(d.oldSP, d.newSP, d.oldEps, d.newEps)...)
	}
	if len(filters) == 0 {
		return
	}
	n, err := p.cfg.Conntrack.DeleteUDP(ctx, filters)
	if err != nil {
		p.log.Error("proxy: conntrack clean-up", "filters", len(filters), "err", err)
		return
	}
	p.log.Debug("proxy: conntrack clean-up", "filters", len(filters), "deleted", n)
}
