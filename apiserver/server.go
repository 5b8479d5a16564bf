package apiserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/store"
)

// Server serves the Kubernetes-shaped REST API over a store.
type Server struct {
	store    store.Interface
	authn    Authenticator
	authz    Authorizer
	log      *slog.Logger
	now      func() time.Time
	maxBody  int64
	bodyTime time.Duration // BodyTimeout
	inflight *inflight
	patcher  Patcher
	podLogs  PodLogsFunc
	// podStream serves the upgrades of pods/exec, attach, portforward.
	podStream PodStreamFunc
	ready     func() bool
	version   VersionInfo
	gatherer  prometheus.Gatherer
	metrics   *metrics

	// These are effectively const after New.
	groups      map[string]*groupVersion // "v1", "apps/v1"
	groupNames  []string                 // non-core groups, sorted
	byPtr       map[*api.ResourceInfo]*resource
	byQualified map[string]*resource
	nsRes       *resource               // core namespaces, nil when not served
	paths       map[string]http.Handler // Config.Paths

	// custom is the custom resources served now (SetCustomResources),
	// replaced whole; never nil after New.
	custom atomic.Pointer[customSet]

	bufPool sync.Pool // *bufio.Writer for list responses
	handler http.Handler

	// watchesClosed is closed by CloseWatches: every watch stream ends.
	watchesClosed chan struct{}
	closeWatches  sync.Once
}

// CloseWatches ends every open watch stream and refuses new ones, so that a
// graceful shutdown (http.Server.Shutdown, which does not cancel running
// handlers) is not held up by long-lived watches; clients re-watch
// elsewhere or after the restart. Other requests are not affected.
func (s *Server) CloseWatches() {
	s.closeWatches.Do(func() { close(s.watchesClosed) })
}

type groupVersion struct {
	group, version string
	resources      map[string]*resource
	order          []*resource
	actions        map[string]*Action   // resources of their own (actions.go)
	reads          map[string]*ReadOnly // computed read-only resources (reads.go)
}

