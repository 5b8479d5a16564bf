package netagent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/internal/version"
)

// startupGrace: an agent not ready this long after its start reports its
// node NotReady (until then a restarted agent keeps the node's Ready).
const startupGrace = time.Minute

// Run runs a node agent until ctx ends (see New and Agent.Run).
func Run(ctx context.Context, cfg Config, deps Deps) error {
	a, err := New(cfg, deps)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// resources the agent addresses.
type resources struct {
	nodes, pods, leases, serviceCIDRs, services, slices, events *api.ResourceInfo
}

func lookupResources() resources {
	rs := api.Resources()
	return resources{
		nodes:        api.Lookup(rs, "v1", "nodes"),
		pods:         api.Lookup(rs, "v1", "pods"),
		leases:       api.Lookup(rs, "coordination.k8s.io/v1", "leases"),
		serviceCIDRs: api.Lookup(rs, "networking.k8s.io/v1", "servicecidrs"),
		services:     api.Lookup(rs, "v1", "services"),
		slices:       api.Lookup(rs, "discovery.k8s.io/v1", "endpointslices"),
		events:       api.Lookup(rs, "v1", "events"),
	}
}

// Agent is one node agent. Build it with New and run it once with Run.
type Agent struct {
	cfg   Config
	deps  Deps
	log   *slog.Logger
	res   resources
	host  hostInfo
	creds credentials
	tok   *tokenTransport
	api   *client.Client
	state nodeState

	ready chan struct{} // closed once pods are being run

	// mu protects what the accessors read.
	mu          sync.Mutex
	node        *api.Node
	podCIDR     netip.Prefix
	serviceCIDR netip.Prefix
	gateway     netip.Addr
	dnsAddr     string
	pm          *podManager
	phase       string          // what the agent is doing before it is ready
	napi        *nodeAPI        // nil when the node API is off
	inf         *agentInformers // set once the pod network is up
	tracer      proxyTracer     // the proxy backend's rule reader
	metricsLn   *listener       // nil when off (metrics.go)
	healthzLn   *listener       // nil when off

	metrics *agentMetrics // the agent's registry and the proxy's healthz

	resMetrics *resourceMetrics // GET /metrics/resource (resourcemetrics.go); nil before the pods run
}

// setPhase records what a starting agent waits for (reported as the
// NotReady message if it takes long).
func (a *Agent) setPhase(p string) {
	a.mu.Lock()
	a.phase = p
	a.mu.Unlock()
}

// notReadyAfter reports the node NotReady if the agent is not ready
// within d (an existing node's Ready condition is kept until then).
func (a *Agent) notReadyAfter(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-a.ready:
	case <-time.After(d):
		a.mu.Lock()
		p := a.phase
		a.mu.Unlock()
		a.state.set(false, "KubeletNotReady", "the agent is not ready: "+p)
	}
}

// New checks cfg and deps and builds an agent.
func New(cfg Config, deps Deps) (*Agent, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if deps.Runtime == nil {
		return nil, errors.New("netagent: Deps.Runtime is required")
	}
	if deps.NewPodNetwork == nil {
		deps.NewPodNetwork = NewCNINetwork
	}
	a := &Agent{
		cfg: cfg, deps: deps, res: lookupResources(),
		log:   cfg.Logger.With("component", "agent", "node", cfg.NodeName),
		host:  readHostInfo(deps.Runtime.Name(), version.Get().GitVersion),
		creds: credentials{dir: filepath.Join(cfg.DataDir, agentStateDirectory)},
		state: nodeState{reason: "KubeletNotReady", message: "the agent is starting", changed: make(chan struct{}, 1)},
		phase: "starting",
		ready: make(chan struct{}),
	}
	tr, err := newTokenTransport(cfg.CAPEM)
	if err != nil {
		return nil, err
	}
	a.tok = tr
	if a.metrics, err = newAgentMetrics(cfg.Registerer); err != nil {
		return nil, err
	}
	a.api, err = client.New(client.Config{Server: cfg.Server, HTTPClient: &http.Client{Transport: tr},
		UserAgent: "skiff-agent/" + cfg.NodeName})
	if err != nil {
		return nil, fmt.Errorf("netagent: %w", err)
	}
	return a, nil
}

// Client is the agent's API client (authenticated as its node).
func (a *Agent) Client() *client.Client { return a.api }

// NodeName is the node's name.
func (a *Agent) NodeName() string { return a.cfg.NodeName }

// Ready is closed once the node is registered, its network and DNS are up
// and its pods are being run.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// PodCIDR, ServiceCIDR and Gateway are known once Ready is closed.
func (a *Agent) PodCIDR() netip.Prefix {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.podCIDR
}

// Gateway is the pod bridge's address: the node DNS address.
func (a *Agent) Gateway() netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gateway
}

