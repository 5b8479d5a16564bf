package server_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestPodStreamRouting covers the server's half of pods/exec, attach and
// portforward without an agent: who may call them (create on the
// subresource: admins only), and the answers before any upgrade.
func TestPodStreamRouting(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	hc := httpClient(t, ts.Bundle().CACertPEM)
	nodeTok := joinNode(t, ts, "n1", testPassword)
	ws := []string{"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol: v5.channel.k8s.io"}
	path := func(pod, sub, q string) string {
		return ts.URL() + "/api/v1/namespaces/default/pods/" + pod + "/" + sub + q
	}
	for _, sub := range []string{"exec", "attach", "portforward"} {
		for _, m := range []string{"GET", "POST"} {
			// Admins pass to the lookup (404: no pod).
			if r := raw(t, hc, m, path("nope", sub, "?command=ls"), ts.Bundle().AdminToken, nil, ws...); r.code != http.StatusNotFound || !strings.Contains(r.status(t).Message, `pods "nope" not found`) {
				t.Errorf("admin %s %s: %d %s", m, sub, r.code, r.body)
			}
			for who, tok := range map[string]string{"dashboard": ts.Bundle().DashboardToken, "node": nodeTok, "join": ts.Bundle().NodeToken} {
				r := raw(t, hc, m, path("nope", sub, "?command=ls"), tok, nil, ws...)
				if r.code != http.StatusForbidden {
					t.Errorf("%s %s %s: %d %s, want 403", who, m, sub, r.code, r.body)
					continue
				}
				st := r.status(t)
				if want := `cannot create resource "pods/` + sub + `" in API group ""`; st.Reason != api.StatusReasonForbidden || !strings.Contains(st.Message, want) {
					t.Errorf("%s %s %s: %+v, want %q", who, m, sub, st, want)
				}
			}
			if r := raw(t, hc, m, path("nope", sub, ""), "", nil, ws...); r.code != http.StatusUnauthorized {
				t.Errorf("no token %s %s: %d", m, sub, r.code)
			}
		}
		if r := raw(t, hc, "PUT", path("nope", sub, ""), ts.Bundle().AdminToken, nil, ws...); r.code != http.StatusMethodNotAllowed {
			t.Errorf("PUT %s: %d %s", sub, r.code, r.body)
		}
	}

	// A browser's WebSocket carries the token as a subprotocol.
	tokProto := "base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte(ts.Bundle().AdminToken))
	wsTok := append(ws[:4:4], "Sec-WebSocket-Protocol: v5.channel.k8s.io, "+tokProto)
	if r := raw(t, hc, "GET", path("nope", "exec", "?command=ls"), "", nil, wsTok...); r.code != http.StatusNotFound {
		t.Errorf("token as a subprotocol: %d %s, want 404 (authenticated)", r.code, r.body)
	}
	badProto := append(ws[:4:4], "Sec-WebSocket-Protocol: v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.bm9wZQ")
	if r := raw(t, hc, "GET", path("nope", "exec", "?command=ls"), "", nil, badProto...); r.code != http.StatusUnauthorized {
		t.Errorf("a wrong token as a subprotocol: %d %s, want 401", r.code, r.body)
	}

	two := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "two"}, Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "a", Image: "x"}, {Name: "b", Image: "x"}}}}
	if err := ts.Client().Create(ctx, resPods, "default", two); err != nil {
		t.Fatal(err)
	}
	unsched := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "u"}, Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "x"}}}}
	if err := ts.Client().Create(ctx, resPods, "default", unsched); err != nil {
		t.Fatal(err)
	}
	admin := ts.Bundle().AdminToken
	for _, c := range []struct {
		name, url string
		headers   []string
		code      int
		says      string
	}{
		{"not an upgrade", path("two", "exec", "?container=a&command=ls"), nil, 400, "Upgrade request required"},
		{"no host", path("u", "exec", "?command=ls"), ws, 400, "pod u does not have a host assigned"},
		{"no container named", path("two", "exec", "?command=ls"), ws, 400, "a container name must be specified for pod two, choose one of: [a b]"},
		{"unknown container", path("two", "attach", "?container=z"), ws, 400, "container z is not valid for pod two"},
		{"no node", path("two", "exec", "?container=a&command=ls"), ws, 503, `node "n1" of pod default/two does not exist`},
		{"portforward, no node", path("two", "portforward", "?ports=80"), ws, 503, `node "n1" of pod default/two does not exist`},
	} {
		r := raw(t, hc, "GET", c.url, admin, nil, c.headers...)
		if r.code != c.code || !strings.Contains(r.status(t).Message, c.says) {
			t.Errorf("%s: %d %s, want %d %q", c.name, r.code, r.body, c.code, c.says)
		}
	}
	// A node whose node API is not the pinned certificate (the server's
	// own port stands for it): a generic 503 before any upgrade.
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1"}}
	if err := ts.Client().Create(ctx, resNodes, "", node); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "n1 annotated", func() (bool, error) {
		if err := ts.Client().Get(ctx, resNodes, "", "n1", node); err != nil {
			return false, err
		}
		node.Annotations = map[string]string{netagent.AnnotationNodeAPI: ts.URL(), netagent.AnnotationNodeAPICert: strings.Repeat("ab", 32)}
		err := ts.Client().Update(ctx, resNodes, "", node)
		return err == nil, err
	})
	if r := raw(t, hc, "GET", path("two", "exec", "?container=a&command=ls"), admin, nil, ws...); r.code != 503 || !strings.Contains(r.status(t).Message, `the node API of node "n1" could not be reached`) {
		t.Errorf("wrong certificate: %d %s", r.code, r.body)
	}
}
