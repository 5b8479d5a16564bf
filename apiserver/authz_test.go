package apiserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api/fields"
)

// pathsAndViews refuses every non-resource path but /api, records the
// attributes it saw, and lets widgets be read only through a view that
// drops everything but the metadata unless the list selects
// metadata.name=whole.
type pathsAndViews struct{ seen *[]Attributes }

func (z pathsAndViews) Authorize(ctx context.Context, u User, a Attributes) error {
	_, err := z.AuthorizeView(ctx, u, a)
	return err
}

func (z pathsAndViews) AuthorizeView(_ context.Context, _ User, a Attributes) (View, error) {
	*z.seen = append(*z.seen, a)
	if a.Path != "" {
		if a.Path == "/api" && a.Verb == "get" {
			return nil, nil
		}
		return nil, errors.New("no path for you")
	}
	if a.Resource == "gadgets" {
		return nil, errors.New("no gadgets")
	}
	if n, ok := fields.ExactMatch(a.FieldSelector, "metadata.name"); a.FieldSelector != nil && ok && n == "whole" {
		return nil, nil
	}
	if a.Verb == "get" || a.Verb == "list" || a.Verb == "watch" {
		return func(raw []byte) ([]byte, error) {
			return []byte(strings.Replace(string(raw), `"spec"`, `"hidden"`, 1)), nil
		}, nil
	}
	return nil, nil
}

func TestNonResourceAuthorizationAndViews(t *testing.T) {
	var seen []Attributes
	e := newEnv(t, func(c *Config) { c.Authorizer = pathsAndViews{&seen} })
	e.createWidget("w", nil, nil)
	e.createWidget("whole", nil, nil)

	e.must(200, "GET", "/api", nil)
	for _, p := range []string{"/apis", "/metrics", "/openapi/v2", "/no-such-path", "/api/v1"} {
		r := e.must(403, "GET", p, nil)
		if st := r.status(t); st.Reason != "Forbidden" || !strings.Contains(st.Message, "no path for you") {
			t.Errorf("GET %s: %+v", p, st)
		}
	}
	e.must(403, "POST", "/api", `{}`) // verb "post"
	if a := seen[len(seen)-1]; a.Path != "/api" || a.Verb != "post" || a.Resource != "" {
		t.Errorf("attributes of POST /api: %+v", a)
	}
	// A path naming no served resource is authorized as that resource.
	r := e.must(403, "GET", "/api/v1/namespaces/default/gadgets/g", nil)
	if a := seen[len(seen)-1]; a.Resource != "gadgets" || a.Namespace != "default" || a.Name != "g" || a.Verb != "get" || a.Path != "" {
		t.Errorf("attributes of an unserved resource: %+v (%s)", a, r.body)
	}
	e.must(404, "GET", "/api/v1/namespaces/default/sprockets/s", nil)

	// Reads go through the view: get, list, watch.
	for _, p := range []string{widgetsPath + "/w", widgetsPath, widgetsPath + "?watch=1&timeoutSeconds=1"} {
		body := string(e.must(200, "GET", p, nil).body)
		if !strings.Contains(body, `"hidden"`) || strings.Contains(body, `"spec"`) {
			t.Errorf("GET %s: not viewed: %s", p, body)
		}
	}
	// The authorizer sees the list's field selector, and may not narrow.
	body := string(e.must(200, "GET", widgetsPath+"?fieldSelector=metadata.name%3Dwhole", nil).body)
	if a := seen[len(seen)-1]; a.FieldSelector == nil || a.FieldSelector.String() != "metadata.name=whole" {
		t.Errorf("field selector seen: %+v", a)
	}
	if strings.Contains(body, `"hidden"`) {
		t.Errorf("a whole list was viewed: %s", body)
	}
	// A field selector that does not parse reaches the authorizer as none
	// and the handler as a 400.
	e.must(400, "GET", widgetsPath+"?fieldSelector=%3D%3D%3D", nil)
	if a := seen[len(seen)-1]; a.FieldSelector != nil {
		t.Errorf("an unparsable selector reached the authorizer: %v", a.FieldSelector)
	}
}
