package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/satoken"
	"github.com/skiff-dev/skiff/store"
)

// Users the server's tokens authenticate as.
const (
	userAdmin     = "admin"
	userBootstrap = "system:bootstrap:node-join"
	userDashboard = "system:dashboard"
	groupMasters  = "system:masters"
	groupNodes    = "system:nodes"
	groupBootstr  = "system:bootstrappers"
	groupReadOnly = "system:read-only"

	// nodeUserPrefix + node name is a node's user (Kubernetes' form).
	nodeUserPrefix = "system:node:"
	// nodeLeaseNamespace holds the nodes' heartbeat Leases.
	nodeLeaseNamespace = "kube-node-lease"
)

// tokenAuth maps the bootstrap tokens and the per-node tokens to users.
type tokenAuth struct {
	tokens []tokenUser
	nodes  *nodeTokens // per-node tokens (nodejoin.go); may be nil
	sa     *saTokens   // ServiceAccount tokens (satoken.go); may be nil
}

type tokenUser struct {
	token string
	user  apiserver.User
}

// newTokenAuth: the join token (tokens/node) authenticates as a
// bootstrapper that the authorizer allows nothing in the API: it only
// buys a per-node token at the join endpoint (nodejoin.go).
func newTokenAuth(admin, join, dashboard string, nodes *nodeTokens) *tokenAuth {
	return &tokenAuth{nodes: nodes, tokens: []tokenUser{
		{admin, apiserver.User{Name: userAdmin, Groups: []string{groupMasters}}},
		{join, apiserver.User{Name: userBootstrap, Groups: []string{groupBootstr}}},
		{dashboard, apiserver.User{Name: userDashboard, Groups: []string{groupReadOnly}}},
	}}
}

// Authenticate compares in constant time against every known token, then
// tries the token as a node token, then as a ServiceAccount token.
func (a *tokenAuth) Authenticate(ctx context.Context, token string) (apiserver.User, bool) {
	var found apiserver.User
	ok := false
	for _, t := range a.tokens {
		if t.token != "" && subtle.ConstantTimeCompare([]byte(t.token), []byte(token)) == 1 {
			found, ok = t.user, true
		}
	}
	if ok {
		return found, ok
	}
	if a.nodes != nil {
		if name, ok := a.nodes.authenticate(token); ok {
			return nodeUser(name), true
		}
	}
	if a.sa != nil && satoken.LooksLikeJWT(token) {
		return a.sa.authenticate(ctx, token)
	}
	return apiserver.User{}, false
}

// nodeUser is the user a node token authenticates as.
func nodeUser(name string) apiserver.User {
	return apiserver.User{Name: nodeUserPrefix + name, Groups: []string{groupNodes}}
}

// nodeNameOf returns the node a user acts for ("" when the user is no
// node).
func nodeNameOf(u apiserver.User) string {
	name, ok := strings.CutPrefix(u.Name, nodeUserPrefix)
	if !ok {
		return ""
	}
	for _, g := range u.Groups {
		if g == groupNodes {
			return name
		}
	}
	return ""
}

// podNodes tells the authorizer which node a pod is bound to.
type podNodes interface {
	// PodNodeName returns the pod's spec.nodeName; found is false when the
	// pod does not exist.
	PodNodeName(ctx context.Context, ns, name string) (node string, found bool, err error)
}

// storePods reads pods straight from the store (a pod's nodeName never
// changes once set, so a read outside the write's transaction is safe).
type storePods struct {
	st   store.Interface
	info *api.ResourceInfo
}

