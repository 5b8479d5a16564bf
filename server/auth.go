package server

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/skiff-dev/skiff/apiserver"
)

// Users the server's tokens authenticate as.
const (
	userAdmin     = "admin"
	userNode      = "system:node"
	userDashboard = "system:dashboard"
	groupMasters  = "system:masters"
	groupNodes    = "system:nodes"
	groupReadOnly = "system:read-only"
)

// tokenAuth maps the bootstrap tokens to users.
type tokenAuth struct {
	tokens []tokenUser
}

type tokenUser struct {
	token string
	user  apiserver.User
}

func newTokenAuth(admin, node, dashboard string) *tokenAuth {
	return &tokenAuth{tokens: []tokenUser{
		{admin, apiserver.User{Name: userAdmin, Groups: []string{groupMasters}}},
		{node, apiserver.User{Name: userNode, Groups: []string{groupNodes}}},
		{dashboard, apiserver.User{Name: userDashboard, Groups: []string{groupReadOnly}}},
	}}
}

// Authenticate compares in constant time against every known token.
func (a *tokenAuth) Authenticate(_ context.Context, token string) (apiserver.User, bool) {
	var found apiserver.User
	ok := false
	for _, t := range a.tokens {
		if t.token != "" && subtle.ConstantTimeCompare([]byte(t.token), []byte(token)) == 1 {
			found, ok = t.user, true
		}
	}
	return found, ok
}

// authorizer: admins may do anything; the read-only dashboard token may only
// read; the node token may read what a node needs and write its own kinds
// of objects (issue 5 narrows this to the node's own objects).
type authorizer struct{}

var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}

// nodeReads and nodeWrites are "resource[/subresource]" keys.
var nodeReads = map[string]bool{
	"pods": true, "services": true, "endpointslices": true, "nodes": true,
	"namespaces": true, "leases": true, "events": true,
}
var nodeWrites = map[string]bool{
	"nodes": true, "nodes/status": true, "leases": true, "events": true,
	"pods/status": true, "pods": true, // pods: delete after graceful termination
}

// Authorize implements apiserver.Authorizer.
func (authorizer) Authorize(_ context.Context, u apiserver.User, a apiserver.Attributes) error {
	for _, g := range u.Groups {
		switch g {
		case groupMasters:
			return nil
		case groupReadOnly:
			if readVerbs[a.Verb] {
				return nil
			}
		case groupNodes:
			key := a.Resource
			if a.Subresource != "" {
				key += "/" + a.Subresource
			}
			if readVerbs[a.Verb] && nodeReads[a.Resource] {
				return nil
			}
			if !readVerbs[a.Verb] && nodeWrites[key] {
				if a.Resource == "pods" && a.Subresource == "" && a.Verb != "delete" {
					break
				}
				return nil
			}
		}
	}
	return fmt.Errorf("User %q cannot %s resource %q in API group %q", u.Name, a.Verb, resourceName(a), a.Group)
}

func resourceName(a apiserver.Attributes) string {
	if a.Subresource != "" {
		return a.Resource + "/" + a.Subresource
	}
	return a.Resource
}
