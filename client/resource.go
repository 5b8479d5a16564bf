package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// checkSegment rejects a name that cannot be one path segment.
func checkSegment(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("client: %w: empty %s", ErrInvalidRequest, what)
	case s == "." || s == "..":
		return fmt.Errorf("client: %w: %s %q may not be %q", ErrInvalidRequest, what, s, s)
	case strings.ContainsAny(s, "/%"):
		return fmt.Errorf("client: %w: %s %q may not contain '/' or '%%'", ErrInvalidRequest, what, s)
	}
	return nil
}

// ResourcePath is the escaped path of a resource's collection (name == ""),
// of one object, or of one of its subresources. An empty ns with a
// namespaced resource addresses all namespaces (lists and watches only).
func ResourcePath(info *api.ResourceInfo, ns, name string, subresource ...string) (string, error) {
	if info == nil {
		return "", fmt.Errorf("client: %w: nil resource", ErrInvalidRequest)
	}
	if err := checkSegment("resource", info.Resource); err != nil {
		return "", err
	}
	if err := checkSegment("version", info.Version); err != nil {
		return "", err
	}
	var b strings.Builder
	if info.Group == "" {
		b.WriteString("/api/")
	} else {
		if err := checkSegment("group", info.Group); err != nil {
			return "", err
		}
		b.WriteString("/apis/")
		b.WriteString(url.PathEscape(info.Group))
		b.WriteByte('/')
	}
	b.WriteString(url.PathEscape(info.Version))
	if ns != "" {
		if !info.Namespaced {
			return "", fmt.Errorf("client: %w: %s is cluster-scoped but namespace %q was given", ErrInvalidRequest, info.Resource, ns)
		}
		if err := checkSegment("namespace", ns); err != nil {
			return "", err
		}
		b.WriteString("/namespaces/")
		b.WriteString(url.PathEscape(ns))
	}
	b.WriteByte('/')
	b.WriteString(url.PathEscape(info.Resource))
	if name == "" {
		if len(subresource) > 0 {
			return "", fmt.Errorf("client: %w: subresource %v of %s without a name", ErrInvalidRequest, subresource, info.Resource)
		}
		return b.String(), nil
	}
	if err := checkSegment("name", name); err != nil {
		return "", err
	}
	b.WriteByte('/')
	b.WriteString(url.PathEscape(name))
	for _, sub := range subresource {
		if err := checkSegment("subresource", sub); err != nil {
			return "", err
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(sub))
	}
	return b.String(), nil
}

// objectPath is the path of one object; a namespaced resource needs ns.
func objectPath(info *api.ResourceInfo, ns, name string, subresource ...string) (string, error) {
	if info != nil && info.Namespaced && ns == "" {
		return "", fmt.Errorf("client: %w: %s is namespaced but no namespace was given", ErrInvalidRequest, info.Resource)
	}
	if name == "" {
		return "", fmt.Errorf("client: %w: empty name", ErrInvalidRequest)
	}
	return ResourcePath(info, ns, name, subresource...)
}

// objectNamespace picks the namespace of a write: the argument, else the
// object's; the two must agree when both are set.
func objectNamespace(info *api.ResourceInfo, ns string, obj api.Object) (string, error) {
	if obj == nil {
		return "", fmt.Errorf("client: %w: nil object", ErrInvalidRequest)
	}
	meta := obj.GetObjectMeta()
	if !info.Namespaced {
		if ns != "" || meta.Namespace != "" {
			return "", fmt.Errorf("client: %w: %s is cluster-scoped but a namespace was given", ErrInvalidRequest, info.Resource)
		}
		return "", nil
	}
	switch {
	case ns == "":
		ns = meta.Namespace
	case meta.Namespace != "" && meta.Namespace != ns:
		return "", fmt.Errorf("client: %w: namespace %q does not match the object's namespace %q", ErrInvalidRequest, ns, meta.Namespace)
	}
	if ns == "" {
		return "", fmt.Errorf("client: %w: %s is namespaced but no namespace was given", ErrInvalidRequest, info.Resource)
	}
	return ns, nil
}

// setTypeMeta fills an object's apiVersion and kind from info when empty.
func setTypeMeta(info *api.ResourceInfo, obj api.Object) {
	tm := obj.GetTypeMeta()
	if tm.APIVersion == "" {
		tm.APIVersion = info.GroupVersion()
	}
	if tm.Kind == "" && info.Kind != "" {
		tm.Kind = info.Kind
	}
}

// Get reads one object into into.
func (c *Client) Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error {
	p, err := objectPath(info, ns, name)
	if err != nil {
		return err
	}
	return c.do(ctx, request{method: http.MethodGet, path: p, out: into})
}

// List reads a collection (all namespaces when ns is "" for a namespaced
// resource) into into, a typed XxxList or a *RawList.
func (c *Client) List(ctx context.Context, info *api.ResourceInfo, ns string, opts ListOptions, into any) error {
	p, err := ResourcePath(info, ns, "")
	if err != nil {
		return err
	}
	return c.do(ctx, request{method: http.MethodGet, path: p, query: opts.query(false), out: into})
}

// Create posts obj (in ns, or in the object's namespace when ns is "") and
// decodes the created object back into obj. Empty apiVersion and kind are
// filled from info.
func (c *Client) Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error {
	if info == nil {
		return fmt.Errorf("client: %w: nil resource", ErrInvalidRequest)
	}
	ns, err := objectNamespace(info, ns, obj)
	if err != nil {
		return err
	}
	p, err := ResourcePath(info, ns, "")
	if err != nil {
		return err
	}
	setTypeMeta(info, obj)
	return c.do(ctx, request{method: http.MethodPost, path: p, body: obj, out: obj})
}

// Update replaces obj (addressed by its metadata.name), or one of its
// subresources such as "status" or "finalize", and decodes the stored object
// back into obj. A stale metadata.resourceVersion gets a Conflict.
func (c *Client) Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error {
	if info == nil {
		return fmt.Errorf("client: %w: nil resource", ErrInvalidRequest)
	}
	ns, err := objectNamespace(info, ns, obj)
	if err != nil {
		return err
	}
	p, err := objectPath(info, ns, obj.GetObjectMeta().Name, subresource...)
	if err != nil {
		return err
	}
	setTypeMeta(info, obj)
	return c.do(ctx, request{method: http.MethodPut, path: p, body: obj, out: obj})
}

// UpdateStatus replaces obj's status subresource.
func (c *Client) UpdateStatus(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error {
	return c.Update(ctx, info, ns, obj, "status")
}

// Patch applies data, of content type patchType (MergePatchType,
// JSONPatchType, StrategicMergePatchType), to an object or a subresource and
// decodes the result into into (nil discards it).
func (c *Client) Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error {
	switch patchType {
	case MergePatchType, JSONPatchType, StrategicMergePatchType:
	default:
		return fmt.Errorf("client: %w: unknown patch type %q", ErrInvalidRequest, patchType)
	}
	p, err := objectPath(info, ns, name, subresource...)
	if err != nil {
		return err
	}
	var out any
	if into != nil {
		out = into
	}
	return c.do(ctx, request{method: http.MethodPatch, path: p, body: data, contentType: patchType, out: out})
}

// Delete deletes one object. The object may live on after a successful
// call while finalizers or a grace period hold it.
func (c *Client) Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts DeleteOptions) error {
	p, err := objectPath(info, ns, name)
	if err != nil {
		return err
	}
	r := request{method: http.MethodDelete, path: p, query: opts.query()}
	if b := opts.body(); b != nil {
		r.body = b
	}
	return c.do(ctx, r)
}