func (p storePods) PodNodeName(ctx context.Context, ns, name string) (string, bool, error) {
	kv, err := p.st.Get(ctx, apiserver.KeyFor(p.info, ns, name))
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var pod struct {
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(kv.Value, &pod); err != nil {
		return "", false, fmt.Errorf("decode pod %s/%s: %w", ns, name, err)
	}
	return pod.Spec.NodeName, true, nil
}

// authorizer: admins may do anything; the read-only dashboard token may
// read all but Secrets (as Kubernetes' view role); the join token
// nothing but the public paths; a node (system:node:<name>) only what a
// node agent needs, on its own objects (Kubernetes' node authorizer):
//
//   - get the pods bound to it (spec.nodeName; a pod that does not
//     exist is refused, as one of another node); list and watch pods
//     with the field selector spec.nodeName=<node>; list and watch every
//     pod only through podAddressView (what the node DNS needs: names,
//     phase and IPs, no spec, no annotations);
//   - get the Secrets, ConfigMaps, ServiceAccounts and
//     PersistentVolumeClaims that pods bound to it reference (nodeGraph);
//     never list or watch them;
//   - get the PersistentVolumes bound to those claims or pinned to it by
//     their node affinity, and update or patch the pinned ones
//     (authorizeNodeVolumes, storage.go);
//   - read services, endpointslices, nodes, namespaces, servicecidrs, and
//     its own Lease;
//   - create its own Node (name checked by nodeRestriction, which sees the
//     body), update/patch it and its status;
//   - create its own Lease in kube-node-lease (nodeRestriction), update and
//     patch it;
//   - create, update and patch events;
//   - update/patch the status of pods bound to it and delete them (the
//     end of graceful termination); for these writes a pod that does not
//     exist passes, so that the request gets its honest 404 (a node
//     finishing a deletion someone else completed sees NotFound).
//
// A ServiceAccount (system:serviceaccount:<ns>:<name>, satoken.go) may
// get, list and watch the objects and their status in its own namespace,
// Secrets excepted (a namespace's view role; upstream grants nothing
// without RBAC), and nothing else. A node may also create tokens for the
// ServiceAccounts its pods run as (nodeGraph; satoken.go checks that the
// token is bound to such a pod). Every user but the join token may create
// the self reviews (upstream's system:basic-user).
//
// Non-resource paths (Kubernetes' nonResourceURLs, verb = the lowercase
// method): everyone authenticated may get /healthz, /livez, /readyz,
// /version and /version/ (upstream's system:public-info-viewer; the
// server also serves them without a token); nodes and the dashboard may
// get discovery and OpenAPI (/api, /api/*, /apis, /apis/*, /openapi,
// /openapi/*: upstream's system:discovery), and so may ServiceAccounts,
// which may also get the issuer discovery paths; /metrics and every other path
// only admins. Unlike upstream, the join token does not read discovery:
// it authenticates only to buy a node token (nodejoin.go).
type authorizer struct {
	pods  podNodes   // a pod's node, read per request (gets and writes)
	graph *nodeGraph // what the pods of each node reference; nil: nothing
	// volumes reads a PersistentVolume per request (storage.go); nil:
	// nodes read no volumes.
	volumes volumeReader
}

var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}
var writeVerbs = map[string]bool{"update": true, "patch": true}

// nodeReads are the resources (group-qualified) a node may read whole.
var nodeReads = map[string]bool{
	"services": true, "endpointslices.discovery.k8s.io": true, "nodes": true,
	"namespaces": true, "servicecidrs.networking.k8s.io": true,
}

// nodeRefReads are the resources a node may get when a pod bound to it
// references the object (nodeGraph).
var nodeRefReads = map[string]bool{
	"secrets": true, "configmaps": true, "serviceaccounts": true, "persistentvolumeclaims": true,
}

// graphWait bounds how long a node's request waits for the node graph's
// first list after a start (it answers 503 after that; clients retry).
const graphWait = 5 * time.Second

// Authorize implements apiserver.Authorizer.
func (z authorizer) Authorize(ctx context.Context, u apiserver.User, a apiserver.Attributes) error {
	_, err := z.AuthorizeView(ctx, u, a)
	return err
}

