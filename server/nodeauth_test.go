package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/servertest"
)

var resNodes = api.Lookup(resources, "v1", "nodes")
var resEvents = api.Lookup(resources, "v1", "events")

const testPassword = "0123456789abcdef-node-password"

// joinNode exchanges the join token for node's token.
func joinNode(t testing.TB, ts *servertest.Server, node, password string) string {
	t.Helper()
	resp, err := netagent.Join(ctxT(t, 10*time.Second), ts.URL(), ts.Bundle().CACertPEM, ts.Bundle().NodeToken, node, password)
	if err != nil {
		t.Fatalf("join %s: %v", node, err)
	}
	if resp.User != "system:node:"+node || resp.NodeName != node {
		t.Fatalf("join answered user %q node %q", resp.User, resp.NodeName)
	}
	return resp.Token
}

func boundPod(name, node string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec:       api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c", Image: "busybox"}}},
	}
}

func TestNodeJoin(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 20*time.Second)
	hc := httpClient(t, ts.Bundle().CACertPEM)

	first := joinNode(t, ts, "node-a", testPassword)
	n1 := clientWith(t, ts, first)
	if err := n1.List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{}); err != nil {
		t.Fatalf("the node token cannot list services: %v", err)
	}
	// The record is a 0600 file holding hashes only.
	rec := filepath.Join(ts.DataDir(), "tokens", "nodes", "node-a")
	fi, err := os.Stat(rec)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s mode %v, want 0600", rec, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(rec)
	secret := first[strings.LastIndexByte(first, ':')+1:]
	if strings.Contains(string(b), secret) || strings.Contains(string(b), testPassword) {
		t.Fatal("the node token file holds a secret in clear")
	}

	// Joining again with the same password re-issues: the old token stops working.
	second := joinNode(t, ts, "node-a", testPassword)
	if second == first {
		t.Fatal("a second join returned the same token")
	}
	if err := n1.List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{}); !client.IsUnauthorized(err) {
		t.Fatalf("the replaced token: want 401, got %v", err)
	}

	cases := []struct {
		name  string
		path  string
		token string
		body  string
		code  int
	}{
		{"another password for a joined name", netagent.JoinPath("node-a"), ts.Bundle().NodeToken, `{"password":"another-password-0123456789"}`, http.StatusForbidden},
		{"admin token is not the join token", netagent.JoinPath("node-b"), ts.Bundle().AdminToken, `{"password":"` + testPassword + `"}`, http.StatusUnauthorized},
		{"no token", netagent.JoinPath("node-b"), "", `{"password":"` + testPassword + `"}`, http.StatusUnauthorized},
		{"node token cannot join", netagent.JoinPath("node-b"), second, `{"password":"` + testPassword + `"}`, http.StatusUnauthorized},
		{"short password", netagent.JoinPath("node-b"), ts.Bundle().NodeToken, `{"password":"short"}`, http.StatusUnprocessableEntity},
		{"invalid node name", netagent.JoinPath("Node_B"), ts.Bundle().NodeToken, `{"password":"` + testPassword + `"}`, http.StatusUnprocessableEntity},
		{"unknown field", netagent.JoinPath("node-b"), ts.Bundle().NodeToken, `{"password":"` + testPassword + `","x":1}`, http.StatusBadRequest},
		{"no such path", "/skiff/v1/nodes/node-b", ts.Bundle().NodeToken, `{}`, http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := raw(t, hc, http.MethodPost, ts.URL()+tc.path, tc.token, []byte(tc.body))
			if r.code != tc.code {
				t.Fatalf("got %d %s, want %d", r.code, r.body, tc.code)
			}
			if st := r.status(t); st.Kind != "Status" || st.Code != int32(tc.code) {
				t.Fatalf("error body is no Status: %s", r.body)
			}
		})
	}
	// The refused joins changed nothing: the second token still works.
	if err := clientWith(t, ts, second).List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{}); err != nil {
		t.Fatalf("after refused joins the node token fails: %v", err)
	}
}

func TestNodeTokensSurviveRestart(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	tok := joinNode(t, ts, "node-r", testPassword)
	ts.Restart()
	if err := clientWith(t, ts, tok).List(ctxT(t, 10*time.Second), resPods, "", client.ListOptions{}, &api.PodList{}); err != nil {
		t.Fatalf("node token after a restart: %v", err)
	}
	// And the password binding survives too.
	if _, err := netagent.Join(ctxT(t, 10*time.Second), ts.URL(), ts.Bundle().CACertPEM, ts.Bundle().NodeToken, "node-r", "a-different-password-xyz"); !client.IsForbidden(err) {
		t.Fatalf("join with another password after restart: want 403, got %v", err)
	}
}

