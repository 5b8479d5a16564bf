package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/satoken"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// requestToken posts a TokenRequest body as token; it returns the raw
// response.
func requestToken(t testing.TB, ts *servertest.Server, token, ns, sa, body string) rawResponse {
	t.Helper()
	hc := httpClient(t, ts.Bundle().CACertPEM)
	return raw(t, hc, http.MethodPost, ts.URL()+"/api/v1/namespaces/"+ns+"/serviceaccounts/"+sa+"/token", token, []byte(body))
}

// mustToken requests a token and returns it with the decoded answer.
func mustToken(t testing.TB, ts *servertest.Server, token, ns, sa, body string) (string, api.TokenRequest) {
	t.Helper()
	r := requestToken(t, ts, token, ns, sa, body)
	if r.code != http.StatusCreated {
		t.Fatalf("token request for %s/%s: %d %s", ns, sa, r.code, r.body)
	}
	var tr api.TokenRequest
	if err := json.Unmarshal(r.body, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Status.Token == "" {
		t.Fatalf("no token in %s", r.body)
	}
	return tr.Status.Token, tr
}

// jwtClaims decodes a JWT's payload without checking it.
func jwtClaims(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// saSetup makes namespace ns with ServiceAccount app, a Secret and a
// ConfigMap.
func saSetup(t testing.TB, ts *servertest.Server, ns string) *api.ServiceAccount {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	c := ts.Client()
	mustCreateNS(t, c, ns)
	sa := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "app"}}
	if err := c.Create(ctx, resSAs, ns, sa); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resSecrets, ns, &api.Secret{ObjectMeta: api.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resConfigMaps, ns, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "cm"}}); err != nil {
		t.Fatal(err)
	}
	return sa
}