// DNSAddr is where the node DNS serves (host:port).
func (a *Agent) DNSAddr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dnsAddr
}

// Pods is the number of pods the agent runs a worker for.
func (a *Agent) Pods() int {
	a.mu.Lock()
	pm := a.pm
	a.mu.Unlock()
	if pm == nil {
		return 0
	}
	return pm.workerCount()
}

// Run joins the cluster, registers the node, waits for its podCIDR,
// builds the pod network, serves the node DNS, heartbeats and runs the
// node's pods until ctx ends. Ending leaves the pods running: a restarted
// agent adopts them.
func (a *Agent) Run(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(a.cfg.DataDir, "pods"), 0o755); err != nil {
		return fmt.Errorf("netagent: %w", err)
	}
	// Every goroutine of the agent is on wg; an early return ends them
	// (cancel runs before the wait).
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if err := a.login(ctx); err != nil {
		return err
	}
	wg.Go(func() { a.rejoinLoop(ctx) })
	napi, err := a.startNodeAPI(ctx, &wg)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.napi = napi
	a.mu.Unlock()
	if err := a.startListeners(ctx, &wg); err != nil { // metrics.go
		return err
	}
	if err := a.register(ctx); err != nil {
		return fmt.Errorf("netagent: register: %w", err)
	}
	// The Lease heartbeats from the start; Ready follows the network.
	wg.Go(func() { a.heartbeat(ctx) })
	wg.Go(func() { a.notReadyAfter(ctx, startupGrace) })
	a.setPhase("waiting for a podCIDR")

	podCIDR, err := a.waitPodCIDR(ctx)
	if err != nil {
		return fmt.Errorf("netagent: %w", err)
	}
	svcCIDR, err := a.readServiceCIDR(ctx)
	if err != nil {
		return fmt.Errorf("netagent: %w", err)
	}
	a.log.Info("node network", "podCIDR", podCIDR, "serviceCIDR", svcCIDR)
	a.setPhase("setting up the pod network")
	net, err := a.deps.NewPodNetwork(ctx, NetworkParams{DataDir: a.cfg.DataDir, PodCIDR: podCIDR, ServiceCIDR: svcCIDR,
		MTU: a.podMTU(), Logger: a.log.With("component", "cni")})
	if err != nil {
		return fmt.Errorf("netagent: pod network: %w", err)
	}
	if err := a.retry(ctx, "setting up the pod network", func() error {
		return a.deps.NodeNetNS.do(func() error { return net.Setup(ctx) })
	}); err != nil {
		return fmt.Errorf("netagent: pod network setup: %w", err)
	}
	gw := net.Gateway()
	a.mu.Lock()
	a.podCIDR, a.serviceCIDR, a.gateway = podCIDR, svcCIDR, gw
	a.mu.Unlock()

	// Every informer is registered before the one Start (informers.go).
	inf := a.registerInformers(client.NewSharedInformers(a.api))
	nodePods := inf.nodePods
	a.mu.Lock()
	a.inf = inf // for trace
	a.mu.Unlock()

	if err := a.startPodRoutes(ctx, &wg, inf.nodes, podCIDR); err != nil { // podroutes.go
		return err
	}

	dnsRun, err := a.listenDNS(inf, gw, podCIDR, svcCIDR)
	if err != nil {
		return err
	}

	rec := a.deps.Recorder
	if rec == nil {
		r := record.NewRecorder(a.api, "kubelet", a.log.With("component", "events"))
		wg.Go(func() { _ = r.Run(ctx) })
		rec = r
	}
	pm := newPodManager(&a.cfg, a.deps.Runtime, net, a.deps.NodeNetNS, a.api, nodePods, rec, gw)
	pm.services = inf.services
	pm.cg = a.deps.Cgroups
	nodePods.AddEventHandler(pm.handlers())
	a.mu.Lock()
	a.pm = pm
	a.resMetrics = newResourceMetrics(a.deps.Runtime, nodePods, a.log.With("component", "resource-metrics"))
	a.mu.Unlock()

	inf.set.Start(ctx)
	defer inf.set.Wait()
	if a.deps.Proxy != nil {
		p := ProxyParams{NodeName: a.cfg.NodeName, NodeIPs: a.cfg.NodeIPs, Mode: a.cfg.ProxyMode, IPVSScheduler: a.cfg.IPVSScheduler, PodCIDR: podCIDR, ClusterCIDR: a.cfg.ClusterCIDR,
			EgressMasquerade: !a.cfg.NoEgressMasquerade,
			ServiceCIDR:      svcCIDR, Client: a.api, Informers: inf.set, Services: inf.services, EndpointSlices: inf.slices,
			NetNS: a.deps.NodeNetNS, Logger: a.log.With("component", "proxy"),
			OnBackend: a.setTracer, OnEgress: a.setEgressReader, Registerer: a.metrics.reg, OnHealthz: a.metrics.setHealthz}
		wg.Go(func() {
			if err := a.deps.Proxy(ctx, p); err != nil && ctx.Err() == nil {
				a.log.Error("service proxy stopped", "err", err)
			}
		})
	}
	wg.Go(func() {
		if err := dnsRun(ctx); err != nil && ctx.Err() == nil {
			a.log.Error("node DNS stopped", "err", err)
		}
	})
	a.setPhase("waiting for the pods of the node")
	if !client.WaitForCacheSync(ctx, nodePods.HasSynced) {
		return nil
	}
	pm.start(ctx, nodePods.List())
	pm.wg.Go(func() { pm.run(ctx) })
	wg.Go(func() { pm.relist(ctx) })
	wg.Go(func() { pm.status.run(ctx, 4) })
	// claims.go: the directories of deleted local-path volumes.
	wg.Go(func() { runVolumeCleanup(ctx, a.api, a.storageDir(), a.log.With("component", "volumes")) })
	defer pm.wg.Wait()
	a.state.set(true, "KubeletReady", "skiff agent is posting ready status")
	close(a.ready)
	a.log.Info("agent ready", "pods", pm.workerCount(), "dns", a.DNSAddr(), "gateway", gw)
	<-ctx.Done()
	a.log.Info("agent stopping; pods keep running")
	return nil
}

