package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/apiextensions"
	"github.com/skiff-dev/skiff/apiserver/ipalloc"
	"github.com/skiff-dev/skiff/apiserver/patch"
	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/apiserver/portalloc"
	"github.com/skiff-dev/skiff/apiserver/priorityadmission"
	"github.com/skiff-dev/skiff/apiserver/saadmission"
	"github.com/skiff-dev/skiff/apiserver/satoken"
	"github.com/skiff-dev/skiff/apiserver/svcalloc"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/internal/connlimit"
	"github.com/skiff-dev/skiff/internal/ratelog"
	"github.com/skiff-dev/skiff/internal/version"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/metricsapi"
	"github.com/skiff-dev/skiff/store"
)

// Server is a running control plane.
type Server struct {
	cfg      config.Server
	parsed   config.Parsed
	lock     *dataDirLock // the data dir's (datadir.go), released by close
	log      *slog.Logger
	bundle   *pki.Bundle
	store    *store.Bolt
	kv       store.Interface // store, with Secrets encrypted at rest (encryption.go)
	api      *apiserver.Server
	hook     *svcalloc.Hook
	ln       net.Listener
	conns    *connlimit.Listener // the accept gate over ln (conns.go)
	http     *http.Server
	ready    atomic.Bool
	url      string
	resource []*api.ResourceInfo
	crds     *apiextensions.Registry // crds.go
	ctrl     *controllers
	dns      *clusterDNS   // nil without --dns-listen (dns.go)
	nodes    *nodeTokens   // per-node credentials (nodejoin.go)
	agent    *builtinAgent // nil with --disable-agent (agent.go)
	nodeAPI  *nodeAPI      // logs and traces from the agents (nodeapi.go)
	auth     *tokenAuth
	graph    *nodeGraph           // the node authorizer's pod references (nodegraph.go)
	stopBg   context.CancelFunc   // ends the goroutines below
	bg       sync.WaitGroup       // the node graph's watch, the metrics scraper
	reg      *prometheus.Registry // /metrics: the API server's, DNS's and the built-in agent's
}

// Run starts a control plane and blocks until ctx ends, then shuts it down.
// Its log repeats a line (the same message from the same component) at
// most a few times a second, and then says how many it suppressed
// (internal/ratelog): a full disk fails every write.
func Run(ctx context.Context, cfg config.Server) error {
	log := slog.New(ratelog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}), ratelog.Options{}))
	// Each connection is a file descriptor: use all the process may have.
	if n, err := connlimit.RaiseFileLimit(); err != nil {
		log.Warn("could not raise the file descriptor limit", "limit", n, "err", err)
	} else {
		log.Info("file descriptor limit", "limit", n)
	}
	s, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	log.Info("skiff server ready", "url", s.URL(), "kubeconfig", s.bundle.KubeconfigPath)
	<-ctx.Done()
	log.Info("shutting down")
	return s.Stop()
}

