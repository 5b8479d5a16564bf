package server

// ServiceAccount tokens (as kube-apiserver's TokenRequest REST,
// pkg/registry/core/serviceaccount/storage/token.go, and its service
// account token authenticator, pkg/serviceaccount/jwt.go):
//
//   - POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token takes an
//     authentication.k8s.io/v1 TokenRequest and answers it with
//     status.token and status.expirationTimestamp. spec.expirationSeconds
//     defaults to 3600; under 600 or over 2^32 is 422 with upstream's
//     words; over 48h it is cut to 48h (upstream's
//     --service-account-max-token-expiration, which Skiff fixes at 48h).
//     spec.audiences defaults to the API server's own audience (the
//     issuer). spec.boundObjectRef may name a Pod (running as that
//     ServiceAccount) or a Secret of the namespace; its uid, when given,
//     must be the object's (409 otherwise); a Pod bound to a node also
//     puts the node in the token. A node may request a token only bound
//     to a pod bound to itself (upstream's NodeRestriction), the
//     authorizer having checked that such a pod uses the ServiceAccount.
//   - a bearer token that is a JWT of this issuer authenticates as
//     system:serviceaccount:<ns>:<name>, groups system:serviceaccounts,
//     system:serviceaccounts:<ns> and system:authenticated, when its
//     signature, exp, nbf (60s leeway) and audience (the issuer) hold and
//     the ServiceAccount, and the bound Pod or Secret, still exist with
//     the uids the token names (read from the store on every request:
//     a bbolt read is cheaper than a cache's invalidation). Refusals are
//     401, logged at Debug with the reason and never the token.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/satoken"
	"github.com/skiff-dev/skiff/store"
)

// ServiceAccount token groups and limits.
const (
	groupServiceAccounts = "system:serviceaccounts"
	groupAuthenticated   = "system:authenticated"

	tokenDefaultSeconds = 3600
	tokenMinSeconds     = 600
	tokenMaxSeconds     = 1 << 32
	// tokenCap is the longest lifetime issued (longer requests are cut).
	tokenCap = 48 * time.Hour

	// The issuer discovery paths (upstream's
	// system:service-account-issuer-discovery).
	pathOIDCConfig = "/.well-known/openid-configuration"
	pathJWKS       = "/openid/v1/jwks"
)

// saTokens issues and authenticates ServiceAccount tokens.
type saTokens struct {
	signer *satoken.Signer
	st     store.Interface
	info   map[string]*api.ResourceInfo // serviceaccounts, pods, secrets
	log    *slog.Logger
}

func newSATokens(signer *satoken.Signer, st store.Interface, resources map[string]*api.ResourceInfo, log *slog.Logger) *saTokens {
	return &saTokens{signer: signer, st: st, info: resources, log: log}
}

// objMeta is what the tokens read of a stored object.
type objMeta struct {
	Metadata api.ObjectMeta `json:"metadata"`
	Spec     struct {
		NodeName           string `json:"nodeName"`
		ServiceAccountName string `json:"serviceAccountName"`
	} `json:"spec"`
}

