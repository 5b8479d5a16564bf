package server

import (
	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/apiextensions"
)

// CustomResourceDefinitions (package apiserver/apiextensions): the
// customresourcedefinitions resource is in the server's resource table,
// its hook and the registry's watch keep the API server's custom resources
// equal to the stored definitions.
//
// The collection is also what kubectl's field validation
// (k8s.io/cli-runtime resource.QueryParamVerifier) lists, for a kind the
// OpenAPI document lacks, to tell a custom resource from an unknown kind:
// a 404 there would be "failed to check CRD" and abort a whole
// `kubectl apply -k` over one object of an unserved kind. A real list
// (empty or not) lets kubectl go on, and the unserved object alone is
// refused.

// crdResource is the customresourcedefinitions entry, refusing the groups
// of the built-in resources.
func (s *Server) crdResource() *api.ResourceInfo {
	return apiextensions.CRDResource(apiextensions.Options{Reserved: s.builtinGroup})
}

// builtinGroup reports a group the API server serves itself (resources,
// actions, reads), which no definition may use.
func (s *Server) builtinGroup(g string) bool {
	if s.api == nil {
		return true
	}
	return s.api.ServesBuiltinGroup(g)
}

// lateCustom lets the registry, built before the API server (its hook is
// in the server's Config), drive the server once it exists.
type lateCustom struct{ srv *apiserver.Server }

func (l *lateCustom) CheckCustomResources(res []apiserver.CustomResource) error {
	if l.srv == nil {
		return nil
	}
	return l.srv.CheckCustomResources(res)
}

func (l *lateCustom) SetCustomResources(res []apiserver.CustomResource) error {
	if l.srv == nil {
		return nil
	}
	return l.srv.SetCustomResources(res)
}
