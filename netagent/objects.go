package netagent

import (
	"context"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// apiObjects is the objectSource of a running agent: a GET of the one
// ConfigMap or Secret, each time a container starts and on a pod's
// resync for its volumes (the node authorizer lets a node GET only the
// objects its pods reference, and never list or watch them).
type apiObjects struct {
	api       API
	do        doer // TokenRequests (projected.go); nil when a cannot send them
	cms, secs *api.ResourceInfo
}

// doer sends a raw request; *client.Client satisfies it.
type doer interface {
	Do(ctx context.Context, method, path string, body, out any) error
}

func newAPIObjects(a API) *apiObjects {
	d, _ := a.(doer)
	return &apiObjects{api: a, do: d,
		cms:  api.Lookup(api.Resources(), "v1", "configmaps"),
		secs: api.Lookup(api.Resources(), "v1", "secrets"),
	}
}

func (o *apiObjects) configMap(ctx context.Context, ns, name string) (*api.ConfigMap, error) {
	var cm api.ConfigMap
	if err := o.api.Get(ctx, o.cms, ns, name, &cm); err != nil {
		if client.IsNotFound(err) {
			return nil, errObjectNotFound{"configmap", name}
		}
		return nil, err
	}
	return &cm, nil
}

func (o *apiObjects) secret(ctx context.Context, ns, name string) (*api.Secret, error) {
	var s api.Secret
	if err := o.api.Get(ctx, o.secs, ns, name, &s); err != nil {
		if client.IsNotFound(err) {
			return nil, errObjectNotFound{"secret", name}
		}
		return nil, err
	}
	return &s, nil
}