// get reads one object's metadata; found is false when it does not exist.
func (t *saTokens) get(ctx context.Context, resource, ns, name string) (*objMeta, bool, error) {
	kv, err := t.st.Get(ctx, apiserver.KeyFor(t.info[resource], ns, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var m objMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		return nil, false, fmt.Errorf("decode %s %s/%s: %w", resource, ns, name, err)
	}
	return &m, true, nil
}

// action is the serviceaccounts/token subresource.
func (t *saTokens) action() *apiserver.Action {
	return &apiserver.Action{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest", Serve: t.serve}
}

func (t *saTokens) serve(ctx context.Context, req apiserver.ActionRequest) (any, error) {
	var tr api.TokenRequest
	if err := decodeStrict(req.Body, &tr); err != nil {
		return nil, err
	}
	tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenRequest"
	if tr.Spec.ExpirationSeconds == nil {
		d := int64(tokenDefaultSeconds)
		tr.Spec.ExpirationSeconds = &d
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if s := *tr.Spec.ExpirationSeconds; s < tokenMinSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), s, "may not specify a duration less than 10 minutes"))
	} else if s > tokenMaxSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), s, "may not specify a duration larger than 2^32 seconds"))
	}
	for i, a := range tr.Spec.Audiences {
		if a == "" {
			errs = append(errs, field.Invalid(spec.Child("audiences").Index(i), a, "must not be empty"))
		}
	}
	if ref := tr.Spec.BoundObjectRef; ref != nil && ref.Name == "" {
		errs = append(errs, field.Required(spec.Child("boundObjectRef", "name"), ""))
	}
	if len(errs) > 0 {
		return nil, apiserver.NewInvalid("TokenRequest.authentication.k8s.io", req.Name, errs)
	}
	sa, found, err := t.get(ctx, "serviceaccounts", req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apiserver.NewNotFound("serviceaccounts", req.Name)
	}
	r := satoken.Request{Namespace: req.Namespace, Name: req.Name, UID: sa.Metadata.UID, Audiences: tr.Spec.Audiences}
	if len(r.Audiences) == 0 {
		r.Audiences = []string{t.signer.Issuer()}
		tr.Spec.Audiences = r.Audiences
	}
	var pod *objMeta
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		var bound *objMeta
		switch {
		case ref.Kind == "Pod" && (ref.APIVersion == "" || ref.APIVersion == "v1"):
			if bound, err = t.bound(ctx, "pods", req.Namespace, ref); err != nil {
				return nil, err
			}
			if bound.Spec.ServiceAccountName != req.Name {
				return nil, apiserver.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with serviceaccount %q", req.Name, bound.Spec.ServiceAccountName))
			}
			pod = bound
			r.Pod = &satoken.Ref{Name: ref.Name, UID: bound.Metadata.UID}
			if n := bound.Spec.NodeName; n != "" {
				r.Node = &satoken.Ref{Name: n}
				if node, ok, err := t.get(ctx, "nodes", "", n); err == nil && ok {
					r.Node.UID = node.Metadata.UID
				}
			}
		case ref.Kind == "Secret" && (ref.APIVersion == "" || ref.APIVersion == "v1"):
			if bound, err = t.bound(ctx, "secrets", req.Namespace, ref); err != nil {
				return nil, err
			}
			r.Secret = &satoken.Ref{Name: ref.Name, UID: bound.Metadata.UID}
		default:
			gvk := ref.APIVersion + ", Kind=" + ref.Kind
			return nil, apiserver.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk))
		}
		ref.UID = bound.Metadata.UID
	}
	if u, ok := apiserver.UserFrom(ctx); ok {
		if node := nodeNameOf(u); node != "" {
			if pod == nil {
				return nil, forbidNode(node, "request a token not bound to a pod")
			}
			if pod.Spec.NodeName != node {
				return nil, forbidNode(node, "request a token bound to a pod scheduled on a different node")
			}
		}
	}
	r.Lifetime = min(time.Duration(*tr.Spec.ExpirationSeconds)*time.Second, tokenCap)
	*tr.Spec.ExpirationSeconds = int64(r.Lifetime / time.Second)
	tr.Name, tr.Namespace = req.Name, req.Namespace
	if req.DryRun {
		return &tr, nil
	}
	tok, exp, err := t.signer.Issue(r)
	if err != nil {
		return nil, err
	}
	tr.Status = api.TokenRequestStatus{Token: tok, ExpirationTimestamp: api.NewTime(exp)}
	return &tr, nil
}

func forbidNode(node, what string) error {
	return apiserver.NewStatus(http.StatusForbidden, api.StatusReasonForbidden,
		fmt.Sprintf("node %q is not allowed to %s", node, what))
}

// bound reads the bound object ref names and checks its uid.
func (t *saTokens) bound(ctx context.Context, resource, ns string, ref *api.BoundObjectReference) (*objMeta, error) {
	obj, found, err := t.get(ctx, resource, ns, ref.Name)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apiserver.NewNotFound(resource, ref.Name)
	}
	if ref.UID != "" && ref.UID != obj.Metadata.UID {
		return nil, apiserver.NewConflict(resource, ref.Name, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", ref.UID, obj.Metadata.UID))
	}
	return obj, nil
}

// authenticate maps a ServiceAccount token to its user; ok is false for
// any other token and for a refused one.
func (t *saTokens) authenticate(ctx context.Context, token string) (apiserver.User, bool) {
	u, err := t.check(ctx, token)
	if err != nil {
		if !errors.Is(err, satoken.ErrNotServiceAccount) {
			t.log.Debug("service account token refused", "reason", err.Error())
		}
		return apiserver.User{}, false
	}
	return u, true
}

