package server

// The self reviews (kubectl auth whoami, kubectl auth can-i):
//
//   - POST /apis/authentication.k8s.io/v1/selfsubjectreviews answers the
//     caller's user: name, uid, groups, extra;
//   - POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews answers
//     whether the caller may do the request spec.resourceAttributes or
//     spec.nonResourceAttributes describes (exactly one), by asking the
//     very authorizer real requests are asked, with the same attributes
//     (a list's fieldSelector.rawSelector included). A list the
//     authorizer allows only as a narrowed view (a node's pods without
//     spec.nodeName=<node>) is allowed, as the request would be. An
//     authorizer that cannot answer (the node graph not synced yet) is
//     status.evaluationError, not allowed.
//
//   - POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews lists
//     the caller's rules (selfSubjectRulesReview).
//
// Every authenticated user but the join token may create them (upstream's
// system:basic-user); the join token is allowed nothing (nodejoin.go).

import (
	"context"
	"errors"
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/apiserver"
)

func selfSubjectReview() *apiserver.Action {
	return &apiserver.Action{Group: "authentication.k8s.io", Version: "v1", Kind: "SelfSubjectReview",
		Serve: func(ctx context.Context, req apiserver.ActionRequest) (any, error) {
			var r api.SelfSubjectReview
			if err := decodeStrict(req.Body, &r); err != nil {
				return nil, err
			}
			u, _ := apiserver.UserFrom(ctx)
			r.APIVersion, r.Kind = "authentication.k8s.io/v1", "SelfSubjectReview"
			r.CreationTimestamp = api.Time{}
			r.Status.UserInfo = api.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
			return &r, nil
		}}
}

func selfSubjectAccessReview(z apiserver.Authorizer) *apiserver.Action {
	return &apiserver.Action{Group: "authorization.k8s.io", Version: "v1", Kind: "SelfSubjectAccessReview",
		Serve: func(ctx context.Context, req apiserver.ActionRequest) (any, error) {
			var r api.SelfSubjectAccessReview
			if err := decodeStrict(req.Body, &r); err != nil {
				return nil, err
			}
			r.APIVersion, r.Kind = "authorization.k8s.io/v1", "SelfSubjectAccessReview"
			ra, nra := r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes
			spec := field.NewPath("spec")
			switch {
			case ra == nil && nra == nil:
				return nil, apiserver.NewInvalid("SelfSubjectAccessReview.authorization.k8s.io", "", field.ErrorList{
					field.Invalid(spec.Child("resourceAttributes"), "null", "exactly one of nonResourceAttributes or resourceAttributes must be specified")})
			case ra != nil && nra != nil:
				return nil, apiserver.NewInvalid("SelfSubjectAccessReview.authorization.k8s.io", "", field.ErrorList{
					field.Invalid(spec.Child("nonResourceAttributes"), "{...}", "cannot be specified in combination with resourceAttributes")})
			}
			var a apiserver.Attributes
			if ra != nil {
				a = apiserver.Attributes{Verb: ra.Verb, Group: ra.Group, Resource: ra.Resource,
					Subresource: ra.Subresource, Namespace: ra.Namespace, Name: ra.Name}
				if fs := ra.FieldSelector; fs != nil && fs.RawSelector != "" && (a.Verb == "list" || a.Verb == "watch") {
					sel, err := fields.Parse(fs.RawSelector)
					if err != nil {
						return nil, apiserver.NewInvalid("SelfSubjectAccessReview.authorization.k8s.io", "", field.ErrorList{
							field.Invalid(spec.Child("resourceAttributes", "fieldSelector", "rawSelector"), fs.RawSelector, err.Error())})
					}
					if !sel.Empty() {
						a.FieldSelector = sel
					}
				}
			} else {
				a = apiserver.Attributes{Verb: nra.Verb, Path: nra.Path}
			}
			u, _ := apiserver.UserFrom(ctx)
			err := z.Authorize(ctx, u, a)
			var se *apiserver.StatusError
			switch {
			case err == nil:
				r.Status = api.SubjectAccessReviewStatus{Allowed: true}
			case errors.As(err, &se) && se.Code() != 403:
				r.Status = api.SubjectAccessReviewStatus{EvaluationError: se.Error()}
			default:
				r.Status = api.SubjectAccessReviewStatus{}
			}
			return &r, nil
		}}
}

