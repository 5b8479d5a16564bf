package apiserver

import (
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/skiff-dev/skiff/api"
)

// Discovery documents, in the meta/v1 shapes kubectl and client-go read.

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type serverAddress struct {
	ClientCIDR    string `json:"clientCIDR"`
	ServerAddress string `json:"serverAddress"`
}

type apiGroup struct {
	Kind                       string                     `json:"kind,omitempty"`
	APIVersion                 string                     `json:"apiVersion,omitempty"`
	Name                       string                     `json:"name"`
	Versions                   []groupVersionForDiscovery `json:"versions"`
	PreferredVersion           groupVersionForDiscovery   `json:"preferredVersion"`
	ServerAddressByClientCIDRs []serverAddress            `json:"serverAddressByClientCIDRs,omitempty"`
}

type apiGroupList struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Groups     []apiGroup `json:"groups"`
}

type apiVersions struct {
	Kind                       string          `json:"kind"`
	APIVersion                 string          `json:"apiVersion,omitempty"`
	Versions                   []string        `json:"versions"`
	ServerAddressByClientCIDRs []serverAddress `json:"serverAddressByClientCIDRs"`
}

var resourceVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil && r.TLS != nil {
		host = net.JoinHostPort(host, "443")
	}
	writeJSON(w, http.StatusOK, apiVersions{
		Kind:                       "APIVersions",
		Versions:                   []string{"v1"},
		ServerAddressByClientCIDRs: []serverAddress{{ClientCIDR: "0.0.0.0/0", ServerAddress: host}},
	})
}

func (s *Server) apiGroup(name string) (apiGroup, bool) {
	g := apiGroup{Name: name}
	for _, key := range sortedKeys(s.groups) {
		gv := s.groups[key]
		if gv.group != name {
			continue
		}
		g.Versions = append(g.Versions, groupVersionForDiscovery{GroupVersion: key, Version: gv.version})
	}
	// autoscaling/v2 before autoscaling/v1: the preferred version first.
	slices.SortStableFunc(g.Versions, func(a, b groupVersionForDiscovery) int { return api.CompareVersions(b.Version, a.Version) })
	if len(g.Versions) == 0 {
		for _, v := range s.custom.Load().versions[name] {
			g.Versions = append(g.Versions, groupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
		}
	}
	if len(g.Versions) == 0 {
		return g, false
	}
	g.PreferredVersion = g.Versions[0]
	return g, true
}

func (s *Server) serveAPIGroupList(w http.ResponseWriter, r *http.Request) {
	list := apiGroupList{Kind: "APIGroupList", APIVersion: "v1", Groups: []apiGroup{}}
	for _, name := range s.groupNames {
		if g, ok := s.apiGroup(name); ok {
			list.Groups = append(list.Groups, g)
		}
	}
	// Custom groups follow the built-in ones, as kube-apiserver lists the
	// groups of CustomResourceDefinitions after its own.
	for _, name := range s.custom.Load().names {
		if g, ok := s.apiGroup(name); ok {
			list.Groups = append(list.Groups, g)
		}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) serveAPIGroup(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "group")
	g, ok := s.apiGroup(name)
	if !ok || name == "" {
		writeError(w, pathNotFound())
		return
	}
	g.Kind, g.APIVersion = "APIGroup", "v1"
	writeJSON(w, http.StatusOK, g)
}

func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, gv *groupVersion) {
	gvName := gv.version
	if gv.group != "" {
		gvName = gv.group + "/" + gv.version
	}
	list := apiResourceList{Kind: "APIResourceList", APIVersion: "v1", GroupVersion: gvName, Resources: []apiResource{}}
	for _, name := range sortedKeys(gv.actions) {
		a := gv.actions[name]
		list.Resources = append(list.Resources, apiResource{
			Name: name, SingularName: strings.ToLower(a.Kind), Kind: a.Kind, Verbs: []string{"create"},
		})
	}
	for _, name := range sortedKeys(gv.reads) {
		ro := gv.reads[name]
		list.Resources = append(list.Resources, apiResource{
			Name: name, SingularName: "", Namespaced: ro.Namespaced, Kind: ro.Kind, Verbs: []string{"get", "list"},
		})
	}
	for _, res := range gv.order {
		info := res.info
		list.Resources = append(list.Resources, apiResource{
			Name: info.Resource, SingularName: info.Singular, Namespaced: info.Namespaced,
			Kind: info.Kind, Verbs: resourceVerbs, ShortNames: info.ShortNames,
			Categories: info.Categories,
		})
		for _, sub := range sortedKeys(res.subs) {
			sr := apiResource{Name: info.Resource + "/" + sub, Namespaced: info.Namespaced, Kind: info.Kind}
			switch sub {
			case "status":
				sr.Verbs = []string{"get", "patch", "update"}
			case "scale":
				sr.Group, sr.Version, sr.Kind = "autoscaling", "v1", "Scale"
				sr.Verbs = []string{"get", "patch", "update"}
			case "binding":
				sr.Kind, sr.Verbs = "Binding", []string{"create"}
			case "eviction":
				sr.Group, sr.Version, sr.Kind = "policy", "v1", "Eviction"
				sr.Verbs = []string{"create"}
			case "log":
				sr.Verbs = []string{"get"}
			case "exec", "attach", "portforward":
				sr.Kind = "Pod" + map[string]string{"exec": "ExecOptions", "attach": "AttachOptions", "portforward": "PortForwardOptions"}[sub]
				sr.Verbs = []string{"create", "get"}
			case "finalize":
				sr.Verbs = []string{"update"}
			default:
				if a := res.actions[sub]; a != nil {
					sr.Group, sr.Version, sr.Kind, sr.Verbs = a.Group, a.Version, a.Kind, []string{"create"}
					break
				}
				continue
			}
			list.Resources = append(list.Resources, sr)
		}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write([]byte("ok"))
}

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	if s.ready != nil && !s.ready() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("[-]ready failed: not ready yet\nreadyz check failed"))
		return
	}
	s.serveHealth(w, r)
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.version)
}