func (t *saTokens) check(ctx context.Context, token string) (apiserver.User, error) {
	c, err := t.signer.Verify(token, []string{t.signer.Issuer()})
	if err != nil {
		return apiserver.User{}, err
	}
	k := c.Kubernetes
	sa, found, err := t.get(ctx, "serviceaccounts", k.Namespace, k.ServiceAccount.Name)
	switch {
	case err != nil:
		return apiserver.User{}, err
	case !found:
		return apiserver.User{}, fmt.Errorf("serviceaccount %s/%s has been deleted", k.Namespace, k.ServiceAccount.Name)
	case sa.Metadata.UID != k.ServiceAccount.UID:
		return apiserver.User{}, fmt.Errorf("serviceaccount %s/%s uid (%s) does not match the token's (%s)", k.Namespace, k.ServiceAccount.Name, sa.Metadata.UID, k.ServiceAccount.UID)
	}
	extra := map[string][]string{}
	if c.ID != "" {
		extra["authentication.kubernetes.io/credential-id"] = []string{"JTI=" + c.ID}
	}
	for _, b := range []struct {
		resource string
		ref      *satoken.Ref
	}{{"pods", k.Pod}, {"secrets", k.Secret}} {
		if b.ref == nil {
			continue
		}
		obj, found, err := t.get(ctx, b.resource, k.Namespace, b.ref.Name)
		switch {
		case err != nil:
			return apiserver.User{}, err
		case !found:
			return apiserver.User{}, fmt.Errorf("%s %s/%s has been deleted", b.resource, k.Namespace, b.ref.Name)
		case obj.Metadata.UID != b.ref.UID:
			return apiserver.User{}, fmt.Errorf("%s %s/%s uid (%s) does not match the token's (%s)", b.resource, k.Namespace, b.ref.Name, obj.Metadata.UID, b.ref.UID)
		case obj.Metadata.DeletionTimestamp != nil && time.Since(obj.Metadata.DeletionTimestamp.Time) > satoken.Leeway:
			return apiserver.User{}, fmt.Errorf("%s %s/%s is being deleted", b.resource, k.Namespace, b.ref.Name)
		}
		if b.resource == "pods" {
			extra["authentication.kubernetes.io/pod-name"] = []string{b.ref.Name}
			extra["authentication.kubernetes.io/pod-uid"] = []string{b.ref.UID}
		}
	}
	if k.Node != nil {
		extra["authentication.kubernetes.io/node-name"] = []string{k.Node.Name}
		if k.Node.UID != "" {
			extra["authentication.kubernetes.io/node-uid"] = []string{k.Node.UID}
		}
	}
	return apiserver.User{
		Name:   satoken.SubjectPrefix + k.Namespace + ":" + k.ServiceAccount.Name,
		UID:    k.ServiceAccount.UID,
		Groups: []string{groupServiceAccounts, groupServiceAccounts + ":" + k.Namespace, groupAuthenticated},
		Extra:  extra,
	}, nil
}

// serviceAccountOf returns the namespace and name of a ServiceAccount
// user; ok is false for any other user.
func serviceAccountOf(u apiserver.User) (ns, name string, ok bool) {
	if !slices.Contains(u.Groups, groupServiceAccounts) {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(u.Name, satoken.SubjectPrefix)
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	return ns, name, ok && ns != "" && name != ""
}

// discoveryPaths serve the issuer discovery documents.
func (t *saTokens) discoveryPaths() (map[string]http.Handler, error) {
	cfg, err := t.signer.Discovery(t.signer.Issuer() + pathJWKS)
	if err != nil {
		return nil, err
	}
	jwks, err := t.signer.JWKS()
	if err != nil {
		return nil, err
	}
	serve := func(body []byte, ct string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Cache-Control", "public, max-age=3600")
			_, _ = w.Write(body)
		})
	}
	return map[string]http.Handler{
		pathOIDCConfig: serve(cfg, "application/json"),
		pathJWKS:       serve(jwks, "application/jwk-set+json"),
	}, nil
}

// decodeStrict decodes a request's JSON, refusing unknown fields as
// Kubernetes' strict field validation does.
func decodeStrict(body []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return apiserver.NewBadRequest(fmt.Sprintf("strict decoding error: %v", err))
	}
	return nil
}
