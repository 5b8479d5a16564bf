package hardening

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/servertest"
)

// authzPassword is the node password of the test's joins.
const authzPassword = "0123456789abcdef-authz-password"

// authzHTTP is an HTTPS client of ts whose connections leave from
// localIP ("" for any).
func authzHTTP(t *testing.T, ts *servertest.Server, localIP string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ts.Bundle().CACertPEM) {
		t.Fatal("no CA certificate")
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	if localIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// authzDo sends one request as token and returns the code and body.
func authzDo(t *testing.T, hc *http.Client, method, u, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, b
}

// authzJoin joins node from localIP ("" for any) and returns its token.
func authzJoin(t *testing.T, ts *servertest.Server, node, localIP string) string {
	t.Helper()
	body, _ := json.Marshal(netagent.JoinRequest{Kind: netagent.JoinRequestKind, APIVersion: netagent.JoinAPIVersion, Password: authzPassword + node})
	code, b := authzDo(t, authzHTTP(t, ts, localIP), http.MethodPost, ts.URL()+netagent.JoinPath(node), ts.Bundle().NodeToken, body)
	if code != http.StatusOK {
		t.Fatalf("join %s: %d %s", node, code, b)
	}
	var resp netagent.JoinResponse
	if err := json.Unmarshal(b, &resp); err != nil || resp.Token == "" {
		t.Fatalf("join %s: %v %s", node, err, b)
	}
	return resp.Token
}

func authzClient(t *testing.T, ts *servertest.Server, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Server: ts.URL(), CAPEM: ts.Bundle().CACertPEM, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuthzNonResourcePaths: /metrics, discovery and OpenAPI are
// authorized by path. The join token reaches only the public paths, a
// node and the dashboard read discovery and OpenAPI but not /metrics,
// an admin everything; without a token everything but the public paths
// is 401.
func TestAuthzNonResourcePaths(t *testing.T) {
	ts := startServer(t, servertest.Options{})
	hc := authzHTTP(t, ts, "")
	b := ts.Bundle()
	node := authzJoin(t, ts, "node-paths", "")
	discovery := []string{"/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/openapi/v2", "/openapi/v3"}
	public := []string{"/healthz", "/livez", "/readyz", "/version"}
	issuer := []string{"/.well-known/openid-configuration", "/openid/v1/jwks"}
	sa := authzSAToken(t, ts, hc)
	type want struct {
		token string
		paths []string
		code  int
	}
	cases := map[string][]want{
		"join token": {
			{b.NodeToken, append([]string{"/metrics", "/no-such-path", "/api/v1/no-such-resource"}, discovery...), http.StatusForbidden},
			{b.NodeToken, public, http.StatusOK},
		},
		"node token": {
			{node, []string{"/metrics", "/no-such-path"}, http.StatusForbidden},
			{node, append(discovery, public...), http.StatusOK},
		},
		"dashboard token": {
			{b.DashboardToken, append([]string{"/metrics"}, issuer...), http.StatusForbidden},
			{b.DashboardToken, discovery, http.StatusOK},
		},
		"ServiceAccount token": {
			{sa, []string{"/metrics", "/no-such-path"}, http.StatusForbidden},
			{sa, append(append(discovery, public...), issuer...), http.StatusOK},
		},
		"admin token": {
			{b.AdminToken, append([]string{"/metrics"}, discovery...), http.StatusOK},
			{b.AdminToken, []string{"/no-such-path"}, http.StatusNotFound},
		},
		"no token": {
			{"", append([]string{"/metrics", "/no-such-path"}, discovery...), http.StatusUnauthorized},
			{"", public, http.StatusOK},
		},
	}
	for name, ws := range cases {
		t.Run(name, func(t *testing.T) {
			for _, w := range ws {
				for _, p := range w.paths {
					code, body := authzDo(t, hc, http.MethodGet, ts.URL()+p, w.token, nil)
					if code != w.code {
						t.Errorf("GET %s: %d, want %d: %.200s", p, code, w.code, body)
					}
					if code == http.StatusForbidden && !strings.Contains(string(body), `"kind":"Status"`) {
						t.Errorf("GET %s: the 403 is no Status: %.200s", p, body)
					}
				}
			}
		})
	}
}

// authzSAToken is a token of the default namespace's default
// ServiceAccount (the serviceaccount controller makes it).
func authzSAToken(t *testing.T, ts *servertest.Server, hc *http.Client) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := authzDo(t, hc, http.MethodPost, ts.URL()+"/api/v1/namespaces/default/serviceaccounts/default/token", ts.Bundle().AdminToken, []byte(`{"spec":{}}`))
		if code == http.StatusCreated {
			var tr api.TokenRequest
			if err := json.Unmarshal(body, &tr); err != nil || tr.Status.Token == "" {
				t.Fatalf("token request: %v %s", err, body)
			}
			return tr.Status.Token
		}
		if code != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("token request: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// authzPod is a pod bound to node that reads secret and configMap the
// three ways (env, envFrom, volume) and has a plain env value.
func authzPod(name, node, secret, configMap string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Annotations: map[string]string{"note": "annotation-" + name}},
		Spec: api.PodSpec{
			NodeName: node,
			Containers: []api.Container{{
				Name: "c", Image: "busybox",
				Env: []api.EnvVar{
					{Name: "PLAIN", Value: "env-value-of-" + name},
					{Name: "PASSWORD", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{LocalObjectReference: api.LocalObjectReference{Name: secret}, Key: "password"}}},
				},
				EnvFrom: []api.EnvFromSource{{ConfigMapRef: &api.ConfigMapEnvSource{LocalObjectReference: api.LocalObjectReference{Name: configMap + "-env"}}}},
			}},
			Volumes: []api.Volume{{Name: "conf", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: configMap}}}}},
		},
	}
}

