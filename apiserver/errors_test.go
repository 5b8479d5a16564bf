package apiserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestErrorTable checks every row of the error contract: code, reason and
// a Status body.
func TestErrorTable(t *testing.T) {
	e := newEnv(t)
	w := e.createWidget("existing", nil, map[string]any{"size": 1})
	big := `{"metadata":{"name":"big"},"spec":{"color":"` + strings.Repeat("x", 3<<20) + `"}}`
	itemPath := widgetsPath + "/existing"
	cases := []struct {
		name     string
		method   string
		path     string
		body     any
		hdr      []string
		code     int
		reason   string
		contains string
	}{
		{"malformed JSON", "POST", widgetsPath, `{"metadata":`, nil, 400, "BadRequest", ""},
		{"malformed YAML", "POST", widgetsPath, "metadata:\n  name: [x\n", []string{"Content-Type: application/yaml"}, 400, "BadRequest", "YAML"},
		{"not an object", "POST", widgetsPath, `[1,2]`, nil, 400, "BadRequest", ""},
		{"unknown field", "POST", widgetsPath, `{"metadata":{"name":"u"},"spec":{"foo":1}}`, nil, 400, "BadRequest", `unknown field "spec.foo"`},
		{"unknown field in YAML", "POST", widgetsPath, "metadata:\n  name: u\nspec:\n  foo: 1\n", []string{"Content-Type: application/yaml"}, 400, "BadRequest", `unknown field "spec.foo"`},
		{"unknown field in a list", "POST", widgetsPath, `{"metadata":{"name":"u"},"spec":{"items":[{"name":"a","colour":1}]}}`, nil, 400, "BadRequest", `unknown field "spec.items[0].colour"`},
		{"duplicate field", "POST", widgetsPath, `{"metadata":{"name":"d","name":"e"}}`, nil, 400, "BadRequest", `duplicate field "metadata.name"`},
		{"wrong type", "POST", widgetsPath, `{"metadata":{"name":"t"},"spec":{"size":"big"}}`, nil, 400, "BadRequest", ""},
		{"apiVersion mismatch", "POST", widgetsPath, `{"apiVersion":"v1","kind":"Widget","metadata":{"name":"a"}}`, nil, 400, "BadRequest", "API version"},
		{"kind mismatch", "POST", widgetsPath, `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a"}}`, nil, 400, "BadRequest", "kind"},
		{"body name differs from path", "PUT", itemPath, `{"metadata":{"name":"other"}}`, nil, 400, "BadRequest", "does not match the name on the URL"},
		{"namespace mismatch", "POST", widgetsPath, `{"metadata":{"name":"n","namespace":"elsewhere"}}`, nil, 400, "BadRequest", "namespace"},
		{"validation errors", "POST", widgetsPath, `{"metadata":{"name":"v"},"spec":{"color":"bad"}}`, nil, 422, "Invalid",
			`Widget.example.com "v" is invalid: [spec.color: Invalid value: "bad": must be red, green or blue, spec.items[0].name: Required value: a bad widget needs a named item]`},
		{"stale resourceVersion", "PUT", itemPath, `{"metadata":{"name":"existing","resourceVersion":"1"},"spec":{"size":2}}`, nil, 409, "Conflict",
			`Operation cannot be fulfilled on widgets.example.com "existing": the object has been modified; please apply your changes to the latest version and try again`},
		{"already exists", "POST", widgetsPath, `{"metadata":{"name":"existing"}}`, nil, 409, "AlreadyExists", `widgets.example.com "existing" already exists`},
		{"body over 3 MiB", "POST", widgetsPath, big, nil, 413, "RequestEntityTooLarge", ""},
		{"unknown resource", "GET", "/apis/example.com/v1/namespaces/default/sprockets", nil, nil, 404, "NotFound", ""},
		{"unknown group", "GET", "/apis/nope.io/v1/things", nil, nil, 404, "NotFound", ""},
		{"unknown path", "GET", "/nothing/here", nil, nil, 404, "NotFound", ""},
		{"unknown subresource", "GET", itemPath + "/scale", nil, nil, 404, "NotFound", ""},
		{"missing object", "GET", widgetsPath + "/missing", nil, nil, 404, "NotFound", `widgets.example.com "missing" not found`},
		{"unsupported media type", "POST", widgetsPath, `name=x`, []string{"Content-Type: application/x-www-form-urlencoded"}, 415, "UnsupportedMediaType", ""},
		{"protobuf without its prefix", "POST", widgetsPath, `x`, []string{"Content-Type: application/vnd.kubernetes.protobuf"}, 400, "BadRequest", ""},
		{"protobuf of a kind without tables", "POST", widgetsPath, "k8s\x00\x0a\x18\x0a\x0eexample.com/v1\x12\x06Widget", []string{"Content-Type: application/vnd.kubernetes.protobuf"}, 415, "UnsupportedMediaType", ""},
		{"unsupported patch type", "PATCH", itemPath, `{}`, []string{"Content-Type: application/json"}, 415, "UnsupportedMediaType", ""},
		{"no token", "GET", widgetsPath, nil, []string{"Authorization: "}, 401, "Unauthorized", ""},
		{"wrong token", "GET", widgetsPath, nil, []string{"Authorization: Bearer nope"}, 401, "Unauthorized", ""},
		{"not bearer", "GET", widgetsPath, nil, []string{"Authorization: Basic " + testToken}, 401, "Unauthorized", ""},
		{"no token on unknown path", "GET", "/nothing", nil, []string{"Authorization: "}, 401, "Unauthorized", ""},
		{"no token on discovery", "GET", "/api", nil, []string{"Authorization: "}, 401, "Unauthorized", ""},
		{"wrong method on collection", "PUT", widgetsPath, `{}`, nil, 405, "MethodNotAllowed", ""},
		{"wrong method on object", "POST", itemPath, `{}`, nil, 405, "MethodNotAllowed", ""},
		{"bad fieldValidation", "POST", widgetsPath + "?fieldValidation=Loud", `{"metadata":{"name":"f"}}`, nil, 400, "BadRequest", "fieldValidation"},
		{"bad limit", "GET", widgetsPath + "?limit=-1", nil, nil, 400, "BadRequest", ""},
		{"bad continue", "GET", widgetsPath + "?limit=1&continue=bm9wZQ", nil, nil, 400, "BadRequest", "continue"},
		{"name missing", "POST", widgetsPath, `{"spec":{}}`, nil, 422, "Invalid", "metadata.name: Required value"},
		{"uid change", "PUT", itemPath, `{"metadata":{"name":"existing","uid":"not-the-uid"}}`, nil, 422, "Invalid", "metadata.uid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			r := e.do(tc.method, tc.path, tc.body, tc.hdr...)
			if r.code != tc.code {
				t.Fatalf("code %d, want %d: %s", r.code, tc.code, r.body)
			}
			st := r.status(t)
			if int(st.Code) != tc.code || st.Status != "Failure" || string(st.Reason) != tc.reason {
				t.Fatalf("status %+v, want code %d reason %s", st, tc.code, tc.reason)
			}
			if !strings.Contains(st.Message, tc.contains) {
				t.Fatalf("message %q does not contain %q", st.Message, tc.contains)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
		})
	}
	_ = w
}