// login makes sure the agent holds a node token: the cached one if the
// server accepts it, else a fresh one from the join endpoint.
func (a *Agent) login(ctx context.Context) error {
	if tok := a.creds.cachedToken(); tok != "" {
		a.tok.set(tok)
		var n api.Node
		err := a.api.Get(ctx, a.res.nodes, "", a.cfg.NodeName, &n)
		if err == nil || client.IsNotFound(err) {
			return nil
		}
		if !client.IsUnauthorized(err) {
			// The server may be down: keep the cached token and go on
			// (the pods keep running; requests retry).
			a.log.Warn("could not check the cached node token; using it", "err", err)
			return nil
		}
		a.log.Info("the cached node token was rejected; joining again")
		a.creds.dropToken()
	}
	return a.retry(ctx, "joining the cluster", func() error {
		err := a.join(ctx)
		if client.IsForbidden(err) || client.IsUnauthorized(err) || client.IsInvalid(err) {
			return fatalJoin{err}
		}
		return err
	})
}

// fatalJoin wraps a join refusal that a retry cannot fix.
type fatalJoin struct{ err error }

func (f fatalJoin) Error() string { return f.err.Error() }
func (f fatalJoin) Unwrap() error { return f.err }

func (a *Agent) join(ctx context.Context) error {
	if a.cfg.Token == "" {
		return fatalJoin{errors.New("netagent: no join token (--token) and no usable cached node token")}
	}
	pw, err := a.creds.password()
	if err != nil {
		return err
	}
	resp, err := Join(ctx, a.cfg.Server, a.cfg.CAPEM, a.cfg.Token, a.cfg.NodeName, pw)
	if err != nil {
		return err
	}
	if err := a.creds.saveToken(resp.Token); err != nil {
		return fmt.Errorf("netagent: save node token: %w", err)
	}
	a.tok.set(resp.Token)
	a.log.Info("joined the cluster", "user", resp.User)
	return nil
}

// rejoinLoop joins again whenever the server answers 401 (the token was
// replaced by another join of this node, or the server lost its record).
func (a *Agent) rejoinLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.tok.unauthorized:
		}
		if err := a.join(ctx); err != nil && ctx.Err() == nil {
			a.log.Error("re-joining after a 401 failed", "err", err)
		}
		select { // at most one join per 5 s
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

// authErr passes err through, giving a fatal join error its cause.
func (a *Agent) authErr(err error) error {
	var f fatalJoin
	if errors.As(err, &f) {
		return f.err
	}
	return err
}

// tokenTransport sends the current node token and reports 401s.
type tokenTransport struct {
	base         http.RoundTripper
	token        atomic.Pointer[string]
	unauthorized chan struct{}
}

func newTokenTransport(caPEM []byte) (*tokenTransport, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("netagent: the server CA holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	return &tokenTransport{
		base: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			TLSClientConfig:     tlsCfg,
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		},
		unauthorized: make(chan struct{}, 1),
	}, nil
}

func (t *tokenTransport) set(tok string) { t.token.Store(&tok) }

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if p := t.token.Load(); p != nil && *p != "" {
		r.Header.Set("Authorization", "Bearer "+*p)
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		select {
		case t.unauthorized <- struct{}{}:
		default:
		}
	}
	return resp, err
}