// AuthorizeView implements apiserver.ViewAuthorizer.
func (z authorizer) AuthorizeView(ctx context.Context, u apiserver.User, a apiserver.Attributes) (apiserver.View, error) {
	if a.Path != "" {
		return nil, authorizePath(u, a)
	}
	if isSelfReview(a) && !slices.Equal(u.Groups, []string{groupBootstr}) {
		return nil, nil
	}
	var view apiserver.View
	allowed := false
	for _, g := range u.Groups {
		switch g {
		case groupMasters:
			return nil, nil
		case groupServiceAccounts:
			if ns, _, ok := serviceAccountOf(u); ok && serviceAccountMay(ns, a) {
				return nil, nil
			}
		case groupReadOnly:
			if readVerbs[a.Verb] && !(a.Group == "" && a.Resource == "secrets") {
				return nil, nil
			}
		case groupNodes:
			v, ok, err := z.authorizeNode(ctx, nodeNameOf(u), a)
			if err != nil {
				var se *apiserver.StatusError
				if errors.As(err, &se) {
					return nil, se
				}
				return nil, apiserver.NewInternal(fmt.Errorf("authorize %s: %w", u.Name, err))
			}
			if ok {
				view, allowed = v, true
			}
		}
	}
	if allowed {
		return view, nil
	}
	//lint:ignore ST1005 kube-apiserver's exact text, which clients match
	return nil, fmt.Errorf("User %q cannot %s resource %q in API group %q%s", u.Name, a.Verb, resourceName(a), a.Group, scopeOf(a))
}

// isSelfReview: the reviews every user may create about itself
// (upstream's system:basic-user).
func isSelfReview(a apiserver.Attributes) bool {
	if a.Verb != "create" || a.Subresource != "" || a.Path != "" {
		return false
	}
	switch a.Group {
	case "authorization.k8s.io":
		return a.Resource == "selfsubjectaccessreviews" || a.Resource == "selfsubjectrulesreviews"
	case "authentication.k8s.io":
		return a.Resource == "selfsubjectreviews"
	}
	return false
}

// serviceAccountMay: a ServiceAccount may get, list and watch the objects
// (and their status) of its own namespace, Secrets excepted; nothing
// else (its self reviews and the paths are decided before).
func serviceAccountMay(ns string, a apiserver.Attributes) bool {
	return readVerbs[a.Verb] && a.Namespace == ns && (a.Subresource == "" || a.Subresource == "status") &&
		!(a.Group == "" && a.Resource == "secrets")
}

// publicPaths anyone authenticated may get (system:public-info-viewer).
var publicPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true, "/version/": true}

// isDiscoveryPath: /api, /api/*, /apis, /apis/*, /openapi, /openapi/*.
func isDiscoveryPath(p string) bool {
	for _, root := range []string{"/api", "/apis", "/openapi"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

func authorizePath(u apiserver.User, a apiserver.Attributes) error {
	for _, g := range u.Groups {
		switch {
		case g == groupMasters:
			return nil
		case a.Verb != "get":
		case publicPaths[a.Path]:
			return nil
		case (g == groupNodes || g == groupReadOnly || g == groupServiceAccounts) && isDiscoveryPath(a.Path):
			return nil
		case g == groupServiceAccounts && (a.Path == pathOIDCConfig || a.Path == pathJWKS):
			return nil
		}
	}
	if len(u.Groups) == 0 && a.Verb == "get" && publicPaths[a.Path] {
		return nil
	}
	//lint:ignore ST1005 kube-apiserver's exact text, which clients match
	return fmt.Errorf("User %q cannot %s path %q", u.Name, a.Verb, a.Path)
}

func (z authorizer) authorizeNode(ctx context.Context, node string, a apiserver.Attributes) (apiserver.View, bool, error) {
	if node == "" {
		return nil, false, nil
	}
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	switch {
	case a.Subresource == "" && readVerbs[a.Verb] && nodeReads[res]:
		return nil, true, nil
	case res == "serviceaccounts" && a.Subresource == "token":
		// NodeRestriction (satoken.go) checks that the token is bound
		// to a pod bound to the node.
		if a.Verb != "create" || z.graph == nil {
			return nil, false, nil
		}
		wctx, cancel := context.WithTimeout(ctx, graphWait)
		defer cancel()
		if !z.graph.waitSynced(wctx) {
			return nil, false, apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
				"the node authorizer has not read the pods yet; retry")
		}
		return nil, z.graph.hasRef(node, objRef{a.Resource, a.Namespace, a.Name}), nil
	case nodeRefReads[res]:
		if a.Subresource != "" || a.Verb != "get" || z.graph == nil {
			return nil, false, nil
		}
		wctx, cancel := context.WithTimeout(ctx, graphWait)
		defer cancel()
		if !z.graph.waitSynced(wctx) {
			return nil, false, apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
				"the node authorizer has not read the pods yet; retry")
		}
		return nil, z.graph.hasRef(node, objRef{a.Resource, a.Namespace, a.Name}), nil
	case res == "nodes":
		switch {
		case a.Subresource == "" && a.Verb == "create":
			return nil, true, nil // the name is checked by nodeRestriction
		case (a.Subresource == "" || a.Subresource == "status") && (writeVerbs[a.Verb] || a.Verb == "get"):
			return nil, a.Name == node, nil
		}
	case res == "leases.coordination.k8s.io":
		if a.Subresource != "" || a.Namespace != nodeLeaseNamespace {
			return nil, false, nil
		}
		switch {
		case a.Verb == "create":
			return nil, true, nil // the name is checked by nodeRestriction
		case a.Verb == "get" || writeVerbs[a.Verb]:
			return nil, a.Name == node, nil
		}
	case res == "events":
		return nil, a.Subresource == "" && (a.Verb == "create" || writeVerbs[a.Verb]), nil
	case res == "pods":
		return z.authorizeNodePods(ctx, node, a)
	case res == "persistentvolumes":
		return z.authorizeNodeVolumes(ctx, node, a) // storage.go
	}
	return nil, false, nil
}

