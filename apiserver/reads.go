package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/api/labels"
)

// ReadOnly serves a resource that is computed, not stored, and only read
// (get and list), as an aggregated API server's resources are
// (metrics.k8s.io's nodes and pods, served by metrics-server upstream).
// The request is authorized as a get or list of the resource in the
// ReadOnly's group (with its namespace and name), its labelSelector is
// parsed as a stored list's is, and the value Get or List returns is sent
// as JSON with 200 (an error as writeErr sends it). Watch, writes and
// every other verb answer 405.
type ReadOnly struct {
	// Group, Version and Kind are the type of one object:
	// "metrics.k8s.io", "v1beta1", "PodMetrics".
	Group, Version, Kind string
	// Namespaced resources are listed across namespaces at
	// /apis/g/v/<resource> and in one at /apis/g/v/namespaces/<ns>/<resource>.
	Namespaced bool
	// Get returns one object (ns "" for a cluster-scoped resource).
	Get func(ctx context.Context, ns, name string) (any, error)
	// List returns the list document; ns "" is every namespace, label and
	// field nil everything. A fieldSelector may name only metadata.name
	// and metadata.namespace (400 otherwise), as metrics-server's.
	List func(ctx context.Context, ns string, label labels.Selector, field fields.Selector) (any, error)
}

// addReads places cfg.Reads, keyed "resource.group", in their
// group-versions (listed in discovery with the verbs get and list).
func (s *Server) addReads(reads map[string]*ReadOnly) error {
	for key, ro := range reads {
		if ro == nil || ro.Get == nil || ro.List == nil || ro.Kind == "" || ro.Version == "" || ro.Group == "" {
			return fmt.Errorf("apiserver: read-only resource %q: Group, Version, Kind, Get and List are required", key)
		}
		res, group, _ := strings.Cut(key, ".")
		if group != ro.Group || res == "" {
			return fmt.Errorf("apiserver: read-only resource %q: the key must be resource.group of its group %q", key, ro.Group)
		}
		gvKey := ro.Group + "/" + ro.Version
		gv := s.groups[gvKey]
		if gv == nil {
			gv = &groupVersion{group: ro.Group, version: ro.Version, resources: make(map[string]*resource)}
			s.groups[gvKey] = gv
			s.groupNames = append(s.groupNames, ro.Group)
		}
		if gv.resources[res] != nil || gv.actions[res] != nil {
			return fmt.Errorf("apiserver: read-only resource %q is also served otherwise", key)
		}
		if gv.reads == nil {
			gv.reads = make(map[string]*ReadOnly)
		}
		gv.reads[res] = ro
	}
	return nil
}

// readTarget matches rest (the path after /apis/g/v/) against gv's
// read-only resources: <res>[/<name>] or namespaces/<ns>/<res>[/<name>].
func (gv *groupVersion) readTarget(rest string) (ro *ReadOnly, res, ns, name string, ok bool) {
	parts := strings.Split(rest, "/")
	if len(parts) >= 3 && parts[0] == "namespaces" {
		ns, parts = parts[1], parts[2:]
		if ns == "" {
			return nil, "", "", "", false
		}
	}
	if len(parts) == 0 || len(parts) > 2 {
		return nil, "", "", "", false
	}
	ro = gv.reads[parts[0]]
	if ro == nil || (ns != "" && !ro.Namespaced) {
		return nil, "", "", "", false
	}
	if len(parts) == 2 {
		name = parts[1]
		if name == "" || (ro.Namespaced && ns == "") {
			return nil, "", "", "", false
		}
	}
	return ro, parts[0], ns, name, true
}

// serveRead serves a request to a read-only resource.
func (s *Server) serveRead(w http.ResponseWriter, req *http.Request, ro *ReadOnly, res, ns, name string) {
	verb := "list"
	if name != "" {
		verb = "get"
	}
	if rec := recordFrom(req.Context()); rec != nil {
		rec.verb, rec.resource = verb, res
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		writeError(w, NewMethodNotAllowed(req.Method))
		return
	}
	q := req.URL.Query()
	if verb == "list" && (q.Get("watch") == "true" || q.Get("watch") == "1") {
		writeError(w, NewMethodNotAllowed("WATCH"))
		return
	}
	attrs := Attributes{Verb: verb, Group: ro.Group, Resource: res, Namespace: ns, Name: name}
	if s.authz != nil {
		user, _ := UserFrom(req.Context())
		if err := s.authz.Authorize(req.Context(), user, attrs); err != nil {
			writeErr(w, forbiddenOf(err, attrs))
			return
		}
	}
	if verb == "get" {
		out, err := ro.Get(req.Context(), ns, name)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	var sel labels.Selector
	if v := q.Get("labelSelector"); strings.TrimSpace(v) != "" {
		p, err := parseLabelSelector(v)
		if err != nil {
			writeErr(w, NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err)))
			return
		}
		if p != nil && !p.Empty() {
			sel = p
		}
	}
	var fsel fields.Selector
	if v := q.Get("fieldSelector"); strings.TrimSpace(v) != "" {
		p, err := parseFieldSelector(v)
		if err != nil {
			writeErr(w, NewBadRequest(fmt.Sprintf("invalid field selector: %v", err)))
			return
		}
		for _, k := range p.Fields() {
			if k != "metadata.name" && k != "metadata.namespace" {
				writeErr(w, NewBadRequest(fmt.Sprintf("field label not supported: %s", k)))
				return
			}
		}
		if !p.Empty() {
			fsel = p
		}
	}
	out, err := ro.List(req.Context(), ns, sel, fsel)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
