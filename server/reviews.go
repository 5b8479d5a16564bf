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
// Every authenticated user but the join token may create both (upstream's
// system:basic-user); the join token is allowed nothing (nodejoin.go).

import (
	"context"
	"errors"

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
