package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

// svcJSON is a valid Service manifest for edits.
const svcJSON = `{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},
"spec":{"selector":{"app":"x"},"ports":[{"name":"http","port":80,"targetPort":8080}]}}`

func TestErrorsAreStatuses(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	hc := httpClient(t, ts.Bundle().CACertPEM)
	tok := ts.Bundle().AdminToken
	base := ts.URL() + "/api/v1/namespaces/default/services"
	ctx := ctxT(t, 20*time.Second)

	// A stored Service whose resourceVersion goes stale.
	stale := service("stale", api.ServiceTypeClusterIP, 80)
	if err := ts.Client().Create(ctx, resServices, "default", stale); err != nil {
		t.Fatal(err)
	}
	staleRV := stale.ResourceVersion
	stale.Labels = map[string]string{"bump": "1"}
	if err := ts.Client().Update(ctx, resServices, "default", stale); err != nil {
		t.Fatal(err)
	}
	stale.Labels["bump"] = "2"
	stale.ResourceVersion = staleRV
	staleBody, _ := json.Marshal(stale)

	big := append([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"big","annotations":{"a":"`),
		bytes.Repeat([]byte("x"), 3<<20)...)
	big = append(big, []byte(`"}},"spec":{"ports":[{"port":80}]}}`)...)

	type cause struct{ field, msg string }
	cases := []struct {
		name        string
		method      string
		url         string
		body        string
		bodyBytes   []byte
		contentType string
		code        int
		reason      api.StatusReason
		msg         []string // substrings of the message
		causes      []cause  // each must be among details.causes
	}{
		{name: "malformed JSON", method: "POST", url: base, body: `{"metadata": {"name": "x"`,
			code: 400, reason: api.StatusReasonBadRequest},
		{name: "JSON that is not an object", method: "POST", url: base, body: `[1,2]`,
			code: 400, reason: api.StatusReasonBadRequest},
		{name: "malformed YAML", method: "POST", url: base, contentType: "application/yaml",
			body: "apiVersion: v1\nkind: Service\nmetadata: [name: x\n", code: 400, reason: api.StatusReasonBadRequest},
		{name: "YAML with an unknown field", method: "POST", url: base, contentType: "application/yaml",
			body: "apiVersion: v1\nkind: Service\nmetadata:\n  name: y1\nspec:\n  ports:\n  - port: 80\n  bar: 1\n",
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"spec.bar"}},
		{name: "unknown field", method: "POST", url: base,
			body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"u"},"spec":{"foo":1,"ports":[{"port":80}]}}`,
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"spec.foo"}},
		{name: "unknown nested field", method: "POST", url: base,
			body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"u"},"spec":{"ports":[{"port":80,"nodeport":1}]}}`,
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"spec.ports[0].nodeport"}},
		{name: "apiVersion does not fit the path", method: "POST", url: base,
			body: `{"apiVersion":"apps/v1","kind":"Service","metadata":{"name":"a"},"spec":{"ports":[{"port":80}]}}`,
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"apps/v1"}},
		{name: "kind does not fit the path", method: "POST", url: base,
			body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"ports":[{"port":80}]}}`,
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"Pod"}},
		{name: "body name differs from the path name", method: "PUT", url: base + "/stale",
			body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"other"},"spec":{"ports":[{"port":80}]}}`,
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"other", "stale"}},
		{name: "namespace differs from the path", method: "POST", url: base,
			body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"n","namespace":"kube-system"},"spec":{"ports":[{"port":80}]}}`,
			code: 400, reason: api.StatusReasonBadRequest, msg: []string{"namespace"}},
		{name: "invalid name", method: "POST", url: base,
			body: `{"metadata":{"name":"Bad_Name"},"spec":{"ports":[{"port":80}]}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"metadata.name", "Bad_Name"}}},
		{name: "invalid label key and value", method: "POST", url: base,
			body: `{"metadata":{"name":"l","labels":{"-bad":"ok","good":"bad value"}},"spec":{"ports":[{"port":80}]}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"metadata.labels", "-bad"}, {"metadata.labels[good]", "bad value"}}},
		{name: "invalid service selector value", method: "POST", url: base,
			body: `{"metadata":{"name":"sel"},"spec":{"selector":{"app":"no spaces"},"ports":[{"port":80}]}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"spec.selector[app]", "no spaces"}}},
		{name: "invalid deployment selector operator", method: "POST", url: ts.URL() + "/apis/apps/v1/namespaces/default/deployments",
			body: `{"metadata":{"name":"d"},"spec":{"selector":{"matchExpressions":[{"key":"app","operator":"Near","values":["x"]}]},
			"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"spec.selector.matchExpressions[0].operator", ""}}},
		{name: "invalid labelSelector in a list", method: "GET", url: base + "?labelSelector=" + url.QueryEscape("app in (a"),
			code: 400, reason: api.StatusReasonBadRequest},
		{name: "invalid fieldSelector in a list", method: "GET", url: base + "?fieldSelector=" + url.QueryEscape("spec.nope=1"),
			code: 400, reason: api.StatusReasonBadRequest},
		{name: "port 0", method: "POST", url: base,
			body: `{"metadata":{"name":"p0"},"spec":{"ports":[{"port":0}]}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"spec.ports[0].port", "between 1 and 65535"}}},
		{name: "port 65536", method: "POST", url: base,
			body: `{"metadata":{"name":"p65536"},"spec":{"ports":[{"port":65536}]}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"spec.ports[0].port", "between 1 and 65535"}}},
		{name: "duplicate port names with other errors", method: "POST", url: base,
			body: `{"metadata":{"name":"dup"},"spec":{"ports":[{"name":"web","port":80},{"name":"web","port":81},{"name":"x","port":0}]}}`,
			code: 422, reason: api.StatusReasonInvalid,
			causes: []cause{{"spec.ports[1].name", "web"}, {"spec.ports[2].port", "between 1 and 65535"}}},
		{name: "stale resourceVersion", method: "PUT", url: base + "/stale", bodyBytes: staleBody,
			code: 409, reason: api.StatusReasonConflict},
		{name: "already exists", method: "POST", url: base, body: strings.Replace(svcJSON, "%q", `"stale"`, 1),
			code: 409, reason: api.StatusReasonAlreadyExists},
		{name: "body over 3 MiB", method: "POST", url: base, bodyBytes: big,
			code: 413, reason: api.StatusReasonRequestEntityTooLarge},
		{name: "unknown core resource", method: "GET", url: ts.URL() + "/api/v1/namespaces/default/widgets",
			code: 404, reason: api.StatusReasonNotFound},
		{name: "unknown group", method: "GET", url: ts.URL() + "/apis/widgets.example.com/v1/widgets",
			code: 404, reason: api.StatusReasonNotFound},
		{name: "missing object", method: "GET", url: base + "/nope",
			code: 404, reason: api.StatusReasonNotFound, msg: []string{"nope"}},
		{name: "missing namespace", method: "POST", url: ts.URL() + "/api/v1/namespaces/nope/services",
			body: strings.Replace(svcJSON, "%q", `"x"`, 1), code: 404, reason: api.StatusReasonNotFound},
		{name: "unsupported media type", method: "POST", url: base, contentType: "text/plain",
			body: strings.Replace(svcJSON, "%q", `"m"`, 1), code: 415, reason: api.StatusReasonUnsupportedMediaType},
		{name: "unsupported patch type", method: "PATCH", url: base + "/stale", contentType: "application/apply-patch+yaml",
			body: `{}`, code: 415, reason: api.StatusReasonUnsupportedMediaType},
		{name: "malformed merge patch", method: "PATCH", url: base + "/stale", contentType: "application/merge-patch+json",
			body: `{"metadata":`, code: 400, reason: api.StatusReasonBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.bodyBytes
			if body == nil && tc.body != "" {
				body = []byte(tc.body)
			}
			var headers []string
			if tc.contentType != "" {
				headers = append(headers, "Content-Type: "+tc.contentType)
			}
			r := raw(t, hc, tc.method, tc.url, tok, body, headers...)
			if r.code != tc.code {
				t.Fatalf("%s %s: %d, want %d: %.400s", tc.method, tc.url, r.code, tc.code, r.body)
			}
			st := r.status(t)
			if st.Status != "Failure" || st.Code != int32(tc.code) || st.Reason != tc.reason {
				t.Fatalf("Status status=%q code=%d reason=%q, want Failure %d %q: %s", st.Status, st.Code, st.Reason, tc.code, tc.reason, r.body)
			}
			if st.Message == "" {
				t.Fatalf("Status without a message: %s", r.body)
			}
			for _, m := range tc.msg {
				if !strings.Contains(st.Message, m) {
					t.Errorf("message %q lacks %q", st.Message, m)
				}
			}
			for _, want := range tc.causes {
				found := false
				if st.Details != nil {
					for _, c := range st.Details.Causes {
						if c.Field == want.field && strings.Contains(c.Message, want.msg) {
							found = true
						}
					}
				}
				if !found {
					t.Errorf("details.causes lack field %q with %q: %s", want.field, want.msg, r.body)
				}
				if !strings.Contains(st.Message, want.field) {
					t.Errorf("message %q does not name %s", st.Message, want.field)
				}
			}
			if tc.code == 422 && (st.Details == nil || st.Details.Kind != "Service" && st.Details.Kind != "Deployment") {
				t.Errorf("422 details do not name the kind: %s", r.body)
			}
		})
	}

	// None of the rejected writes stored anything.
	var l api.ServiceList
	if err := ts.Client().List(ctx, resServices, "default", clientListAll, &l); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Items {
		if s.Name != "kubernetes" && s.Name != "stale" {
			t.Errorf("a rejected request stored Service %s", s.Name)
		}
	}
	if got := len(listIPAddresses(t, ts.Client())); got != 2 {
		t.Errorf("%d IPAddresses after rejected creates, want 2 (kubernetes, stale)", got)
	}
	if r := raw(t, hc, "GET", base+"/stale", tok, nil); r.code != http.StatusOK || !strings.Contains(string(r.body), `"bump":"1"`) {
		t.Errorf("the stale PUT changed the object: %d %s", r.code, r.body)
	}
}