// selfSubjectRulesReview lists, in RBAC's shape, what the authorizer
// (auth.go) lets the caller do in spec.namespace: everything for admins;
// reads of every served resource and subresource but Secrets for the
// dashboard token, and for a ServiceAccount in its own namespace (main
// resources and status only); a node's static rules, with incomplete set
// because its pods and the objects they reference are decided per object
// (the node graph); the self reviews and the public paths for everyone
// but the join token.
func selfSubjectRulesReview(resources []*api.ResourceInfo) *apiserver.Action {
	return &apiserver.Action{Group: "authorization.k8s.io", Version: "v1", Kind: "SelfSubjectRulesReview",
		Serve: func(ctx context.Context, req apiserver.ActionRequest) (any, error) {
			var r api.SelfSubjectRulesReview
			if err := decodeStrict(req.Body, &r); err != nil {
				return nil, err
			}
			r.APIVersion, r.Kind = "authorization.k8s.io/v1", "SelfSubjectRulesReview"
			u, _ := apiserver.UserFrom(ctx)
			r.Status = rulesOf(u, r.Spec.Namespace, resources)
			return &r, nil
		}}
}

var (
	discoveryURLs = []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*"}
	publicURLs    = []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}
	readRule      = []string{"get", "list", "watch"}
)

func rulesOf(u apiserver.User, ns string, resources []*api.ResourceInfo) api.SubjectRulesReviewStatus {
	st := api.SubjectRulesReviewStatus{ResourceRules: []api.ResourceRule{}, NonResourceRules: []api.NonResourceRule{}}
	if slices.Equal(u.Groups, []string{groupBootstr}) {
		return st
	}
	if slices.Contains(u.Groups, groupMasters) {
		st.ResourceRules = append(st.ResourceRules, api.ResourceRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}})
		st.NonResourceRules = append(st.NonResourceRules, api.NonResourceRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}})
		return st
	}
	st.ResourceRules = append(st.ResourceRules,
		api.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
		api.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}})
	st.NonResourceRules = append(st.NonResourceRules, api.NonResourceRule{Verbs: []string{"get"}, NonResourceURLs: publicURLs})
	// reads lists the served resources (and subresources, when subs) of
	// each group but core Secrets; namespaced only when namespacedOnly.
	reads := func(subs func(string) bool, namespacedOnly bool) {
		byGroup := map[string][]string{}
		var groups []string
		for _, info := range resources {
			if (info.Group == "" && info.Resource == "secrets") || (namespacedOnly && !info.Namespaced) {
				continue
			}
			if _, ok := byGroup[info.Group]; !ok {
				groups = append(groups, info.Group)
			}
			byGroup[info.Group] = append(byGroup[info.Group], info.Resource)
			for _, s := range info.Subresources {
				if subs(s) {
					byGroup[info.Group] = append(byGroup[info.Group], info.Resource+"/"+s)
				}
			}
		}
		for _, g := range groups {
			st.ResourceRules = append(st.ResourceRules, api.ResourceRule{Verbs: readRule, APIGroups: []string{g}, Resources: byGroup[g]})
		}
	}
	for _, g := range u.Groups {
		switch g {
		case groupReadOnly:
			reads(func(string) bool { return true }, false)
			st.NonResourceRules = append(st.NonResourceRules, api.NonResourceRule{Verbs: []string{"get"}, NonResourceURLs: discoveryURLs})
		case groupServiceAccounts:
			if own, _, ok := serviceAccountOf(u); ok && own == ns {
				reads(func(s string) bool { return s == "status" }, true)
			}
			st.NonResourceRules = append(st.NonResourceRules, api.NonResourceRule{Verbs: []string{"get"},
				NonResourceURLs: append(slices.Clone(discoveryURLs), pathOIDCConfig, pathJWKS)})
		case groupNodes:
			node := nodeNameOf(u)
			if node == "" {
				continue
			}
			st.Incomplete = true // pods and what they reference: per object
			st.ResourceRules = append(st.ResourceRules,
				api.ResourceRule{Verbs: readRule, APIGroups: []string{""}, Resources: []string{"services", "nodes", "namespaces"}},
				api.ResourceRule{Verbs: readRule, APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}},
				api.ResourceRule{Verbs: readRule, APIGroups: []string{"networking.k8s.io"}, Resources: []string{"servicecidrs"}},
				api.ResourceRule{Verbs: []string{"list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
				api.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"nodes"}},
				api.ResourceRule{Verbs: []string{"get", "update", "patch"}, APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, ResourceNames: []string{node}},
				api.ResourceRule{Verbs: []string{"create", "update", "patch"}, APIGroups: []string{""}, Resources: []string{"events"}},
			)
			if ns == nodeLeaseNamespace {
				st.ResourceRules = append(st.ResourceRules,
					api.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}},
					api.ResourceRule{Verbs: []string{"get", "update", "patch"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{node}})
			}
			st.NonResourceRules = append(st.NonResourceRules, api.NonResourceRule{Verbs: []string{"get"}, NonResourceURLs: discoveryURLs})
		}
	}
	return st
}
