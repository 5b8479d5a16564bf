package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Action serves a POST that stores nothing, as Kubernetes' create-only
// REST storage does (TokenRequest, the self reviews): the body is decoded
// to JSON (JSON, YAML or protobuf where package protobuf knows the kind),
// its kind and apiVersion, when set, must be the Action's, the request is
// authorized as a create of the resource (and subresource), and the value
// Serve returns is sent as JSON with 201 Created. An error is sent as
// writeErr sends it (a *StatusError as is).
type Action struct {
	// Group, Version and Kind are the type of the request and the answer:
	// "authentication.k8s.io", "v1", "TokenRequest".
	Group, Version, Kind string
	Serve                func(ctx context.Context, req ActionRequest) (any, error)
}

// ActionRequest is one POST to an Action. The request's user is in ctx
// (UserFrom).
type ActionRequest struct {
	Namespace, Name string // the path's (a subresource's object)
	Body            []byte // JSON
	DryRun          bool   // dryRun=All
}

func (a *Action) apiVersion() string {
	if a.Group == "" {
		return a.Version
	}
	return a.Group + "/" + a.Version
}

// addActions places cfg.Actions: a key "resource/sub" is a subresource of
// a served resource; a key "resource.group" (cluster-scoped) is a
// resource of its own in the Action's group-version, listed in discovery
// with the verb create.
func (s *Server) addActions(actions map[string]*Action) error {
	for key, a := range actions {
		if a == nil || a.Serve == nil || a.Kind == "" || a.Version == "" {
			return fmt.Errorf("apiserver: action %q: Kind, Version and Serve are required", key)
		}
		if res, sub, ok := strings.Cut(key, "/"); ok {
			r := s.byQualified[res]
			if r == nil || sub == "" {
				return fmt.Errorf("apiserver: action %q names no served resource", key)
			}
			r.subs[sub] = true
			if r.actions == nil {
				r.actions = make(map[string]*Action)
			}
			r.actions[sub] = a
			continue
		}
		res, group, _ := strings.Cut(key, ".")
		if group != a.Group || res == "" {
			return fmt.Errorf("apiserver: action %q: the key must be resource.group of the Action's group %q", key, a.Group)
		}
		gvKey := a.apiVersion()
		gv := s.groups[gvKey]
		if gv == nil {
			gv = &groupVersion{group: a.Group, version: a.Version, resources: make(map[string]*resource)}
			s.groups[gvKey] = gv
			if a.Group != "" {
				s.groupNames = append(s.groupNames, a.Group)
			}
		}
		if gv.resources[res] != nil {
			return fmt.Errorf("apiserver: action %q is also a stored resource", key)
		}
		if gv.actions == nil {
			gv.actions = make(map[string]*Action)
		}
		gv.actions[res] = a
	}
	return nil
}

// serveAction serves a POST to an Action: resource is the Action's
// resource (or the subresource's parent), sub the subresource.
func (s *Server) serveAction(w http.ResponseWriter, req *http.Request, a *Action, attrs Attributes) {
	if rec := recordFrom(req.Context()); rec != nil {
		rec.verb, rec.resource = "create", attrs.Resource
		if attrs.Subresource != "" {
			rec.resource += "/" + attrs.Subresource
		}
	}
	if req.Method != http.MethodPost {
		writeError(w, NewMethodNotAllowed(req.Method))
		return
	}
	attrs.Verb = "create"
	if s.authz != nil {
		user, _ := UserFrom(req.Context())
		if err := s.authz.Authorize(req.Context(), user, attrs); err != nil {
			writeErr(w, forbiddenOf(err, attrs))
			return
		}
	}
	if err := checkDryRun(req, "create"); err != nil {
		writeErr(w, err)
		return
	}
	fv, err := parseFieldValidation(req)
	if err != nil {
		writeErr(w, err)
		return
	}
	mt, err := mediaType(req)
	if err != nil {
		writeErr(w, err)
		return
	}
	body, err := readBody(req, s.maxBody)
	if err != nil {
		writeErr(w, err)
		return
	}
	data, err := toJSON(mt, body, fv)
	if err != nil {
		writeErr(w, err)
		return
	}
	var tm struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(data, &tm); err != nil {
		writeErr(w, NewBadRequest(fmt.Sprintf("error decoding the body: %v", err)))
		return
	}
	switch {
	case tm.Kind != "" && tm.Kind != a.Kind:
		writeErr(w, NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", tm.Kind, a.Kind)))
		return
	case tm.APIVersion != "" && tm.APIVersion != a.apiVersion():
		writeErr(w, NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, a.apiVersion())))
		return
	}
	out, err := a.Serve(req.Context(), ActionRequest{Namespace: attrs.Namespace, Name: attrs.Name, Body: data, DryRun: isDryRun(req)})
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// forbiddenOf is the Status of an authorizer's refusal of attrs.
func forbiddenOf(err error, attrs Attributes) error {
	if se, ok := err.(*StatusError); ok {
		return se
	}
	q := attrs.Resource
	if attrs.Group != "" {
		q += "." + attrs.Group
	}
	return NewForbidden(q, attrs.Name, err)
}
