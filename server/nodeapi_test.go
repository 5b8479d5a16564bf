package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestTraceAndLogsRouting covers the server's half of logs and trace
// without agents: who may trace, and the answers when a pod's node cannot
// be reached (no node, no published node API, a certificate that is not
// the pinned one).
func TestTraceAndLogsRouting(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	trace := func(c *client.Client, pod string) error {
		return c.Do(ctx, "GET", "/skiff/v1/namespaces/default/pods/"+pod+"/trace?"+url.Values{"url": {"http://web"}}.Encode(), nil, nil)
	}
	nodeTok := joinNode(t, ts, "n1", testPassword)
	dash := clientWith(t, ts, ts.Bundle().DashboardToken)

	// Access: admins and the dashboard pass to the lookup (404: no pod);
	// nodes and the join token are forbidden; a bad token is refused.
	if err := trace(ts.Client(), "nope"); !client.IsNotFound(err) {
		t.Errorf("admin, missing pod: %v, want NotFound", err)
	}
	if err := trace(dash, "nope"); !client.IsNotFound(err) {
		t.Errorf("dashboard, missing pod: %v, want NotFound", err)
	}
	if err := trace(clientWith(t, ts, nodeTok), "nope"); !client.IsForbidden(err) {
		t.Errorf("node token: %v, want Forbidden", err)
	}
	if err := trace(clientWith(t, ts, ts.Bundle().NodeToken), "nope"); !client.IsForbidden(err) {
		t.Errorf("join token: %v, want Forbidden", err)
	}
	if err := trace(clientWith(t, ts, "garbage"), "nope"); !client.IsUnauthorized(err) {
		t.Errorf("bad token: %v, want Unauthorized", err)
	}
	if err := ts.Client().Do(ctx, "GET", "/skiff/v1/namespaces/default/pods/x/trace", nil, nil); !client.IsBadRequest(err) {
		t.Errorf("no url: %v, want BadRequest", err)
	}
	hc := httpClient(t, ts.Bundle().CACertPEM)
	if r := raw(t, hc, "POST", ts.URL()+"/skiff/v1/namespaces/default/pods/x/trace?url=a", ts.Bundle().AdminToken, nil); r.code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r.code)
	}

	// An unscheduled pod.
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"}, Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	if err := ts.Client().Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	logPath := "/api/v1/namespaces/default/pods/%s/log"
	if err := ts.Client().Do(ctx, "GET", strings.Replace(logPath, "%s", "p", 1), nil, nil); !client.IsBadRequest(err) || !strings.Contains(err.Error(), "does not have a host assigned") {
		t.Errorf("logs of an unscheduled pod: %v", err)
	}
	// Bound to a node that does not exist, then to one without a node API.
	if err := ts.Client().Create(ctx, resPods, "default", boundPod("q", "n1")); err != nil {
		t.Fatal(err)
	}
	isUnavailable := func(err error, says string) bool {
		var ae *client.APIError
		return asErr(err, &ae) && ae.Status.Code == http.StatusServiceUnavailable && strings.Contains(err.Error(), says)
	}
	if err := trace(ts.Client(), "q"); !isUnavailable(err, `node "n1" of pod default/q does not exist`) {
		t.Errorf("trace, no node: %v", err)
	}
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1"}}
	if err := ts.Client().Create(ctx, resNodes, "", node); err != nil {
		t.Fatal(err)
	}
	if err := ts.Client().Do(ctx, "GET", strings.Replace(logPath, "%s", "q", 1), nil, nil); !isUnavailable(err, "publishes no node API") {
		t.Errorf("logs, no node API: %v", err)
	}
	// A node API URL whose certificate is not the published one (the
	// server's own HTTPS port stands for a node that changed its key or
	// an impostor).
	eventually(t, 10*time.Second, "n1 annotated", func() (bool, error) { // the controllers write n1 too
		if err := ts.Client().Get(ctx, resNodes, "", "n1", node); err != nil {
			return false, err
		}
		node.Annotations = map[string]string{netagent.AnnotationNodeAPI: ts.URL(), netagent.AnnotationNodeAPICert: strings.Repeat("ab", 32)}
		err := ts.Client().Update(ctx, resNodes, "", node)
		return err == nil, err
	})
	if err := trace(dash, "q"); !isUnavailable(err, `the node API of node "n1" could not be reached`) || strings.Contains(err.Error(), "certificate") {
		t.Errorf("trace, wrong certificate: %v, want a generic 503", err)
	}
	// Another node may not publish n1's node API.
	other := clientWith(t, ts, joinNode(t, ts, "n2", testPassword))
	if err := ts.Client().Get(ctx, resNodes, "", "n1", node); err != nil {
		t.Fatal(err)
	}
	node.Annotations[netagent.AnnotationNodeAPI] = "https://203.0.113.9:10250"
	if err := other.Update(ctx, resNodes, "", node); !client.IsForbidden(err) {
		t.Errorf("n2 rewriting n1's node API: %v, want Forbidden", err)
	}
}