func (z authorizer) authorizeNodePods(ctx context.Context, node string, a apiserver.Attributes) (apiserver.View, bool, error) {
	switch {
	case (a.Verb == "list" || a.Verb == "watch") && a.Subresource == "":
		if a.FieldSelector != nil {
			if n, ok := fields.ExactMatch(a.FieldSelector, "spec.nodeName"); ok && n == node {
				return nil, true, nil
			}
		}
		return podAddressView, true, nil
	case a.Verb == "get" && (a.Subresource == "" || a.Subresource == "status"):
		if z.pods == nil {
			return nil, false, nil
		}
		bound, found, err := z.pods.PodNodeName(ctx, a.Namespace, a.Name)
		return nil, err == nil && found && bound == node, err
	case (a.Subresource == "status" && writeVerbs[a.Verb]) || (a.Subresource == "" && a.Verb == "delete"):
		if z.pods == nil {
			return nil, false, nil
		}
		bound, found, err := z.pods.PodNodeName(ctx, a.Namespace, a.Name)
		return nil, err == nil && (!found || bound == node), err
	}
	return nil, false, nil
}

// podAddressView is what a node sees of the pods it lists or watches
// without the selector spec.nodeName=<itself>: what the node DNS answers
// pod records from (namespace, name, phase, IPs, deletion), never the
// spec (env, volumes, images) nor labels and annotations.
func podAddressView(raw []byte) ([]byte, error) {
	var in struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name              string          `json:"name"`
			Namespace         string          `json:"namespace"`
			UID               string          `json:"uid"`
			ResourceVersion   string          `json:"resourceVersion"`
			CreationTimestamp json.RawMessage `json:"creationTimestamp"`
			DeletionTimestamp json.RawMessage `json:"deletionTimestamp"`
		} `json:"metadata"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
		Status struct {
			Phase  string            `json:"phase"`
			PodIP  string            `json:"podIP"`
			PodIPs []json.RawMessage `json:"podIPs"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("pod view: %w", err)
	}
	type meta struct {
		Name              string          `json:"name"`
		Namespace         string          `json:"namespace"`
		UID               string          `json:"uid,omitempty"`
		ResourceVersion   string          `json:"resourceVersion,omitempty"`
		CreationTimestamp json.RawMessage `json:"creationTimestamp,omitempty"`
		DeletionTimestamp json.RawMessage `json:"deletionTimestamp,omitempty"`
	}
	type podIP struct {
		IP string `json:"ip"`
	}
	out := struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   meta   `json:"metadata"`
		Spec       struct {
			NodeName   string     `json:"nodeName,omitempty"`
			Containers []struct{} `json:"containers"`
		} `json:"spec"`
		Status struct {
			Phase  string  `json:"phase,omitempty"`
			PodIP  string  `json:"podIP,omitempty"`
			PodIPs []podIP `json:"podIPs,omitempty"`
		} `json:"status"`
	}{Kind: in.Kind, APIVersion: in.APIVersion, Metadata: meta(in.Metadata)}
	out.Spec.NodeName = in.Spec.NodeName
	out.Spec.Containers = []struct{}{}
	out.Status.Phase, out.Status.PodIP = in.Status.Phase, in.Status.PodIP
	for _, r := range in.Status.PodIPs {
		var ip podIP
		if json.Unmarshal(r, &ip) == nil && ip.IP != "" {
			out.Status.PodIPs = append(out.Status.PodIPs, ip)
		}
	}
	return json.Marshal(out)
}