func TestTokenRequest(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	admin := ts.Bundle().AdminToken
	sa := saSetup(t, ts, "tok")

	tok, tr := mustToken(t, ts, admin, "tok", "app", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	c := jwtClaims(t, tok)
	if c["iss"] != satoken.DefaultIssuer || c["sub"] != "system:serviceaccount:tok:app" {
		t.Fatalf("iss/sub: %v", c)
	}
	if aud, _ := c["aud"].([]any); len(aud) != 1 || aud[0] != satoken.DefaultIssuer {
		t.Fatalf("aud %v, want the issuer", c["aud"])
	}
	exp, iat, nbf := c["exp"].(float64), c["iat"].(float64), c["nbf"].(float64)
	if exp-iat != 3600 || nbf != iat {
		t.Fatalf("exp %v iat %v nbf %v: want a default of 3600s", exp, iat, nbf)
	}
	if got := tr.Status.ExpirationTimestamp.Unix(); got != int64(exp) {
		t.Fatalf("expirationTimestamp %d, exp %v", got, exp)
	}
	k8s, _ := c["kubernetes.io"].(map[string]any)
	sac, _ := k8s["serviceaccount"].(map[string]any)
	if k8s["namespace"] != "tok" || sac["name"] != "app" || sac["uid"] == "" {
		t.Fatalf("kubernetes.io claim %v", k8s)
	}
	var stored api.ServiceAccount
	if err := ts.Client().Get(ctx, resSAs, "tok", "app", &stored); err != nil {
		t.Fatal(err)
	}
	if sac["uid"] != stored.UID {
		t.Fatalf("serviceaccount uid %v, stored %s", sac["uid"], stored.UID)
	}
	_ = sa

	// Lifetime: asked, capped, too short, too long.
	_, tr = mustToken(t, ts, admin, "tok", "app", `{"spec":{"expirationSeconds":7200,"audiences":["vault"]}}`)
	if *tr.Spec.ExpirationSeconds != 7200 || tr.Spec.Audiences[0] != "vault" {
		t.Fatalf("spec %+v", tr.Spec)
	}
	_, tr = mustToken(t, ts, admin, "tok", "app", fmt.Sprintf(`{"spec":{"expirationSeconds":%d}}`, int64(1)<<32))
	if *tr.Spec.ExpirationSeconds != 48*3600 {
		t.Fatalf("expirationSeconds 2^32 became %d, want the 48h cap", *tr.Spec.ExpirationSeconds)
	}
	for _, bad := range []struct{ body, field, msg string }{
		{`{"spec":{"expirationSeconds":599}}`, "spec.expirationSeconds", "may not specify a duration less than 10 minutes"},
		{fmt.Sprintf(`{"spec":{"expirationSeconds":%d}}`, int64(1)<<32+1), "spec.expirationSeconds", "may not specify a duration larger than 2^32 seconds"},
		{`{"spec":{"boundObjectRef":{"kind":"Pod"}}}`, "spec.boundObjectRef.name", "Required value"},
	} {
		r := requestToken(t, ts, admin, "tok", "app", bad.body)
		st := r.status(t)
		if r.code != http.StatusUnprocessableEntity || st.Details == nil || len(st.Details.Causes) != 1 ||
			st.Details.Causes[0].Field != bad.field || !strings.Contains(st.Message, bad.msg) {
			t.Errorf("%s: %d %s", bad.body, r.code, r.body)
		}
	}
	for _, bad := range []struct {
		sa, body string
		code     int
	}{
		{"nobody", `{"spec":{}}`, http.StatusNotFound},
		{"app", `{"spec":{"boundObjectRef":{"kind":"ConfigMap","apiVersion":"v1","name":"cm"}}}`, http.StatusBadRequest},
		{"app", `{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"s","uid":"wrong"}}}`, http.StatusConflict},
		{"app", `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"nopod"}}}`, http.StatusNotFound},
		{"app", `{"spec":{"unknown":1}}`, http.StatusBadRequest},
		{"app", `{"kind":"Pod"}`, http.StatusBadRequest},
	} {
		if r := requestToken(t, ts, admin, "tok", bad.sa, bad.body); r.code != bad.code {
			t.Errorf("%s %s: %d %s, want %d", bad.sa, bad.body, r.code, r.body, bad.code)
		}
	}
	// The dashboard's read-only token may not request tokens.
	if r := requestToken(t, ts, ts.Bundle().DashboardToken, "tok", "app", `{"spec":{}}`); r.code != http.StatusForbidden {
		t.Errorf("dashboard token request: %d %s", r.code, r.body)
	}
}

// whoCode is the status of a GET of the pods of namespace ns as token.
func whoCode(t testing.TB, ts *servertest.Server, token string) int {
	t.Helper()
	hc := httpClient(t, ts.Bundle().CACertPEM)
	return raw(t, hc, http.MethodGet, ts.URL()+"/api/v1/namespaces/tok/configmaps", token, nil).code
}

func TestServiceAccountTokenAuthentication(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	admin := ts.Bundle().AdminToken
	c := ts.Client()
	saSetup(t, ts, "tok")

	plain, _ := mustToken(t, ts, admin, "tok", "app", `{"spec":{}}`)
	if code := whoCode(t, ts, plain); code != http.StatusOK {
		t.Fatalf("a fresh token: %d", code)
	}
	// Another audience is refused by the API server.
	other, _ := mustToken(t, ts, admin, "tok", "app", `{"spec":{"audiences":["vault"]}}`)
	if code := whoCode(t, ts, other); code != http.StatusUnauthorized {
		t.Errorf("a token for another audience: %d, want 401", code)
	}
	// A token of the same shape signed by another key is refused.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var sa api.ServiceAccount
	if err := c.Get(ctx, resSAs, "tok", "app", &sa); err != nil {
		t.Fatal(err)
	}
	forger, err := satoken.New(key, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	forged, _, err := forger.Issue(satoken.Request{Namespace: "tok", Name: "app", UID: sa.UID, Audiences: []string{satoken.DefaultIssuer}, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if code := whoCode(t, ts, forged); code != http.StatusUnauthorized {
		t.Errorf("a token of another key: %d, want 401", code)
	}
	// Expired and not yet valid tokens, signed with the server's key.
	keyPEM, err := os.ReadFile(filepath.Join(ts.DataDir(), "tls", "service-account.key"))
	if err != nil {
		t.Fatal(err)
	}
	skey := parseECKey(t, keyPEM)
	for _, tc := range []struct {
		name string
		at   time.Time
	}{{"expired", time.Now().Add(-2 * time.Hour)}, {"not yet valid", time.Now().Add(time.Hour)}} {
		at := tc.at
		s, err := satoken.New(skey, "", func() time.Time { return at })
		if err != nil {
			t.Fatal(err)
		}
		tok, _, err := s.Issue(satoken.Request{Namespace: "tok", Name: "app", UID: sa.UID, Audiences: []string{satoken.DefaultIssuer}, Lifetime: time.Hour - 2*time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if code := whoCode(t, ts, tok); code != http.StatusUnauthorized {
			t.Errorf("%s token: %d, want 401", tc.name, code)
		}
	}

	// Bound to a Secret: deleting the Secret ends the token.
	secretTok, _ := mustToken(t, ts, admin, "tok", "app", `{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"s"}}}`)
	if k := jwtClaims(t, secretTok)["kubernetes.io"].(map[string]any); k["secret"].(map[string]any)["name"] != "s" {
		t.Fatalf("secret claim %v", k)
	}
	if code := whoCode(t, ts, secretTok); code != http.StatusOK {
		t.Fatalf("secret-bound token: %d", code)
	}
	if err := c.Delete(ctx, resSecrets, "tok", "s", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if code := whoCode(t, ts, secretTok); code != http.StatusUnauthorized {
		t.Errorf("token of a deleted Secret: %d, want 401", code)
	}

	// Bound to a Pod: the pod must run as the ServiceAccount; deleting
	// and recreating it ends the token (another uid).
	pod := boundPod("web", "node-x")
	pod.Spec.ServiceAccountName = "app"
	if err := c.Create(ctx, resPods, "tok", pod); err != nil {
		t.Fatal(err)
	}
	podTok, _ := mustToken(t, ts, admin, "tok", "app", `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web"}}}`)
	k := jwtClaims(t, podTok)["kubernetes.io"].(map[string]any)
	if k["pod"].(map[string]any)["name"] != "web" || k["node"].(map[string]any)["name"] != "node-x" {
		t.Fatalf("pod claim %v", k)
	}
	if code := whoCode(t, ts, podTok); code != http.StatusOK {
		t.Fatalf("pod-bound token: %d", code)
	}
	if err := c.Delete(ctx, resPods, "tok", "web", client.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pod gone", func() (bool, error) {
		err := c.Get(ctx, resPods, "tok", "web", &api.Pod{})
		return client.IsNotFound(err), nil
	})
	if err := c.Create(ctx, resPods, "tok", pod); err != nil {
		t.Fatal(err)
	}
	if code := whoCode(t, ts, podTok); code != http.StatusUnauthorized {
		t.Errorf("token of a recreated Pod: %d, want 401", code)
	}
	other2 := boundPod("other", "")
	if err := c.Create(ctx, resPods, "tok", other2); err != nil {
		t.Fatal(err)
	}
	if r := requestToken(t, ts, admin, "tok", "app", `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"other"}}}`); r.code != http.StatusBadRequest {
		t.Errorf("bound to a pod of another ServiceAccount: %d %s", r.code, r.body)
	}

	// Deleting the ServiceAccount ends its tokens, recreating it does not
	// bring them back.
	if err := c.Delete(ctx, resSAs, "tok", "app", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if code := whoCode(t, ts, plain); code != http.StatusUnauthorized {
		t.Errorf("token of a deleted ServiceAccount: %d, want 401", code)
	}
	if err := c.Create(ctx, resSAs, "tok", &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	if code := whoCode(t, ts, plain); code != http.StatusUnauthorized {
		t.Errorf("token of a recreated ServiceAccount: %d, want 401", code)
	}

	// The signing key survives a restart; tokens stay valid.
	fresh, _ := mustToken(t, ts, admin, "tok", "app", `{"spec":{}}`)
	fi, err := os.Stat(filepath.Join(ts.DataDir(), "tls", "service-account.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key file: %v %v", fi, err)
	}
	ts.Restart()
	if code := whoCode(t, ts, fresh); code != http.StatusOK {
		t.Errorf("a token after a restart: %d", code)
	}
}

// parseECKey decodes the signing key file.
func parseECKey(t testing.TB, data []byte) *ecdsa.PrivateKey {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("the signing key file holds no PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("signing key is a %T", k)
	}
	return ek
}

func TestNodeTokenRequest(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	c := ts.Client()
	saSetup(t, ts, "tok")
	if err := c.Create(ctx, resSAs, "tok", &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "other"}}); err != nil {
		t.Fatal(err)
	}
	node1 := joinNode(t, ts, "node-1", testPassword)
	for _, p := range []struct{ name, node, sa string }{{"mine", "node-1", "app"}, {"theirs", "node-2", "other"}} {
		pod := boundPod(p.name, p.node)
		pod.Spec.ServiceAccountName = p.sa
		if err := c.Create(ctx, resPods, "tok", pod); err != nil {
			t.Fatal(err)
		}
	}
	bound := func(pod string) string {
		return fmt.Sprintf(`{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":%q}}}`, pod)
	}
	// The node graph learns of the pods from a watch: wait for it.
	eventually(t, 10*time.Second, "node-1 may request app's token", func() (bool, error) {
		return requestToken(t, ts, node1, "tok", "app", bound("mine")).code == http.StatusCreated, nil
	})
	for _, tc := range []struct {
		name, sa, body string
		want           int
	}{
		{"its pod's ServiceAccount, bound to its pod", "app", bound("mine"), http.StatusCreated},
		{"its pod's ServiceAccount, unbound", "app", `{"spec":{}}`, http.StatusForbidden},
		{"its pod's ServiceAccount, bound to a Secret", "app", `{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"s"}}}`, http.StatusForbidden},
		{"another node's pod's ServiceAccount", "other", bound("theirs"), http.StatusForbidden},
		{"a ServiceAccount no pod of it uses", "default", `{"spec":{}}`, http.StatusForbidden},
	} {
		if r := requestToken(t, ts, node1, "tok", tc.sa, tc.body); r.code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, r.code, r.body, tc.want)
		}
	}
}

func TestServiceAccountRights(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	saSetup(t, ts, "tok")
	saSetup(t, ts, "elsewhere")
	tok, _ := mustToken(t, ts, ts.Bundle().AdminToken, "tok", "app", `{"spec":{}}`)
	hc := httpClient(t, ts.Bundle().CACertPEM)
	u := ts.URL()
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/api/v1/namespaces/tok/configmaps", "", 200},
		{"GET", "/api/v1/namespaces/tok/configmaps/cm", "", 200},
		{"GET", "/api/v1/namespaces/tok/configmaps?watch=1&timeoutSeconds=1", "", 200},
		{"GET", "/api/v1/namespaces/tok/serviceaccounts/app", "", 200},
		{"GET", "/apis/apps/v1/namespaces/tok/deployments", "", 200},
		{"GET", "/api/v1/namespaces/tok/secrets", "", 403},
		{"GET", "/api/v1/namespaces/tok/secrets/s", "", 403},
		{"GET", "/api/v1/namespaces/elsewhere/secrets/s", "", 403},
		{"GET", "/api/v1/namespaces/elsewhere/configmaps/cm", "", 403},
		{"GET", "/api/v1/configmaps", "", 403},
		{"GET", "/api/v1/nodes", "", 403},
		{"GET", "/api/v1/namespaces", "", 403},
		{"POST", "/api/v1/namespaces/tok/configmaps", `{"metadata":{"name":"new"}}`, 403},
		{"DELETE", "/api/v1/namespaces/tok/configmaps/cm", "", 403},
		{"PATCH", "/api/v1/namespaces/tok/configmaps/cm", `{}`, 403},
		{"POST", "/api/v1/namespaces/tok/serviceaccounts/app/token", `{"spec":{}}`, 403},
		{"GET", "/api", "", 200},
		{"GET", "/apis/apps/v1", "", 200},
		{"GET", "/openapi/v2", "", 200},
		{"GET", "/version", "", 200},
		{"GET", "/.well-known/openid-configuration", "", 200},
		{"GET", "/openid/v1/jwks", "", 200},
		{"GET", "/metrics", "", 403},
	} {
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		hdr := []string{}
		if tc.method == "PATCH" {
			hdr = append(hdr, "Content-Type: application/merge-patch+json")
		}
		if r := raw(t, hc, tc.method, u+tc.path, tok, body, hdr...); r.code != tc.want {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, r.code, r.body, tc.want)
		}
	}
	// The issuer discovery documents name the key that signs the tokens.
	var cfg struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	r := raw(t, hc, "GET", u+"/.well-known/openid-configuration", tok, nil)
	if err := json.Unmarshal(r.body, &cfg); err != nil || cfg.Issuer != satoken.DefaultIssuer || cfg.JWKSURI != satoken.DefaultIssuer+"/openid/v1/jwks" {
		t.Fatalf("openid-configuration %s (%v)", r.body, err)
	}
	var jwks struct {
		Keys []struct {
			Kid, Kty, Crv, Alg, X, Y string
		} `json:"keys"`
	}
	r = raw(t, hc, "GET", u+"/openid/v1/jwks", tok, nil)
	if err := json.Unmarshal(r.body, &jwks); err != nil || len(jwks.Keys) != 1 {
		t.Fatalf("jwks %s (%v)", r.body, err)
	}
	var hdr struct {
		Alg, Kid string
	}
	b, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if err := json.Unmarshal(b, &hdr); err != nil || hdr.Alg != "ES256" || hdr.Kid != jwks.Keys[0].Kid || jwks.Keys[0].Crv != "P-256" {
		t.Fatalf("token header %s, jwks %+v", b, jwks.Keys)
	}
	// The dashboard and node tokens do not read the issuer's keys.
	if r := raw(t, hc, "GET", u+"/openid/v1/jwks", ts.Bundle().DashboardToken, nil); r.code != 403 {
		t.Errorf("dashboard token reads the jwks: %d", r.code)
	}
}

// BenchmarkServiceAccountAuthenticate: one list by a pod-bound
// ServiceAccount token (signature, ServiceAccount and Pod reads, the
// authorizer, an empty list).
func BenchmarkServiceAccountAuthenticate(b *testing.B) {
	ts := servertest.Start(b, servertest.Options{})
	ctx := ctxT(b, time.Minute)
	saSetup(b, ts, "tok")
	pod := boundPod("web", "")
	pod.Spec.ServiceAccountName = "app"
	if err := ts.Client().Create(ctx, resPods, "tok", pod); err != nil {
		b.Fatal(err)
	}
	tok, _ := mustToken(b, ts, ts.Bundle().AdminToken, "tok", "app", `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web"}}}`)
	c := clientWith(b, ts, tok)
	b.ResetTimer()
	for b.Loop() {
		if err := c.List(ctx, resEvents, "tok", client.ListOptions{}, &api.EventList{}); err != nil {
			b.Fatal(err)
		}
	}
}