// TestChunkedBodyTooLarge: a body without Content-Length is cut at the limit.
func TestChunkedBodyTooLarge(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBodyBytes = 1024 })
	body := io.MultiReader(strings.NewReader(`{"metadata":{"name":"x"},"spec":{"color":"`), strings.NewReader(strings.Repeat("y", 4096)), strings.NewReader(`"}}`))
	req, _ := http.NewRequest("POST", e.srv.URL+widgetsPath, body)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 413 || !strings.Contains(string(b), "RequestEntityTooLarge") {
		t.Fatalf("code %d: %s", res.StatusCode, b)
	}
	if req.ContentLength != 0 {
		t.Fatalf("request had a Content-Length %d", req.ContentLength)
	}
}

func TestInvalidCauses(t *testing.T) {
	e := newEnv(t)
	r := e.must(422, "POST", widgetsPath, `{"metadata":{"name":"v"},"spec":{"color":"bad","size":-1}}`)
	st := r.status(t)
	if st.Details == nil || len(st.Details.Causes) != 3 {
		t.Fatalf("want 3 causes: %s", r.body)
	}
	want := []struct{ reason, field string }{
		{"FieldValueInvalid", "spec.color"},
		{"FieldValueRequired", "spec.items[0].name"},
		{"FieldValueInvalid", "spec.size"},
	}
	for i, c := range st.Details.Causes {
		if c.Type != want[i].reason || c.Field != want[i].field {
			t.Errorf("cause %d = %+v, want %+v", i, c, want[i])
		}
	}
	if st.Details.Name != "v" || st.Details.Kind != "Widget" || st.Details.Group != "example.com" {
		t.Errorf("details %+v", st.Details)
	}
}

func TestFieldValidationModes(t *testing.T) {
	e := newEnv(t)
	body := `{"metadata":{"name":"w1"},"spec":{"size":1,"foo":1}}`
	r := e.must(201, "POST", widgetsPath+"?fieldValidation=Warn", body)
	if got := r.header.Get("Warning"); got != `299 - "unknown field \"spec.foo\""` {
		t.Fatalf("Warning header %q", got)
	}
	r = e.must(201, "POST", widgetsPath+"?fieldValidation=Ignore", strings.Replace(body, "w1", "w2", 1))
	if got := r.header.Get("Warning"); got != "" {
		t.Fatalf("Warning header %q with Ignore", got)
	}
	e.must(400, "POST", widgetsPath+"?fieldValidation=Strict", strings.Replace(body, "w1", "w3", 1))
}
