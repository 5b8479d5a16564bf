package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

// canI asks a SelfSubjectAccessReview as token.
func canI(t testing.TB, ts *servertest.Server, token string, spec string) api.SubjectAccessReviewStatus {
	t.Helper()
	hc := httpClient(t, ts.Bundle().CACertPEM)
	r := raw(t, hc, http.MethodPost, ts.URL()+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", token,
		[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":`+spec+`}`))
	if r.code != http.StatusCreated {
		t.Fatalf("selfsubjectaccessreview %s: %d %s", spec, r.code, r.body)
	}
	var rev api.SelfSubjectAccessReview
	if err := json.Unmarshal(r.body, &rev); err != nil {
		t.Fatal(err)
	}
	return rev.Status
}

// TestCanIIsTruthful compares, for the admin, dashboard, node and
// ServiceAccount tokens, what a SelfSubjectAccessReview answers with what
// the same request really gets (403 or not; writes are dry runs).
func TestCanIIsTruthful(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 60*time.Second)
	c := ts.Client()
	saSetup(t, ts, "tok")
	saSetup(t, ts, "elsewhere")
	pod := boundPod("mine", "node-1")
	pod.Spec.ServiceAccountName = "app"
	pod.Spec.Volumes = []api.Volume{{Name: "cm", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "cm"}}}}}
	if err := c.Create(ctx, resPods, "tok", pod); err != nil {
		t.Fatal(err)
	}
	node := joinNode(t, ts, "node-1", testPassword)
	sa, _ := mustToken(t, ts, ts.Bundle().AdminToken, "tok", "app", `{"spec":{}}`)
	tokens := map[string]string{"admin": ts.Bundle().AdminToken, "dashboard": ts.Bundle().DashboardToken, "node": node, "serviceaccount": sa}
	// The node graph learns of the pod from a watch.
	eventually(t, 10*time.Second, "the node graph has the pod", func() (bool, error) {
		return canI(t, ts, node, `{"resourceAttributes":{"verb":"get","resource":"configmaps","namespace":"tok","name":"cm"}}`).Allowed, nil
	})
	hc := httpClient(t, ts.Bundle().CACertPEM)
	const dry = "?dryRun=All"
	cases := []struct {
		spec, method, path, body string
	}{
		{`{"resourceAttributes":{"verb":"get","resource":"pods","namespace":"tok","name":"mine"}}`, "GET", "/api/v1/namespaces/tok/pods/mine", ""},
		{`{"resourceAttributes":{"verb":"list","resource":"pods","namespace":"tok"}}`, "GET", "/api/v1/namespaces/tok/pods", ""},
		{`{"resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{"rawSelector":"spec.nodeName=node-1"}}}`, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1", ""},
		{`{"resourceAttributes":{"verb":"get","resource":"secrets","namespace":"tok","name":"s"}}`, "GET", "/api/v1/namespaces/tok/secrets/s", ""},
		{`{"resourceAttributes":{"verb":"list","resource":"secrets","namespace":"tok"}}`, "GET", "/api/v1/namespaces/tok/secrets", ""},
		{`{"resourceAttributes":{"verb":"get","resource":"configmaps","namespace":"tok","name":"cm"}}`, "GET", "/api/v1/namespaces/tok/configmaps/cm", ""},
		{`{"resourceAttributes":{"verb":"get","resource":"configmaps","namespace":"elsewhere","name":"cm"}}`, "GET", "/api/v1/namespaces/elsewhere/configmaps/cm", ""},
		{`{"resourceAttributes":{"verb":"list","resource":"configmaps"}}`, "GET", "/api/v1/configmaps", ""},
		{`{"resourceAttributes":{"verb":"watch","resource":"configmaps","namespace":"tok"}}`, "GET", "/api/v1/namespaces/tok/configmaps?watch=1&timeoutSeconds=1", ""},
		{`{"resourceAttributes":{"verb":"create","resource":"configmaps","namespace":"tok"}}`, "POST", "/api/v1/namespaces/tok/configmaps" + dry, `{"metadata":{"name":"new"}}`},
		{`{"resourceAttributes":{"verb":"delete","resource":"configmaps","namespace":"tok","name":"cm"}}`, "DELETE", "/api/v1/namespaces/tok/configmaps/cm" + dry, ""},
		{`{"resourceAttributes":{"verb":"list","group":"apps","resource":"deployments","namespace":"tok"}}`, "GET", "/apis/apps/v1/namespaces/tok/deployments", ""},
		{`{"resourceAttributes":{"verb":"get","resource":"nodes","name":"node-1"}}`, "GET", "/api/v1/nodes/node-1", ""},
		{`{"resourceAttributes":{"verb":"list","resource":"nodes"}}`, "GET", "/api/v1/nodes", ""},
		{`{"resourceAttributes":{"verb":"patch","resource":"pods","subresource":"status","namespace":"tok","name":"mine"}}`, "PATCH", "/api/v1/namespaces/tok/pods/mine/status" + dry, `{}`},
		{`{"resourceAttributes":{"verb":"create","resource":"serviceaccounts","subresource":"token","namespace":"tok","name":"app"}}`, "POST", "/api/v1/namespaces/tok/serviceaccounts/app/token" + dry, `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"mine"}}}`},
		{`{"resourceAttributes":{"verb":"create","resource":"serviceaccounts","subresource":"token","namespace":"elsewhere","name":"app"}}`, "POST", "/api/v1/namespaces/elsewhere/serviceaccounts/app/token" + dry, `{"spec":{}}`},
		{`{"nonResourceAttributes":{"verb":"get","path":"/metrics"}}`, "GET", "/metrics", ""},
		{`{"nonResourceAttributes":{"verb":"get","path":"/apis"}}`, "GET", "/apis", ""},
		{`{"nonResourceAttributes":{"verb":"get","path":"/openid/v1/jwks"}}`, "GET", "/openid/v1/jwks", ""},
		{`{"nonResourceAttributes":{"verb":"get","path":"/openapi/v2"}}`, "GET", "/openapi/v2", ""},
	}
	for who, tok := range tokens {
		for _, tc := range cases {
			st := canI(t, ts, tok, tc.spec)
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			var hdr []string
			if tc.method == "PATCH" {
				hdr = append(hdr, "Content-Type: application/merge-patch+json")
			}
			r := raw(t, hc, tc.method, ts.URL()+tc.path, tok, body, hdr...)
			real := r.code != http.StatusForbidden
			if st.Allowed != real || st.EvaluationError != "" {
				t.Errorf("%s: can-i %s says allowed=%v (%q), the request got %d %s", who, tc.spec, st.Allowed, st.EvaluationError, r.code, firstLine(r.body))
			}
		}
	}
	// Every token but the join token may ask; the join token is allowed
	// nothing.
	r := raw(t, hc, http.MethodPost, ts.URL()+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ts.Bundle().NodeToken,
		[]byte(`{"spec":{"nonResourceAttributes":{"verb":"get","path":"/api"}}}`))
	if r.code != http.StatusForbidden {
		t.Errorf("the join token asks a review: %d %s", r.code, r.body)
	}
	// Bad input: neither or both attribute sets.
	for _, spec := range []string{`{}`, `{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"verb":"get","path":"/"}}`} {
		r := raw(t, hc, http.MethodPost, ts.URL()+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", sa, []byte(`{"spec":`+spec+`}`))
		if st := r.status(t); r.code != http.StatusUnprocessableEntity || st.Details == nil || len(st.Details.Causes) != 1 || !strings.HasPrefix(st.Details.Causes[0].Field, "spec.") {
			t.Errorf("spec %s: %d %s", spec, r.code, r.body)
		}
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func TestWhoAmI(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	saSetup(t, ts, "tok")
	sa, _ := mustToken(t, ts, ts.Bundle().AdminToken, "tok", "app", `{"spec":{}}`)
	hc := httpClient(t, ts.Bundle().CACertPEM)
	for _, tc := range []struct {
		token, user, groups string
	}{
		{ts.Bundle().AdminToken, "admin", "system:masters"},
		{ts.Bundle().DashboardToken, "system:dashboard", "system:read-only"},
		{joinNode(t, ts, "node-1", testPassword), "system:node:node-1", "system:nodes"},
		{sa, "system:serviceaccount:tok:app", "system:serviceaccounts,system:serviceaccounts:tok,system:authenticated"},
	} {
		r := raw(t, hc, http.MethodPost, ts.URL()+"/apis/authentication.k8s.io/v1/selfsubjectreviews", tc.token,
			[]byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
		var ssr api.SelfSubjectReview
		if r.code != http.StatusCreated || json.Unmarshal(r.body, &ssr) != nil {
			t.Fatalf("whoami: %d %s", r.code, r.body)
		}
		if u := ssr.Status.UserInfo; u.Username != tc.user || strings.Join(u.Groups, ",") != tc.groups {
			t.Errorf("whoami: %+v, want %s in %s", u, tc.user, tc.groups)
		}
	}
	// Discovery lists the reviews and the token subresource.
	for path, want := range map[string]string{
		"/apis/authorization.k8s.io/v1":  `"name":"selfsubjectaccessreviews"`,
		"/apis/authentication.k8s.io/v1": `"name":"selfsubjectreviews"`,
		"/api/v1":                        `"name":"serviceaccounts/token","singularName":"","namespaced":true,"group":"authentication.k8s.io","version":"v1","kind":"TokenRequest","verbs":["create"]`,
		"/apis":                          `"name":"authorization.k8s.io"`,
	} {
		if r := raw(t, hc, http.MethodGet, ts.URL()+path, sa, nil); r.code != 200 || !strings.Contains(string(r.body), want) {
			t.Errorf("%s: %d, want %s in %s", path, r.code, want, r.body)
		}
	}
}

// TestCanIListIsSound: every rule a SelfSubjectRulesReview lists (but
// wildcards and named ones) is one a SelfSubjectAccessReview, and so the
// request, allows; Secrets are never listed but for admins.
func TestCanIListIsSound(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	saSetup(t, ts, "tok")
	sa, _ := mustToken(t, ts, ts.Bundle().AdminToken, "tok", "app", `{"spec":{}}`)
	hc := httpClient(t, ts.Bundle().CACertPEM)
	for who, tok := range map[string]string{
		"admin": ts.Bundle().AdminToken, "dashboard": ts.Bundle().DashboardToken,
		"node": joinNode(t, ts, "node-1", testPassword), "serviceaccount": sa,
	} {
		r := raw(t, hc, http.MethodPost, ts.URL()+"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", tok,
			[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"tok"}}`))
		var rev api.SelfSubjectRulesReview
		if r.code != http.StatusCreated || json.Unmarshal(r.body, &rev) != nil {
			t.Fatalf("%s: rules review %d %s", who, r.code, r.body)
		}
		checked := 0
		for _, rule := range rev.Status.ResourceRules {
			if len(rule.ResourceNames) > 0 || slices.Contains(rule.Verbs, "*") {
				continue
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					resource, sub, _ := strings.Cut(res, "/")
					if resource == "secrets" && g == "" {
						t.Errorf("%s: rules list secrets", who)
					}
					for _, v := range rule.Verbs {
						spec := fmt.Sprintf(`{"resourceAttributes":{"verb":%q,"group":%q,"resource":%q,"subresource":%q,"namespace":"tok"}}`, v, g, resource, sub)
						if !canI(t, ts, tok, spec).Allowed {
							t.Errorf("%s: rules list %s %s/%s, can-i says no", who, v, g, res)
						}
						checked++
					}
				}
			}
		}
		for _, rule := range rev.Status.NonResourceRules {
			for _, p := range rule.NonResourceURLs {
				if p == "*" {
					continue
				}
				p = strings.TrimSuffix(p, "*") + map[bool]string{true: "v1", false: ""}[strings.HasSuffix(p, "*")]
				if !canI(t, ts, tok, fmt.Sprintf(`{"nonResourceAttributes":{"verb":"get","path":%q}}`, p)).Allowed {
					t.Errorf("%s: rules list path %s, can-i says no", who, p)
				}
				checked++
			}
		}
		if who != "admin" && checked == 0 {
			t.Errorf("%s: no rule checked", who)
		}
		if who == "node" && !rev.Status.Incomplete {
			t.Errorf("node rules not marked incomplete")
		}
	}
}
