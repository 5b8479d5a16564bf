package apiserver

import (
	"fmt"
	"slices"
	"sort"

	"github.com/skiff-dev/skiff/api"
)

// Custom resources: resources added and removed while the server runs
// (the CustomResourceDefinitions of package apiserver/apiextensions). They
// are served as the resources of Config.Resources are, from a set replaced
// whole by SetCustomResources, so that a request sees either the old set or
// the new one. They are not in the OpenAPI documents,
// and a strategic merge patch of one is 415, as kube-apiserver answers for
// custom resources (they have no patch strategies).

// customSet is the custom resources served at one time.
type customSet struct {
	groups   map[string]*groupVersion // "group/version"
	versions map[string][]string      // group → its versions, preferred first
	names    []string                 // the groups, sorted
}

// CustomResource is one custom resource to serve: its table entry and the
// TxnHook of its writes (nil for none).
type CustomResource struct {
	Info *api.ResourceInfo
	Hook TxnHook
}

// SetCustomResources replaces the custom resources the server serves by
// res. Within a group, the first info's version is the group's preferred
// version and the versions are listed in discovery in the order they first
// appear. A custom resource may not be in the core group or in a group
// Config.Resources, Actions or Reads serve, nor be listed twice; such a set
// is refused whole and the served set stays as it was.
func (s *Server) SetCustomResources(res []CustomResource) error {
	set, err := s.buildCustomSet(res)
	if err != nil {
		return err
	}
	s.custom.Store(set)
	return nil
}

// CheckCustomResources reports the error SetCustomResources would return
// for res, changing nothing.
func (s *Server) CheckCustomResources(res []CustomResource) error {
	_, err := s.buildCustomSet(res)
	return err
}

func (s *Server) buildCustomSet(res []CustomResource) (*customSet, error) {
	set := &customSet{groups: map[string]*groupVersion{}, versions: map[string][]string{}}
	for _, cr := range res {
		info := cr.Info
		if info.Group == "" {
			return nil, fmt.Errorf("apiserver: custom resource %s: the core group is not for custom resources", info.Resource)
		}
		if slices.Contains(s.groupNames, info.Group) {
			return nil, fmt.Errorf("apiserver: custom resource %s.%s: its group is served by built-in resources", info.Resource, info.Group)
		}
		r, err := newResource(info, cr.Hook)
		if err != nil {
			return nil, err
		}
		r.custom = true
		key := info.GroupVersion()
		gv := set.groups[key]
		if gv == nil {
			gv = &groupVersion{group: info.Group, version: info.Version, resources: map[string]*resource{}}
			set.groups[key] = gv
			if _, seen := set.versions[info.Group]; !seen {
				set.names = append(set.names, info.Group)
			}
			set.versions[info.Group] = append(set.versions[info.Group], info.Version)
		}
		if _, dup := gv.resources[info.Resource]; dup {
			return nil, fmt.Errorf("apiserver: custom resource %s.%s/%s listed twice", info.Resource, info.Group, info.Version)
		}
		gv.resources[info.Resource] = r
		gv.order = append(gv.order, r)
	}
	sort.Strings(set.names)
	return set, nil
}

// groupVersion is the served group-version of key ("v1", "apps/v1"),
// built-in or custom; nil when none.
func (s *Server) groupVersion(key string) *groupVersion {
	if gv := s.groups[key]; gv != nil {
		return gv
	}
	return s.custom.Load().groups[key]
}

// ServesBuiltinGroup reports whether a group is served by Config's
// resources, actions or reads (the core group "" included): a group
// custom resources may not use.
func (s *Server) ServesBuiltinGroup(g string) bool {
	return g == "" || slices.Contains(s.groupNames, g)
}