// Start brings the control plane up and returns once the API is listening
// and the built-in objects exist. Stop shuts it down.
func Start(ctx context.Context, cfg config.Server, log *slog.Logger) (_ *Server, err error) {
	p, err := cfg.Parse()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, parsed: p, log: log}
	crdInfo := s.crdResource() // crds.go
	s.resource = append(api.Resources(), crdInfo)
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	// datadir.go: the data dir's lock, then its database's presence,
	// before anything in it is written.
	if s.lock, err = lockDataDir(cfg.DataDir, true); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := checkStoreFile(cfg.DataDir, cfg.ResetStore, log); err != nil {
		return nil, err
	}

	// Listen first so that port 0 resolves before the kubeconfig is written.
	s.ln, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("server: listen: %w", err)
	}
	port := s.ln.Addr().(*net.TCPAddr).Port
	s.url = fmt.Sprintf("https://%s", net.JoinHostPort(loopbackFor(p.ListenHost), fmt.Sprint(port)))

	firstStart := !dashboardTokenExists(cfg.DataDir) // web.go
	s.bundle, err = pki.Ensure(ctx, cfg.DataDir, pki.Options{SANs: s.sans(), Server: s.url, Logger: log.With("component", "pki")})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "db"), 0o700); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.store, err = store.OpenBolt(ctx, filepath.Join(cfg.DataDir, dbFile), store.BoltOptions{
		HistorySize: cfg.HistorySize, NoSync: cfg.NoSync, Logger: log.With("component", "store"),
	})
	if err != nil {
		return nil, storeOpenError(cfg.DataDir, filepath.Join(cfg.DataDir, dbFile), err) // datadir.go
	}
	if s.kv, _, err = openSecretsStore(ctx, cfg.DataDir, s.resource, s.store, cfg.SecretsEncryption, log.With("component", "store")); err != nil {
		return nil, err
	}

	ips, err := ipalloc.New(p.ServiceCIDR)
	if err != nil {
		return nil, fmt.Errorf("server: --service-cidr: %w", err)
	}
	ports, err := portalloc.New(p.PortBase, p.PortSize)
	if err != nil {
		return nil, fmt.Errorf("server: --node-port-range: %w", err)
	}
	// The hook writes IPAddress objects through the API server, which is
	// built after it: lateWriter breaks the cycle.
	w := &lateWriter{}
	s.hook, err = svcalloc.New(w, ips, ports, s.resource)
	if err != nil {
		return nil, err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.reg = reg
	if err := s.listenDNS(reg); err != nil {
		return nil, err
	}
	s.nodes, err = loadNodeTokens(cfg.DataDir, log.With("component", "nodejoin"))
	if err != nil {
		return nil, err
	}
	clientCert, err := pki.ClientCert(cfg.DataDir, netagent.NodeAPIClientName, time.Now())
	if err != nil {
		return nil, fmt.Errorf("server: node API client: %w", err)
	}
	s.nodeAPI = newNodeAPI(s.kv, s.resource, clientCert, s.nodes, log.With("component", "nodeapi"))
	s.auth = newTokenAuth(s.bundle.AdminToken, s.bundle.NodeToken, s.bundle.DashboardToken, s.nodes)
	saKey, err := pki.ServiceAccountKey(cfg.DataDir, log.With("component", "pki"))
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	signer, err := satoken.New(saKey, "", nil)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.auth.sa = newSATokens(signer, s.kv, resourceTable(s.resource), log.With("component", "satoken"))
	issuerPaths, err := s.auth.sa.discoveryPaths()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	custom := &lateCustom{}
	crds := apiextensions.NewRegistry(s.kv, crdInfo, custom, log.With("component", "apiextensions"))
	s.crds = crds
	podInfo := resourceTable(s.resource)["pods"]
	s.graph = newNodeGraph(log.With("component", "nodegraph"))
	bgCtx, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	s.stopBg = stopBg
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.graph.run(bgCtx, s.kv, podsPrefix(apiserver.KeyFor(podInfo, "", "")))
	}()
	// The resource metrics pipeline (metrics.k8s.io, as metrics-server):
	// every Ready node's /metrics/resource scraped in the background.
	metricsStore := metricsapi.NewStore()
	mobj := metricsObjects{st: s.kv, pods: podInfo, nodes: resourceTable(s.resource)["nodes"], napi: s.nodeAPI}
	scraper := &metricsapi.Scraper{Source: mobj, Store: metricsStore, Resolution: cfg.MetricResolution,
		Log: log.With("component", "metrics")}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		scraper.Run(bgCtx)
	}()
	metricsAPI := &metricsapi.API{Store: metricsStore, Objects: mobj}
	// saadmission mounts the ServiceAccount token volume in new pods.
	saHook, err := saadmission.New(s.resource)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	// priorityadmission resolves pods' priorityClassName into spec.priority.
	prioHook, err := priorityadmission.New(s.resource)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	authz := authorizer{pods: storePods{st: s.kv, info: podInfo}, graph: s.graph,
		volumes: storeVolumes{st: s.kv, info: resourceTable(s.resource)["persistentvolumes"]}}
	v := version.Get()
	s.api, err = apiserver.New(apiserver.Config{
		Store: s.kv,
		// autoscaling/v1 HorizontalPodAutoscalers too, served by conversion
		// from the stored autoscaling/v2 objects (api/autoscaling_v1.go).
		Resources:     append(slices.Clone(s.resource), api.ServedByConversion()...),
		Authenticator: s.auth,
		PodLogs:       s.nodeAPI.PodLogs,
		PodStream:     s.nodeAPI.PodStream,
		Authorizer:    authz,
		Actions: map[string]*apiserver.Action{
			"serviceaccounts/token": s.auth.sa.action(), // satoken.go
			// reviews.go
			"selfsubjectreviews.authentication.k8s.io":      selfSubjectReview(),
			"selfsubjectaccessreviews.authorization.k8s.io": selfSubjectAccessReview(authz),
			"selfsubjectrulesreviews.authorization.k8s.io":  selfSubjectRulesReview(s.resource),
		},
		Paths: issuerPaths,
		Reads: metricsAPI.Reads(), // metrics.go
		Hooks: map[string]apiserver.TxnHook{
			"services": s.hook, "ipaddresses.networking.k8s.io": s.hook,
			"nodes": nodeRestriction{}, "leases.coordination.k8s.io": nodeRestriction{},
			"pods":                              priorityadmission.ValidatingChain{Chain: priorityadmission.Chain{saHook, prioHook}},
			"priorityclasses.scheduling.k8s.io": prioHook,
			"persistentvolumeclaims":            s.storageHook(), "persistentvolumes": s.storageHook(), // storage.go
			"customresourcedefinitions.apiextensions.k8s.io": crds.Hook(), // crds.go
		},
		Patcher:    patcher,
		Registerer: reg,
		Gatherer:   reg,
		Logger:     log.With("component", "apiserver"),
		Version: apiserver.VersionInfo{
			Major: v.Major, Minor: v.Minor, GitVersion: v.GitVersion, GitCommit: v.GitCommit,
			GitTreeState: v.GitTreeState, BuildDate: v.BuildDate, GoVersion: v.GoVersion,
			Compiler: v.Compiler, Platform: v.Platform,
		},
		Ready: s.ready.Load,
		// config's 0 is no limit, apiserver's is its default.
		MaxRequestsInFlight:         noLimitIfZero(cfg.MaxRequestsInFlight),
		MaxMutatingRequestsInFlight: noLimitIfZero(cfg.MaxMutatingRequestsInFlight),
		BodyTimeout:                 cfg.RequestBodyTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	w.srv = s.api
	custom.srv = s.api
	if err := crds.Sync(ctx); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		crds.Run(bgCtx)
	}()
	rep, err := s.hook.Repair(ctx, s.kv)
	if err != nil {
		return nil, fmt.Errorf("server: repair: %w", err)
	}
	log.Info("allocator repair done", "services", rep.Services, "ips", rep.IPs, "nodePorts", rep.Ports,
		"freed", len(rep.FreedIPAddrs), "restored", len(rep.RestoredIPAddrs), "conflicts", len(rep.Conflicts))
	for _, c := range rep.Conflicts {
		log.Warn("allocation conflict", "detail", c)
	}

	tlsCfg := s.bundle.ServerTLS.Clone()
	tlsCfg.NextProtos = []string{"h2", "http/1.1"}
	// The dashboard (web.go) answers /, /favicon.ico and /ui/ in front of
	// everything else, which it calls in process.
	h, err := s.withDashboard(withJoin(&joinHandler{joinToken: s.bundle.NodeToken, tokens: s.nodes, log: log.With("component", "nodejoin")},
		withTrace(&traceHandler{auth: s.auth, api: s.nodeAPI}, s.api.Handler())))
	if err != nil {
		return nil, err
	}
	s.http = s.newHTTPServer(h) // conns.go: caps, timeouts, error log
	s.http.TLSConfig = tlsCfg
	go func() {
		if err := s.http.Serve(tls.NewListener(s.conns, tlsCfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("https server stopped", "err", err)
		}
	}()

	cl, err := s.Client()
	if err != nil {
		return nil, err
	}
	if err := s.bootstrap(ctx, cl); err != nil {
		return nil, fmt.Errorf("server: bootstrap: %w", err)
	}
	if err := s.bootstrapStorage(ctx, cl); err != nil { // storage.go
		return nil, fmt.Errorf("server: bootstrap: %w", err)
	}
	s.startControllers(ctx, cl)
	s.ready.Store(true)
	// web.go
	s.logDashboard(firstStart)
	if err := s.startAgent(ctx); err != nil { // agent.go
		return nil, err
	}
	return s, nil
}

// URL is the API's https URL (on loopback when listening on all addresses).
func (s *Server) URL() string { return s.url }

// Bundle is the TLS material and tokens.
func (s *Server) Bundle() *pki.Bundle { return s.bundle }

// Client returns an admin client over loopback HTTPS.
func (s *Server) Client() (*client.Client, error) {
	return client.New(client.Config{Server: s.url, CAPEM: s.bundle.CACertPEM, Token: s.bundle.AdminToken, UserAgent: "skiff-server"})
}

// Stop shuts down gracefully: controllers, HTTP (bounded by
// ShutdownTimeout), then the store.
func (s *Server) Stop() error {
	s.stopAgent()
	s.ready.Store(false)
	s.stopControllers()
	var errs []error
	if s.http != nil {
		// Watches never end by themselves; Shutdown waits for handlers.
		s.api.CloseWatches()
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		defer cancel()
		if err := s.http.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			// Requests still running after the timeout are cut: a slow
			// client does not make the stop unclean.
			open, _ := s.conns.Stats()
			s.http.Close()
			s.log.Warn("shutdown: connections still busy after the shutdown timeout were cut",
				"connections", open, "timeout", s.cfg.ShutdownTimeout)
		} else if err != nil {
			errs = append(errs, fmt.Errorf("server: http shutdown: %w", err))
			s.http.Close()
		}
	}
	if err := s.close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (s *Server) close() error {
	if s.dns != nil {
		s.dns.close()
	}
	if s.ln != nil && s.http == nil {
		s.ln.Close()
	}
	if s.stopBg != nil {
		s.stopBg()
		s.bg.Wait()
		s.stopBg = nil
	}
	var err error
	if s.store != nil {
		err = s.store.Close()
		s.store = nil
	}
	// Last: the store is closed, so the next holder may open it.
	return errors.Join(err, s.lock.release())
}

// sans are the serving certificate's names beyond localhost/127.0.0.1.
func (s *Server) sans() []string {
	out := append([]string(nil), s.cfg.TLSSANs...)
	out = append(out, s.cfg.NodeIP...)
	if h := s.parsed.ListenHost; h != "" && h != "0.0.0.0" && h != "::" {
		out = append(out, h)
	}
	// Pods reach the API as the kubernetes Service (its ClusterIP, the
	// first of --service-cidr, is KUBERNETES_SERVICE_HOST) and by its
	// names, as kube-apiserver's certificate carries them.
	if ip, err := ipalloc.New(s.parsed.ServiceCIDR); err == nil {
		out = append(out, ip.FirstIP().String())
	}
	out = append(out, "kubernetes", "kubernetes.default", "kubernetes.default.svc")
	if d := strings.TrimSuffix(s.cfg.ClusterDomain, "."); d != "" {
		out = append(out, "kubernetes.default.svc."+d)
	}
	return out
}

// loopbackFor maps a wildcard listen host to a loopback one for clients.
func loopbackFor(host string) string {
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return host
}

// noLimitIfZero maps a flag's 0 (no limit) to apiserver.Config's -1.
func noLimitIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// lateWriter forwards to the API server once it exists.
type lateWriter struct{ srv *apiserver.Server }

func (w *lateWriter) PutObject(tx store.Txn, info *api.ResourceInfo, obj api.Object) error {
	return w.srv.PutObject(tx, info, obj)
}

func (w *lateWriter) DeleteObject(tx store.Txn, info *api.ResourceInfo, ns, name string) error {
	return w.srv.DeleteObject(tx, info, ns, name)
}

// patcher adapts apiserver/patch to the API server.
func patcher(_ context.Context, contentType string, original, p []byte) ([]byte, error) {
	t, ok := patch.ParseContentType(contentType)
	if !ok {
		return nil, apiserver.NewUnsupportedMediaType(contentType, string(patch.MergePatch), string(patch.JSONPatch), string(patch.StrategicMergePatch))
	}
	out, err := patch.Apply(t, original, p)
	if err != nil {
		switch patch.StatusCode(err) {
		case http.StatusUnsupportedMediaType:
			return nil, apiserver.NewUnsupportedMediaType(contentType)
		case http.StatusBadRequest:
			return nil, apiserver.NewBadRequest(err.Error())
		case http.StatusUnprocessableEntity:
			return nil, apiserver.NewStatus(http.StatusUnprocessableEntity, api.StatusReasonInvalid, "the server rejected our request due to an error in our request: "+err.Error())
		}
		return nil, apiserver.NewInternal(err)
	}
	return out, nil
}
