package apiserver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestActions: a subresource Action and a resource of its own are served,
// authorized as creates, listed in discovery, and refuse other methods
// and other kinds.
func TestActions(t *testing.T) {
	var seen []Attributes
	var got []ActionRequest
	echo := func(kind string) *Action {
		return &Action{Group: "example.com", Version: "v1", Kind: kind, Serve: func(ctx context.Context, r ActionRequest) (any, error) {
			got = append(got, r)
			if strings.Contains(string(r.Body), "fail") {
				return nil, NewBadRequest("told to fail")
			}
			return map[string]string{"kind": kind, "echo": string(r.Body)}, nil
		}}
	}
	e := newEnv(t, func(c *Config) {
		c.Actions = map[string]*Action{
			"widgets.example.com/poke": echo("Poke"),
			"reviews.example.com":      echo("Review"),
			"checks.other.example.com": {Group: "other.example.com", Version: "v2", Kind: "Check", Serve: echo("Check").Serve},
		}
		c.Authorizer = recordAuthz{seen: &seen, deny: "checks"}
		c.Paths = map[string]http.Handler{"/extra": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("extra")) })}
	})
	e.createWidget("w", nil, nil)
	r := e.must(http.StatusCreated, "POST", "/apis/example.com/v1/namespaces/default/widgets/w/poke?dryRun=All", map[string]any{"kind": "Poke"})
	if !strings.Contains(string(r.body), `"kind":"Poke"`) || len(got) != 1 || got[0].Namespace != "default" || got[0].Name != "w" || !got[0].DryRun {
		t.Fatalf("poke: %s %+v", r.body, got)
	}
	last := seen[len(seen)-1]
	if last.Verb != "create" || last.Resource != "widgets" || last.Subresource != "poke" || last.Name != "w" || last.Namespace != "default" {
		t.Fatalf("poke authorized as %+v", last)
	}
	e.must(http.StatusCreated, "POST", "/apis/example.com/v1/reviews", map[string]any{"apiVersion": "example.com/v1"})
	if last := seen[len(seen)-1]; last.Verb != "create" || last.Resource != "reviews" || last.Group != "example.com" {
		t.Fatalf("review authorized as %+v", last)
	}
	e.must(http.StatusBadRequest, "POST", "/apis/example.com/v1/reviews", map[string]any{"kind": "Widget"})
	e.must(http.StatusBadRequest, "POST", "/apis/example.com/v1/reviews", map[string]any{"apiVersion": "v1"})
	e.must(http.StatusBadRequest, "POST", "/apis/example.com/v1/reviews", map[string]any{"spec": "fail"})
	e.must(http.StatusMethodNotAllowed, "GET", "/apis/example.com/v1/reviews", nil)
	e.must(http.StatusForbidden, "POST", "/apis/other.example.com/v2/checks", map[string]any{})
	if r := e.must(http.StatusOK, "GET", "/apis/other.example.com/v2", nil); !strings.Contains(string(r.body), `"name":"checks","singularName":"check","namespaced":false,"kind":"Check","verbs":["create"]`) {
		t.Fatalf("discovery of an Action's own group: %s", r.body)
	}
	if r := e.must(http.StatusOK, "GET", "/apis/example.com/v1", nil); !strings.Contains(string(r.body), `"name":"widgets/poke"`) || !strings.Contains(string(r.body), `"name":"reviews"`) {
		t.Fatalf("discovery: %s", r.body)
	}
	if r := e.must(http.StatusOK, "GET", "/apis", nil); !strings.Contains(string(r.body), `"name":"other.example.com"`) {
		t.Fatalf("group list: %s", r.body)
	}
	if r := e.must(http.StatusOK, "GET", "/extra", nil); string(r.body) != "extra" || seen[len(seen)-1].Path != "/extra" {
		t.Fatalf("extra path: %s %+v", r.body, seen[len(seen)-1])
	}
	// Config errors.
	for name, acts := range map[string]map[string]*Action{
		"unserved parent": {"gadgets.example.com/x": echo("X")},
		"group mismatch":  {"reviews.other.com": echo("X")},
		"stored resource": {"widgets.example.com": echo("X")},
		"no Serve":        {"reviews.example.com": {Group: "example.com", Version: "v1", Kind: "X"}},
	} {
		_, err := New(Config{Store: e.store, Resources: testResources, Authenticator: StaticTokens{}, Actions: acts})
		if err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

// recordAuthz records what it is asked and refuses one resource.
type recordAuthz struct {
	seen *[]Attributes
	deny string
}

func (z recordAuthz) Authorize(_ context.Context, _ User, a Attributes) error {
	*z.seen = append(*z.seen, a)
	if a.Resource == z.deny {
		return errors.New("denied")
	}
	return nil
}