func resourceName(a apiserver.Attributes) string {
	if a.Subresource != "" {
		return a.Resource + "/" + a.Subresource
	}
	return a.Resource
}

func scopeOf(a apiserver.Attributes) string {
	switch {
	case a.Namespace != "" && a.Name != "":
		return fmt.Sprintf(" (%s/%s)", a.Namespace, a.Name)
	case a.Name != "":
		return fmt.Sprintf(" (%s)", a.Name)
	case a.Namespace != "":
		return fmt.Sprintf(" in namespace %q", a.Namespace)
	}
	return ""
}

// nodeRestriction is the admission half of node authorization (as
// Kubernetes' NodeRestriction plugin): it sees the object, so it checks
// what the authorizer cannot, for writes by a node user:
//
//   - a node creates only the Node named after itself, and without a
//     podCIDR (the nodeipam controller assigns it);
//   - a node never changes its podCIDR(s);
//   - a node creates only the Lease named after itself (the authorizer
//     already pinned the namespace to kube-node-lease).
//
// Writes by other users pass untouched.
type nodeRestriction struct{}

// ValidatesOnly: nodeRestriction never changes the object it admits
// (apiserver.ValidatingHook).
func (nodeRestriction) ValidatesOnly() {}

func (nodeRestriction) Admit(ctx context.Context, _ store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	u, ok := apiserver.UserFrom(ctx)
	if !ok {
		return apiserver.Outcome{}, nil
	}
	node := nodeNameOf(u)
	if node == "" {
		return apiserver.Outcome{}, nil
	}
	forbid := func(format string, args ...any) error {
		return apiserver.NewStatus(http.StatusForbidden, api.StatusReasonForbidden,
			fmt.Sprintf("node %q is not allowed to %s", node, fmt.Sprintf(format, args...)))
	}
	switch obj := a.Obj.(type) {
	case *api.Node:
		switch a.Op {
		case apiserver.OpCreate:
			if obj.Name != node {
				return apiserver.Outcome{}, forbid("create Node %q", obj.Name)
			}
			if obj.Spec.PodCIDR != "" || len(obj.Spec.PodCIDRs) > 0 {
				return apiserver.Outcome{}, forbid("set its own podCIDR")
			}
		case apiserver.OpUpdate:
			old, _ := a.Old.(*api.Node)
			if obj.Name != node {
				return apiserver.Outcome{}, forbid("modify Node %q", obj.Name)
			}
			if old != nil && (old.Spec.PodCIDR != obj.Spec.PodCIDR || !slices.Equal(old.Spec.PodCIDRs, obj.Spec.PodCIDRs)) {
				return apiserver.Outcome{}, forbid("change its podCIDR")
			}
		case apiserver.OpDelete:
			return apiserver.Outcome{}, forbid("delete Node %q", obj.Name)
		}
	case *api.Lease:
		if obj.Namespace != nodeLeaseNamespace || obj.Name != node {
			return apiserver.Outcome{}, forbid("write Lease %s/%s", obj.Namespace, obj.Name)
		}
	}
	return apiserver.Outcome{}, nil
}