func TestNodeAuthorization(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	me := clientWith(t, ts, joinNode(t, ts, "node-1", testPassword))
	other := clientWith(t, ts, joinNode(t, ts, "node-2", testPassword+"-2"))
	join := clientWith(t, ts, ts.Bundle().NodeToken)

	if err := other.Create(ctx, resNodes, "", &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-2"}}); err != nil {
		t.Fatalf("node-2 registers itself: %v", err)
	}
	for _, p := range []*api.Pod{boundPod("mine", "node-1"), boundPod("theirs", "node-2"), boundPod("theirs-2", "node-2")} {
		if err := ts.Client().Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	getPod := func(name string) *api.Pod {
		var p api.Pod
		if err := ts.Client().Get(ctx, resPods, "default", name, &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	nodeLease := func(ns, name string) *api.Lease {
		l := lease(name)
		l.Namespace = ns
		return l
	}
	cases := []struct {
		name string
		do   func() error
		want int // 0 = success
	}{
		{"create own Node", func() error {
			return me.Create(ctx, resNodes, "", &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}})
		}, 0},
		{"create another Node", func() error {
			return me.Create(ctx, resNodes, "", &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-3"}})
		}, http.StatusForbidden},
		{"update own Node status", func() error {
			// The node lifecycle and IPAM controllers write this Node too:
			// retry on a conflict, as a node does.
			for try := 0; ; try++ {
				var n api.Node
				if err := me.Get(ctx, resNodes, "", "node-1", &n); err != nil {
					return err
				}
				n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "Test"}}
				err := me.Update(ctx, resNodes, "", &n, "status")
				if !client.IsConflict(err) || try == 10 {
					return err
				}
			}
		}, 0},
		{"update another Node's status", func() error {
			var n api.Node
			if err := me.Get(ctx, resNodes, "", "node-2", &n); err != nil {
				return err
			}
			n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionFalse, Reason: "Evil"}}
			return me.Update(ctx, resNodes, "", &n, "status")
		}, http.StatusForbidden},
		{"patch another Node", func() error {
			return me.Patch(ctx, resNodes, "", "node-2", client.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), &api.Node{})
		}, http.StatusForbidden},
		{"delete another Node", func() error {
			return me.Delete(ctx, resNodes, "", "node-2", client.DeleteOptions{})
		}, http.StatusForbidden},
		{"create a Node with a podCIDR", func() error {
			return clientWith(t, ts, joinNode(t, ts, "node-9", testPassword+"-9")).Create(ctx, resNodes, "",
				&api.Node{ObjectMeta: api.ObjectMeta{Name: "node-9"}, Spec: api.NodeSpec{PodCIDR: "10.244.200.0/24"}})
		}, http.StatusForbidden},
		{"create own Lease", func() error {
			return me.Create(ctx, resLeases, "kube-node-lease", nodeLease("kube-node-lease", "node-1"))
		}, 0},
		{"renew own Lease", func() error {
			var l api.Lease
			if err := me.Get(ctx, resLeases, "kube-node-lease", "node-1", &l); err != nil {
				return err
			}
			now := api.MicroTime{Time: time.Now()}
			l.Spec.RenewTime = &now
			return me.Update(ctx, resLeases, "kube-node-lease", &l)
		}, 0},
		{"create a Lease named for another node", func() error {
			return me.Create(ctx, resLeases, "kube-node-lease", nodeLease("kube-node-lease", "node-2"))
		}, http.StatusForbidden},
		{"create a Lease elsewhere", func() error { return me.Create(ctx, resLeases, "kube-system", nodeLease("kube-system", "node-1")) }, http.StatusForbidden},
		{"create a Service", func() error {
			return me.Create(ctx, resServices, "default", service("from-node", api.ServiceTypeClusterIP, 80))
		}, http.StatusForbidden},
		{"create a Deployment", func() error { return me.Create(ctx, resDeploys, "default", deployment("from-node")) }, http.StatusForbidden},
		{"create a Pod", func() error { return me.Create(ctx, resPods, "default", boundPod("made-by-node", "node-1")) }, http.StatusForbidden},
		{"list services, slices, pods, namespaces, servicecidrs", func() error {
			for _, r := range []struct {
				info *api.ResourceInfo
				into any
			}{{resServices, &api.ServiceList{}}, {resSlices, &api.EndpointSliceList{}}, {resPods, &api.PodList{}},
				{resNamespaces, &api.NamespaceList{}}, {resCIDRs, &api.ServiceCIDRList{}}, {resNodes, &api.NodeList{}}} {
				if err := me.List(ctx, r.info, "", client.ListOptions{}, r.into); err != nil {
					return err
				}
			}
			return nil
		}, 0},
		{"list ipaddresses", func() error { return me.List(ctx, resIPAddrs, "", client.ListOptions{}, &api.IPAddressList{}) }, http.StatusForbidden},
		{"create an event", func() error {
			ev := &api.Event{ObjectMeta: api.ObjectMeta{Name: "node-1.ev"},
				InvolvedObject: api.ObjectReference{Kind: "Node", Name: "node-1"}, Reason: "Starting", Type: api.EventTypeNormal}
			return me.Create(ctx, resEvents, "default", ev)
		}, 0},
		{"status of its own pod", func() error {
			p := getPod("mine")
			p.Status.Phase = api.PodRunning
			return me.Update(ctx, resPods, "default", p, "status")
		}, 0},
		{"status of another node's pod", func() error {
			p := getPod("theirs")
			p.Status.Phase = api.PodFailed
			return me.Update(ctx, resPods, "default", p, "status")
		}, http.StatusForbidden},
		{"patch status of another node's pod", func() error {
			return me.Patch(ctx, resPods, "default", "theirs", client.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`), &api.Pod{}, "status")
		}, http.StatusForbidden},
		{"update its own pod's spec", func() error {
			p := getPod("mine")
			p.Labels = map[string]string{"x": "y"}
			return me.Update(ctx, resPods, "default", p)
		}, http.StatusForbidden},
		{"delete another node's pod", func() error {
			return me.Delete(ctx, resPods, "default", "theirs-2", client.DeleteOptions{})
		}, http.StatusForbidden},
		{"delete its own pod with grace 0 and a uid precondition", func() error {
			zero := int64(0)
			return me.Delete(ctx, resPods, "default", "mine", client.DeleteOptions{GracePeriodSeconds: &zero,
				Preconditions: &client.Preconditions{UID: string(getPod("mine").UID)}})
		}, 0},
		{"delete a pod that is gone", func() error {
			return me.Delete(ctx, resPods, "default", "never-was", client.DeleteOptions{})
		}, http.StatusNotFound},
		{"join token lists services", func() error { return join.List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{}) }, http.StatusForbidden},
		{"join token creates a node", func() error {
			return join.Create(ctx, resNodes, "", &api.Node{ObjectMeta: api.ObjectMeta{Name: "by-join-token"}})
		}, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			var ae *client.APIError
			if !asErr(err, &ae) || int(ae.Status.Code) != tc.want {
				t.Fatalf("want %d, got %v", tc.want, err)
			}
		})
	}
	// What the refused writes tried is not there.
	var p api.Pod
	if err := ts.Client().Get(ctx, resPods, "default", "theirs", &p); err != nil || p.Status.Phase == api.PodFailed {
		t.Fatalf("another node's pod was changed: %v %q", err, p.Status.Phase)
	}
	var n api.Node
	if err := ts.Client().Get(ctx, resNodes, "", "node-3", &n); !client.IsNotFound(err) {
		t.Fatalf("node-3 exists after a forbidden create: %v", err)
	}
	// nodeipam gave the node it registered a podCIDR.
	eventually(t, 10*time.Second, "node-1 gets a podCIDR", func() (bool, error) {
		var n api.Node
		err := me.Get(ctx, resNodes, "", "node-1", &n)
		return err == nil && n.Spec.PodCIDR != "", err
	})
	// Once assigned, the node cannot change it.
	var mine api.Node
	if err := me.Get(ctx, resNodes, "", "node-1", &mine); err != nil {
		t.Fatal(err)
	}
	mine.Spec.PodCIDR, mine.Spec.PodCIDRs = "10.244.250.0/24", []string{"10.244.250.0/24"}
	if err := me.Update(context.Background(), resNodes, "", &mine); !client.IsForbidden(err) && !client.IsInvalid(err) {
		t.Fatalf("changing its podCIDR: want 403 or 422, got %v", err)
	}
}