// TestAuthzNodeReadsItsOwn: two nodes; each reads its own pods (get, and
// list/watch with spec.nodeName=<itself>) and gets the Secrets and
// ConfigMaps they reference, and is refused the other's: 403 on the
// other's pod, on a pod that does not exist and on the other's pods'
// Secrets and ConfigMaps by name; lists of Secrets are refused. Listing
// every pod (what the node DNS does) returns names and IPs only: no env,
// no annotations, no volumes.
func TestAuthzNodeReadsItsOwn(t *testing.T) {
	ts := startServer(t, servertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := authzHTTP(t, ts, "")
	tokA, tokB := authzJoin(t, ts, "node-a", ""), authzJoin(t, ts, "node-b", "")
	for _, p := range []*api.Pod{authzPod("pod-a", "node-a", "sec-a", "cm-a"), authzPod("pod-b", "node-b", "sec-b", "cm-b")} {
		if err := ts.Client().Create(ctx, api.Lookup(api.Resources(), "v1", "pods"), "default", p); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b", "never-referenced"} {
		sec := &api.Secret{ObjectMeta: api.ObjectMeta{Name: "sec-" + n}, Data: map[string][]byte{"password": []byte("secret-of-" + n)}}
		if n == "never-referenced" {
			sec.Name = n
		}
		if err := ts.Client().Create(ctx, api.Lookup(api.Resources(), "v1", "secrets"), "default", sec); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"cm-" + n, "cm-" + n + "-env"} {
			cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
			if err := ts.Client().Create(ctx, api.Lookup(api.Resources(), "v1", "configmaps"), "default", cm); err != nil {
				t.Fatal(err)
			}
		}
	}
	const ns = "/api/v1/namespaces/default/"
	get := func(tok, path string) (int, string) {
		code, b := authzDo(t, hc, http.MethodGet, ts.URL()+path, tok, nil)
		return code, string(b)
	}
	for _, n := range []struct {
		tok, me, other string
	}{{tokA, "a", "b"}, {tokB, "b", "a"}} {
		t.Run("node-"+n.me, func(t *testing.T) {
			mine, theirs := "pod-"+n.me, "pod-"+n.other
			if code, body := get(n.tok, ns+"pods/"+mine); code != http.StatusOK {
				t.Errorf("get own pod: %d %.200s", code, body)
			}
			for _, p := range []string{ns + "pods/" + theirs, ns + "pods/" + theirs + "/status", ns + "pods/no-such-pod"} {
				if code, body := get(n.tok, p); code != http.StatusForbidden {
					t.Errorf("GET %s: %d, want 403: %.200s", p, code, body)
				}
			}
			sel := url.Values{"fieldSelector": {"spec.nodeName=node-" + n.me}}.Encode()
			code, body := get(n.tok, ns+"pods?"+sel)
			if code != http.StatusOK || !strings.Contains(body, "env-value-of-"+mine) || strings.Contains(body, theirs) {
				t.Errorf("list with its selector: %d %.300s", code, body)
			}
			// Without the selector (or with another node's): addresses only.
			for _, q := range []string{"", "?fieldSelector=" + url.QueryEscape("spec.nodeName=node-"+n.other), "?watch=1&timeoutSeconds=1"} {
				code, body := get(n.tok, ns+"pods"+q)
				if code != http.StatusOK || !strings.Contains(body, `"name":"`+theirs+`"`) {
					t.Errorf("list%s: %d %.300s", q, code, body)
				}
				for _, secret := range []string{"env-value-of-" + theirs, "annotation-" + theirs, "sec-" + n.other, "cm-" + n.other, "busybox"} {
					if strings.Contains(body, secret) {
						t.Errorf("list%s shows %q of another node's pod: %.300s", q, secret, body)
					}
				}
			}
			for p, kind := range map[string]string{ns + "secrets/sec-" + n.me: "Secret", ns + "configmaps/cm-" + n.me: "ConfigMap", ns + "configmaps/cm-" + n.me + "-env": "ConfigMap"} {
				if code, body := get(n.tok, p); code != http.StatusOK || !strings.Contains(body, `"kind":"`+kind+`"`) {
					t.Errorf("GET %s (its own pod's): %d, want 200 with the %s: %.200s", p, code, kind, body)
				}
			}
			for _, p := range []string{ns + "secrets/sec-" + n.other, ns + "configmaps/cm-" + n.other, ns + "configmaps/cm-" + n.other + "-env", ns + "secrets/never-referenced",
				ns + "secrets", "/api/v1/secrets", ns + "configmaps?watch=1"} {
				if code, body := get(n.tok, p); code != http.StatusForbidden {
					t.Errorf("GET %s: %d, want 403: %.200s", p, code, body)
				}
			}
		})
	}
	// The graph follows deletions: once pod-a is gone, node-a loses sec-a.
	if err := ts.Client().Delete(ctx, api.Lookup(api.Resources(), "v1", "pods"), "default", "pod-a", client.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _ := get(tokA, ns+"secrets/sec-a")
		if code == http.StatusForbidden {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sec-a after pod-a's deletion: %d, want 403", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAuthzNodeAPIDialTarget: a node publishes, as its node API, a port
// of the server's own loopback where something else listens. The server
// dials only the address the node joined from (here 127.0.0.2), so the
// listener sees no connection, and the client's logs and trace get a
// generic 503 naming neither address nor the dial error.
func TestAuthzNodeAPIDialTarget(t *testing.T) {
	ts := startServer(t, servertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	// Something the server reaches on its own loopback (a database, an
	// admin port): the node points its node API there.
	target := ln.Addr().String()

	tok := authzJoin(t, ts, "node-ssrf", "127.0.0.2")
	node := &api.Node{
		ObjectMeta: api.ObjectMeta{Name: "node-ssrf", Annotations: map[string]string{
			netagent.AnnotationNodeAPI:     "https://" + target,
			netagent.AnnotationNodeAPICert: strings.Repeat("ab", 32),
		}},
		Status: api.NodeStatus{Addresses: []api.NodeAddress{{Type: api.NodeInternalIP, Address: "127.0.0.1"}}},
	}
	if err := authzClient(t, ts, tok).Create(ctx, api.Lookup(api.Resources(), "v1", "nodes"), "", node); err != nil {
		t.Fatalf("the node registers: %v", err)
	}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "victim"}, Spec: api.PodSpec{NodeName: "node-ssrf", Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	if err := ts.Client().Create(ctx, api.Lookup(api.Resources(), "v1", "pods"), "default", pod); err != nil {
		t.Fatal(err)
	}
	hc := authzHTTP(t, ts, "")
	_, port, _ := net.SplitHostPort(target)
	for _, p := range []string{"/api/v1/namespaces/default/pods/victim/log", "/skiff/v1/namespaces/default/pods/victim/trace?url=http://web"} {
		code, body := authzDo(t, hc, http.MethodGet, ts.URL()+p, ts.Bundle().AdminToken, nil)
		if code != http.StatusServiceUnavailable {
			t.Errorf("GET %s: %d, want 503: %.300s", p, code, body)
		}
		for _, leak := range []string{"127.0.0", port, "refused", "dial", "certificate"} {
			if strings.Contains(string(body), leak) {
				t.Errorf("GET %s: the answer names %q: %.300s", p, leak, body)
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the server connected %d times to %s, the address the node published", n, target)
	}
}