// New checks cfg and builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("apiserver: Config.Store is required")
	}
	if cfg.Authenticator == nil {
		return nil, errors.New("apiserver: Config.Authenticator is required")
	}
	s := &Server{
		watchesClosed: make(chan struct{}),
		store:         cfg.Store,
		authn:         cfg.Authenticator,
		authz:         cfg.Authorizer,
		log:           cfg.Logger,
		now:           cfg.Now,
		maxBody:       cfg.MaxBodyBytes,
		patcher:       cfg.Patcher,
		podLogs:       cfg.PodLogs,
		podStream:     cfg.PodStream,
		ready:         cfg.Ready,
		version:       cfg.Version,
		groups:        make(map[string]*groupVersion),
		byPtr:         make(map[*api.ResourceInfo]*resource),
		byQualified:   make(map[string]*resource),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	s.bodyTime = cfg.BodyTimeout
	if s.bodyTime <= 0 {
		s.bodyTime = DefaultBodyTimeout
	}
	if s.patcher == nil {
		s.patcher = defaultPatcher
	}
	s.fillVersion()
	reg, gat := cfg.Registerer, cfg.Gatherer
	if reg == nil && gat == nil {
		r := prometheus.NewRegistry()
		reg, gat = r, r
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if gat == nil {
		if g, ok := reg.(prometheus.Gatherer); ok {
			gat = g
		} else {
			gat = prometheus.NewRegistry() // metrics go to reg only
		}
	}
	s.gatherer = gat
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.inflight = newInflight(orDefault(cfg.MaxRequestsInFlight, DefaultMaxRequestsInFlight),
		orDefault(cfg.MaxMutatingRequestsInFlight, DefaultMaxMutatingRequestsInFlight), m.inflight)

	hooksUsed := make(map[string]bool)
	for _, info := range cfg.Resources {
		q := qualifiedName(info)
		// A resource served by conversion (autoscaling/v1
		// HorizontalPodAutoscalers) shares its stored version's name,
		// hook and objects; lookups by name find the stored version.
		converted := info.Conversion != nil
		if _, dup := s.byQualified[q]; dup && !converted {
			return nil, fmt.Errorf("apiserver: resource %s listed twice", q)
		}
		hook := cfg.Hooks[q]
		hooksUsed[q] = hooksUsed[q] || hook != nil
		r, err := newResource(info, hook)
		if err != nil {
			return nil, err
		}
		s.byPtr[info] = r
		if !converted {
			s.byQualified[q] = r
		}
		if r.isNamespaces {
			s.nsRes = r
		}
		gvKey := info.GroupVersion()
		gv := s.groups[gvKey]
		if gv == nil {
			gv = &groupVersion{group: info.Group, version: info.Version, resources: make(map[string]*resource)}
			s.groups[gvKey] = gv
			if info.Group != "" {
				s.groupNames = append(s.groupNames, info.Group)
			}
		}
		gv.resources[info.Resource] = r
		gv.order = append(gv.order, r)
	}
	for k := range cfg.Hooks {
		if _, ok := hooksUsed[k]; !ok {
			return nil, fmt.Errorf("apiserver: hook for %q names no served resource", k)
		}
	}
	if err := s.addReads(cfg.Reads); err != nil {
		return nil, err
	}
	if err := s.addActions(cfg.Actions); err != nil {
		return nil, err
	}
	s.paths = cfg.Paths
	sort.Strings(s.groupNames)
	s.groupNames = compactStrings(s.groupNames)
	s.custom.Store(&customSet{groups: map[string]*groupVersion{}, versions: map[string][]string{}})
	s.bufPool.New = func() any { return bufio.NewWriterSize(io.Discard, 64<<10) }
	s.handler = s.routes()
	return s, nil
}

// orDefault is n, or def when n is 0.
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

func compactStrings(in []string) []string {
	out := in[:0]
	for i, v := range in {
		if i == 0 || v != in[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func (s *Server) fillVersion() {
	v := &s.version
	if v.Major == "" {
		v.Major = "1"
	}
	if v.Minor == "" {
		v.Minor = "31"
	}
	if v.GitVersion == "" {
		v.GitVersion = "v1.31.0-skiff"
	}
	if v.GitTreeState == "" {
		v.GitTreeState = "clean"
	}
	if v.BuildDate == "" {
		v.BuildDate = "1970-01-01T00:00:00Z"
	}
	if v.GoVersion == "" {
		v.GoVersion = runtime.Version()
	}
	if v.Compiler == "" {
		v.Compiler = runtime.Compiler
	}
	if v.Platform == "" {
		v.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
}

// Handler is the server's HTTP handler (TLS is the caller's listener's job).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(recoverer(s.log), requestLogger(s.log), s.metrics.instrument, bodyDeadline(s.bodyTime))
	r.NotFound(s.authenticated(func(w http.ResponseWriter, r *http.Request) {
		if s.nonResourceAllowed(w, r) {
			writeError(w, pathNotFound())
		}
	}))
	r.MethodNotAllowed(s.authenticated(func(w http.ResponseWriter, r *http.Request) {
		if s.nonResourceAllowed(w, r) {
			writeError(w, NewMethodNotAllowed(r.Method))
		}
	}))

	// Unauthenticated.
	r.Get("/healthz", s.serveHealth)
	r.Get("/livez", s.serveHealth)
	r.Get("/readyz", s.serveReady)
	r.Get("/version", s.serveVersion)

	r.Group(func(r chi.Router) {
		r.Use(authenticate(s.authn), s.inflight.middleware, limitBody(s.maxBody))
		// Non-resource requests: the Authorizer sees their path.
		r.Group(func(r chi.Router) {
			r.Use(s.authorizePath)
			r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{}))
			r.Get("/api", s.serveAPIVersions)
			r.Get("/apis", s.serveAPIGroupList)
			r.Get("/apis/{group}", s.serveAPIGroup)
			s.openAPIRoutes(r) // openapi.go
			for p, h := range s.paths {
				r.Method(http.MethodGet, p, h)
			}
			if gv := s.groups["v1"]; gv != nil {
				r.Get("/api/v1", func(w http.ResponseWriter, r *http.Request) { s.serveResourceList(w, r, gv) })
			}
			r.Get("/apis/{group}/{version}", func(w http.ResponseWriter, r *http.Request) {
				gv := s.groupVersion(chi.URLParam(r, "group") + "/" + chi.URLParam(r, "version"))
				if gv == nil || gv.group == "" {
					writeError(w, pathNotFound())
					return
				}
				s.serveResourceList(w, r, gv)
			})
		})
		if gv := s.groups["v1"]; gv != nil {
			r.HandleFunc("/api/v1/*", func(w http.ResponseWriter, r *http.Request) {
				s.serveResource(w, r, gv, chi.URLParam(r, "*"))
			})
		}
		r.HandleFunc("/apis/{group}/{version}/*", func(w http.ResponseWriter, r *http.Request) {
			gv := s.groupVersion(chi.URLParam(r, "group") + "/" + chi.URLParam(r, "version"))
			if gv == nil || gv.group == "" {
				if s.nonResourceAllowed(w, r) {
					writeError(w, pathNotFound())
				}
				return
			}
			rest := chi.URLParam(r, "*")
			if a := gv.actions[rest]; a != nil {
				s.serveAction(w, r, a, Attributes{Group: gv.group, Resource: rest})
				return
			}
			if ro, res, ns, name, ok := gv.readTarget(rest); ok {
				s.serveRead(w, r, ro, res, ns, name)
				return
			}
			s.serveResource(w, r, gv, rest)
		})
	})
	return r
}

// authenticated wraps a single handler with the auth middleware.
func (s *Server) authenticated(h http.HandlerFunc) http.HandlerFunc {
	return authenticate(s.authn)(h).ServeHTTP
}

// target is what a resource path names.
type target struct {
	r              *resource
	ns, name, sub  string
	namespacedPath bool // the path had /namespaces/{ns}/
}

// parsePath maps the path after /api/v1/ or /apis/{g}/{v}/ to a target.
func parsePath(gv *groupVersion, rest string) (target, bool) {
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	for _, s := range segs {
		if s == "" {
			return target{}, false
		}
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		if r := gv.resources[segs[2]]; r != nil && r.info.Namespaced {
			if len(segs) > 5 {
				return target{}, false
			}
			t := target{r: r, ns: segs[1], namespacedPath: true}
			if len(segs) > 3 {
				t.name = segs[3]
			}
			if len(segs) > 4 {
				t.sub = segs[4]
			}
			return t, true
		}
	}
	r := gv.resources[segs[0]]
	if r == nil || len(segs) > 3 || (r.info.Namespaced && len(segs) > 1) {
		return target{}, false
	}
	t := target{r: r}
	if len(segs) > 1 {
		t.name = segs[1]
	}
	if len(segs) > 2 {
		t.sub = segs[2]
	}
	return t, true
}

// serveResource dispatches one resource request by path shape and method.
func (s *Server) serveResource(w http.ResponseWriter, req *http.Request, gv *groupVersion, rest string) {
	t, ok := parsePath(gv, rest)
	if !ok || (t.sub != "" && !t.r.subs[t.sub]) {
		if s.unservedAllowed(w, req, gv, rest) {
			writeError(w, pathNotFound())
		}
		return
	}
	if a := t.r.actions[t.sub]; a != nil && t.name != "" {
		s.serveAction(w, req, a, Attributes{Group: t.r.info.Group, Resource: t.r.info.Resource,
			Subresource: t.sub, Namespace: t.ns, Name: t.name})
		return
	}
	verb := ""
	m := req.Method
	switch {
	case t.name == "":
		switch m {
		case http.MethodGet:
			verb = "list"
			if isWatch(req) {
				verb = "watch"
			}
		case http.MethodPost:
			if t.r.info.Namespaced && !t.namespacedPath {
				break
			}
			verb = "create"
		case http.MethodDelete:
			if t.r.info.Namespaced && !t.namespacedPath {
				break
			}
			verb = "deletecollection"
		}
	case t.sub == "" || t.sub == "status" || t.sub == "scale":
		switch m {
		case http.MethodGet:
			verb = "get"
		case http.MethodPut:
			verb = "update"
		case http.MethodPatch:
			verb = "patch"
		case http.MethodDelete:
			if t.sub == "" {
				verb = "delete"
			}
		}
	case t.sub == "binding" || t.sub == "eviction":
		if m == http.MethodPost {
			verb = "create"
		}
	case t.sub == "log":
		if m == http.MethodGet {
			verb = "get"
		}
	case t.sub == "exec" || t.sub == "attach" || t.sub == "portforward":
		// GET (WebSocket) and POST (SPDY) alike need create, as
		// kube-apiserver asks since 1.30 (AuthorizePodWebsocketUpgradeCreatePermission).
		if m == http.MethodGet || m == http.MethodPost {
			verb = "create"
		}
	case t.sub == "finalize":
		if m == http.MethodPut {
			verb = "update"
		}
	}
	resName := t.r.info.Resource
	if t.sub != "" {
		resName += "/" + t.sub
	}
	if rec := recordFrom(req.Context()); rec != nil {
		rec.verb, rec.resource = verb, resName
		if verb == "" {
			rec.verb = strings.ToLower(m)
		}
	}
	if verb == "" {
		writeError(w, NewMethodNotAllowed(m))
		return
	}
	var view View
	if s.authz != nil {
		user, _ := UserFrom(req.Context())
		attrs := Attributes{
			Verb: verb, Group: t.r.info.Group, Resource: t.r.info.Resource,
			Subresource: t.sub, Namespace: t.ns, Name: t.name,
		}
		if verb == "list" || verb == "watch" {
			// The very string the handler's filter parses (list.go).
			if v := req.URL.Query().Get("fieldSelector"); strings.TrimSpace(v) != "" {
				if sel, err := parseFieldSelector(v); err == nil && !sel.Empty() {
					attrs.FieldSelector = sel
				}
			}
		}
		var err error
		if va, ok := s.authz.(ViewAuthorizer); ok && (verb == "get" || verb == "list" || verb == "watch") && (t.sub == "" || t.sub == "status") {
			view, err = va.AuthorizeView(req.Context(), user, attrs)
		} else {
			err = s.authz.Authorize(req.Context(), user, attrs)
		}
		if err != nil {
			var se *StatusError
			if !errors.As(err, &se) {
				se = NewForbidden(t.r.qualified, t.name, err)
			}
			writeError(w, se)
			return
		}
	}
	if conv := t.r.convert; conv != nil {
		// A custom resource served in a version it is not stored in:
		// every object sent, read or written, has its apiVersion rewritten.
		if inner := view; inner == nil {
			view = View(conv)
		} else {
			view = func(raw []byte) ([]byte, error) {
				c, err := conv(raw)
				if err != nil {
					return nil, err
				}
				return inner(c)
			}
		}
	}
	if err := checkDryRun(req, verb); err != nil {
		writeErr(w, err)
		return
	}
	h := &handler{s: s, r: t.r, ns: t.ns, name: t.name, sub: t.sub, w: w, req: req, view: view}
	finish, ok := s.outputConverter(h, verb) // Table and PartialObjectMetadata (table.go)
	if !ok {
		return
	}
	defer finish()
	switch verb + "/" + t.sub {
	case "list/":
		h.list()
	case "watch/":
		h.watch()
	case "create/":
		h.create()
	case "deletecollection/":
		h.deleteCollection()
	case "get/", "get/status":
		h.get()
	case "update/", "update/status":
		h.update()
	case "patch/", "patch/status":
		h.patch()
	case "delete/":
		h.delete()
	case "get/scale":
		h.getScale()
	case "update/scale", "patch/scale":
		h.updateScale(verb == "patch")
	case "create/binding":
		h.bind()
	case "create/eviction":
		h.evict()
	case "get/log":
		h.logs()
	case "create/exec", "create/attach", "create/portforward":
		h.stream()
	case "update/finalize":
		h.finalize()
	default:
		writeError(w, NewMethodNotAllowed(m))
	}
}

func isWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// handler carries one resource request.
type handler struct {
	s             *Server
	r             *resource
	ns, name, sub string
	w             http.ResponseWriter
	req           *http.Request
	// view narrows every object a read returns (ViewAuthorizer); nil
	// returns them whole.
	view View
}

// out is raw as the request may see it.
func (h *handler) out(raw []byte) ([]byte, error) {
	if h.view == nil {
		return raw, nil
	}
	return h.view(raw)
}

// unservedAllowed authorizes a request under /api/v1/ or /apis/{g}/{v}/
// that names no served resource (or subresource) the way Kubernetes'
// request info reads any such path: as a request on the resource its
// segments name (so that what a user may not read of a resource answers
// 403 whether or not it is served); a path of no such shape is
// authorized as a non-resource path. On a refusal it has written the 403.
func (s *Server) unservedAllowed(w http.ResponseWriter, req *http.Request, gv *groupVersion, rest string) bool {
	if s.authz == nil {
		return true
	}
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	var a Attributes
	switch {
	case slices.Contains(segs, ""), len(segs) == 0:
		return s.nonResourceAllowed(w, req)
	case segs[0] == "namespaces" && len(segs) >= 3 && len(segs) <= 5:
		a.Namespace, a.Resource = segs[1], segs[2]
		if len(segs) > 3 {
			a.Name = segs[3]
		}
		if len(segs) > 4 {
			a.Subresource = segs[4]
		}
	case len(segs) <= 3:
		a.Resource = segs[0]
		if len(segs) > 1 {
			a.Name = segs[1]
		}
		if len(segs) > 2 {
			a.Subresource = segs[2]
		}
	default:
		return s.nonResourceAllowed(w, req)
	}
	a.Group = gv.group
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		a.Verb = "get"
		if a.Name == "" {
			a.Verb = "list"
			if isWatch(req) {
				a.Verb = "watch"
			}
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
		if a.Name == "" {
			a.Verb = "deletecollection"
		}
	default:
		a.Verb = strings.ToLower(req.Method)
	}
	user, _ := UserFrom(req.Context())
	err := s.authz.Authorize(req.Context(), user, a)
	if err == nil {
		return true
	}
	var se *StatusError
	if !errors.As(err, &se) {
		q := a.Resource
		if a.Group != "" {
			q += "." + a.Group
		}
		se = NewForbidden(q, a.Name, err)
	}
	writeError(w, se)
	return false
}
