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

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
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
// tries the token as a node token.
func (a *tokenAuth) Authenticate(_ context.Context, token string) (apiserver.User, bool) {
	var found apiserver.User
	ok := false
	for _, t := range a.tokens {
		if t.token != "" && subtle.ConstantTimeCompare([]byte(t.token), []byte(token)) == 1 {
			found, ok = t.user, true
		}
	}
	if ok || a.nodes == nil {
		return found, ok
	}
	if name, ok := a.nodes.authenticate(token); ok {
		return nodeUser(name), true
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

// authorizer: admins may do anything; the read-only dashboard token may only
// read; the join token nothing; a node (system:node:<name>) only what a
// node agent needs, on its own objects:
//
//   - read pods, services, endpointslices, nodes, namespaces, servicecidrs,
//     and its own Lease;
//   - create its own Node (name checked by nodeRestriction, which sees the
//     body), update/patch it and its status;
//   - create its own Lease in kube-node-lease (nodeRestriction), update and
//     patch it;
//   - create, update and patch events;
//   - update/patch the status of pods bound to it (spec.nodeName) and
//     delete them (the end of graceful termination).
//
// A pod that does not exist passes the ownership check, so that the
// request gets its honest 404 (a node finishing a deletion someone else
// completed sees NotFound, not Forbidden).
type authorizer struct {
	pods podNodes
}

var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}
var writeVerbs = map[string]bool{"update": true, "patch": true}

// nodeReads are the resources (group-qualified) a node may read.
var nodeReads = map[string]bool{
	"pods": true, "services": true, "endpointslices.discovery.k8s.io": true, "nodes": true,
	"namespaces": true, "servicecidrs.networking.k8s.io": true,
}

// Authorize implements apiserver.Authorizer.
func (z authorizer) Authorize(ctx context.Context, u apiserver.User, a apiserver.Attributes) error {
	for _, g := range u.Groups {
		switch g {
		case groupMasters:
			return nil
		case groupReadOnly:
			if readVerbs[a.Verb] {
				return nil
			}
		case groupNodes:
			ok, err := z.authorizeNode(ctx, nodeNameOf(u), a)
			if err != nil {
				return apiserver.NewInternal(fmt.Errorf("authorize %s: %w", u.Name, err))
			}
			if ok {
				return nil
			}
		}
	}
	//lint:ignore ST1005 kube-apiserver's exact text, which clients match
	return fmt.Errorf("User %q cannot %s resource %q in API group %q%s", u.Name, a.Verb, resourceName(a), a.Group, scopeOf(a))
}

func (z authorizer) authorizeNode(ctx context.Context, node string, a apiserver.Attributes) (bool, error) {
	if node == "" {
		return false, nil
	}
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	switch {
	case a.Subresource == "" && readVerbs[a.Verb] && nodeReads[res]:
		return true, nil
	case res == "nodes":
		switch {
		case a.Subresource == "" && a.Verb == "create":
			return true, nil // the name is checked by nodeRestriction
		case (a.Subresource == "" || a.Subresource == "status") && (writeVerbs[a.Verb] || a.Verb == "get"):
			return a.Name == node, nil
		}
	case res == "leases.coordination.k8s.io":
		if a.Subresource != "" || a.Namespace != nodeLeaseNamespace {
			return false, nil
		}
		switch {
		case a.Verb == "create":
			return true, nil // the name is checked by nodeRestriction
		case a.Verb == "get" || writeVerbs[a.Verb]:
			return a.Name == node, nil
		}
	case res == "events":
		return a.Subresource == "" && (a.Verb == "create" || writeVerbs[a.Verb]), nil
	case res == "pods":
		own := (a.Subresource == "status" && writeVerbs[a.Verb]) || (a.Subresource == "" && a.Verb == "delete")
		if !own || z.pods == nil {
			return false, nil
		}
		bound, found, err := z.pods.PodNodeName(ctx, a.Namespace, a.Name)
		if err != nil {
			return false, err
		}
		return !found || bound == node, nil
	}
	return false, nil
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
