package fakeapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Client is the view of a Server with the method set of *client.Client
// that controllers write through: Create takes an api.Object and decodes
// the stored object (name, uid, generation, resourceVersion) back into it,
// and Do serves the pods/binding subresource. Every other call is the
// Server's.
type Client struct{ *Server }

// Client returns s as a Client.
func (s *Server) Client() Client { return Client{s} }

// Create implements the client call.
func (c Client) Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error {
	stored, err := c.create(info, ns, obj)
	if err != nil {
		return err
	}
	return decodeInto(stored, obj)
}

// Do implements the client call for POST of a pod's binding subresource
// (/api/v1/namespaces/NS/pods/NAME/binding with an api.Binding): it sets
// spec.nodeName, refuses a pod already bound or of another uid (409) and
// a missing pod (404). Any other request is 404.
func (c Client) Do(ctx context.Context, method, path string, body, out any) error {
	parts := strings.Split(strings.TrimPrefix(path, "/api/v1/namespaces/"), "/")
	b, ok := body.(*api.Binding)
	if method != http.MethodPost || len(parts) != 4 || parts[1] != "pods" || parts[3] != "binding" || !ok {
		return client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "fakeapi: no handler for %s %s", method, path)
	}
	ns, name := parts[0], parts[2]
	c.mu.Lock()
	defer c.mu.Unlock()
	info, err := c.info(&api.ResourceInfo{Resource: "pods"})
	if err != nil {
		return err
	}
	if err := c.record(Action{Verb: "create", Resource: coll(info), Namespace: ns, Name: name, Subresource: "binding"}); err != nil {
		return err
	}
	stored, ok := c.objects[key(info, ns, name)]
	if !ok {
		return notFound(info, name)
	}
	old := deepCopy(stored)
	if b.UID != "" && b.UID != str(metaOf(old), "uid") {
		return conflict(info, name, "the UID in the binding does not match the pod")
	}
	spec, _ := old["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	if str(spec, "nodeName") != "" {
		return conflict(info, name, "pod is already assigned to node "+str(spec, "nodeName"))
	}
	next := deepCopy(old)
	nspec, _ := next["spec"].(map[string]any)
	if nspec == nil {
		nspec = map[string]any{}
		next["spec"] = nspec
	}
	nspec["nodeName"] = b.Target.Name
	// Binding sets spec.nodeName without bumping generation, as the
	// real server's binding subresource does.
	return c.writeKeepGeneration(info, old, next)
}

// UpdateStatus implements the client call: Update of the status
// subresource.
func (c Client) UpdateStatus(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error {
	return c.Update(ctx, info, ns, obj, "status")
}
