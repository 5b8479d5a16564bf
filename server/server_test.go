package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

func TestHealthAndVersionNeedNoToken(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	hc := httpClient(t, ts.Bundle().CACertPEM)
	for _, path := range []string{"/readyz", "/healthz", "/livez"} {
		t.Run(path, func(t *testing.T) {
			r := raw(t, hc, "GET", ts.URL()+path, "", nil)
			if r.code != http.StatusOK || strings.TrimSpace(string(r.body)) != "ok" {
				t.Fatalf("GET %s: %d %q, want 200 ok", path, r.code, r.body)
			}
		})
	}
	t.Run("/version", func(t *testing.T) {
		r := raw(t, hc, "GET", ts.URL()+"/version", "", nil)
		if r.code != http.StatusOK {
			t.Fatalf("GET /version: %d %s", r.code, r.body)
		}
		var v struct {
			GitVersion string `json:"gitVersion"`
			GoVersion  string `json:"goVersion"`
			Platform   string `json:"platform"`
		}
		if err := json.Unmarshal(r.body, &v); err != nil || v.GoVersion == "" || v.Platform == "" {
			t.Fatalf("/version body %s: %v", r.body, err)
		}
	})
}

func TestAuthentication(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	hc := httpClient(t, ts.Bundle().CACertPEM)
	cases := []struct {
		name  string
		path  string
		token string
		want  int
	}{
		{"no token, list", "/api/v1/namespaces", "", http.StatusUnauthorized},
		{"wrong token, list", "/api/v1/namespaces", "not-a-token", http.StatusUnauthorized},
		{"wrong token, discovery", "/api", "not-a-token", http.StatusUnauthorized},
		{"no token, metrics", "/metrics", "", http.StatusUnauthorized},
		{"admin prefix of the token", "/api/v1/namespaces", ts.Bundle().AdminToken[:len(ts.Bundle().AdminToken)-1], http.StatusUnauthorized},
		{"admin token", "/api/v1/namespaces", ts.Bundle().AdminToken, http.StatusOK},
		{"dashboard token", "/api/v1/namespaces", ts.Bundle().DashboardToken, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := raw(t, hc, "GET", ts.URL()+tc.path, tc.token, nil)
			if r.code != tc.want {
				t.Fatalf("GET %s: %d, want %d: %s", tc.path, r.code, tc.want, r.body)
			}
			if tc.want == http.StatusUnauthorized {
				st := r.status(t)
				if st.Reason != api.StatusReasonUnauthorized || st.Code != 401 || st.Status != "Failure" {
					t.Fatalf("401 Status = %+v", st)
				}
			}
		})
	}
}

func TestBuiltinObjects(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 30*time.Second)
	c := ts.Client()
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		var n api.Namespace
		if err := c.Get(ctx, resNamespaces, "", ns, &n); err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
		if n.Status.Phase != "Active" {
			t.Errorf("namespace %s phase %q, want Active", ns, n.Status.Phase)
		}
	}
	var svc api.Service
	if err := c.Get(ctx, resServices, "default", "kubernetes", &svc); err != nil {
		t.Fatalf("kubernetes Service: %v", err)
	}
	if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != "10.96.0.1" {
		t.Fatalf("kubernetes Service clusterIP %q clusterIPs %v, want 10.96.0.1", svc.Spec.ClusterIP, svc.Spec.ClusterIPs)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].Name != "https" {
		t.Fatalf("kubernetes Service ports %+v, want https/443", svc.Spec.Ports)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL(), "https://127.0.0.1"), ":")
	if got := svc.Spec.Ports[0].TargetPort.IntVal; strconv.Itoa(int(got)) != port {
		t.Errorf("kubernetes Service targetPort %d, want the API port %s", got, port)
	}
	var ipa api.IPAddress
	if err := c.Get(ctx, resIPAddrs, "", "10.96.0.1", &ipa); err != nil {
		t.Fatalf("IPAddress 10.96.0.1: %v", err)
	}
	if r := ipa.Spec.ParentRef; r == nil || r.Resource != "services" || r.Namespace != "default" || r.Name != "kubernetes" {
		t.Fatalf("IPAddress 10.96.0.1 parentRef %+v, want services default/kubernetes", r)
	}
	var cidr api.ServiceCIDR
	if err := c.Get(ctx, resCIDRs, "", "kubernetes", &cidr); err != nil {
		t.Fatalf("ServiceCIDR kubernetes: %v", err)
	}
	if len(cidr.Spec.CIDRs) != 1 || cidr.Spec.CIDRs[0] != "10.96.0.0/16" {
		t.Fatalf("ServiceCIDR cidrs %v, want [10.96.0.0/16]", cidr.Spec.CIDRs)
	}
	checkAllocations(t, c)
}

func TestRestartReusesIdentityAndState(t *testing.T) {
	// Restart keeps the port, so the kubeconfig's server URL holds.
	ts := servertest.Start(t, servertest.Options{})
	dataDir := ts.DataDir()
	ctx := ctxT(t, 60*time.Second)

	files := []string{"admin.kubeconfig"}
	err := filepath.WalkDir(dataDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dataDir, p)
		if !d.IsDir() && !strings.HasPrefix(rel, "db") && rel != "admin.kubeconfig" {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("data dir holds only %v; want CA, serving cert, tokens, kubeconfig", files)
	}
	before := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	b1 := *ts.Bundle()

	s := service("keep-me", api.ServiceTypeNodePort, 80)
	if err := ts.Client().Create(ctx, resServices, "default", s); err != nil {
		t.Fatal(err)
	}
	var l api.ServiceList
	if err := ts.Client().List(ctx, resServices, "", client.ListOptions{}, &l); err != nil {
		t.Fatal(err)
	}
	rvBefore, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	ts.Restart()
	b2 := ts.Bundle()
	if !bytes.Equal(b1.CACertPEM, b2.CACertPEM) || b1.AdminToken != b2.AdminToken ||
		b1.NodeToken != b2.NodeToken || b1.DashboardToken != b2.DashboardToken {
		t.Fatal("restart changed the CA or a token")
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, before[f]) {
			t.Errorf("restart rewrote %s", f)
		}
	}
	var got api.Service
	if err := ts.Client().Get(ctx, resServices, "default", "keep-me", &got); err != nil {
		t.Fatalf("Service lost on restart: %v", err)
	}
	if got.Spec.ClusterIP != s.Spec.ClusterIP || got.Spec.Ports[0].NodePort != s.Spec.Ports[0].NodePort || got.UID != s.UID {
		t.Fatalf("Service changed on restart: %+v, was %+v", got.Spec, s.Spec)
	}
	// The revision continues: the next write is above every earlier one.
	next := service("after-restart", api.ServiceTypeClusterIP, 80)
	if err := ts.Client().Create(ctx, resServices, "default", next); err != nil {
		t.Fatal(err)
	}
	rvAfter, _ := strconv.ParseInt(next.ResourceVersion, 10, 64)
	if rvAfter <= rvBefore {
		t.Fatalf("revision went back: %d after restart, %d before", rvAfter, rvBefore)
	}
	if next.Spec.ClusterIP == s.Spec.ClusterIP {
		t.Fatalf("restart handed out %s twice", s.Spec.ClusterIP)
	}
	checkAllocations(t, ts.Client())
}

func TestAdminKubeconfigWorks(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	cfg, err := client.FromKubeconfig(ts.Bundle().KubeconfigPath)
	if err != nil {
		t.Fatalf("parse admin.kubeconfig: %v", err)
	}
	if cfg.Server != ts.URL() || cfg.Token != ts.Bundle().AdminToken || !bytes.Equal(cfg.CAPEM, ts.Bundle().CACertPEM) {
		t.Fatalf("kubeconfig says server %q token-ok %v ca-ok %v; want %q", cfg.Server,
			cfg.Token == ts.Bundle().AdminToken, bytes.Equal(cfg.CAPEM, ts.Bundle().CACertPEM), ts.URL())
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 10*time.Second)
	if err := c.Create(ctx, resLeases, "default", lease("from-kubeconfig")); err != nil {
		t.Fatalf("create with the kubeconfig's client: %v", err)
	}
	fi, err := os.Stat(ts.Bundle().KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("admin.kubeconfig mode %v: readable by others", fi.Mode().Perm())
	}
}

func TestTokenPermissions(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 20*time.Second)
	dash := clientWith(t, ts, ts.Bundle().DashboardToken)
	node := clientWith(t, ts, joinNode(t, ts, "node-1", testPassword))
	join := clientWith(t, ts, ts.Bundle().NodeToken)

	cases := []struct {
		name      string
		do        func() error
		forbidden bool
	}{
		{"dashboard lists services", func() error {
			return dash.List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{})
		}, false},
		{"dashboard gets a deployment list", func() error {
			return dash.List(ctx, resDeploys, "default", client.ListOptions{}, &api.DeploymentList{})
		}, false},
		{"dashboard creates a service", func() error {
			return dash.Create(ctx, resServices, "default", service("dash", api.ServiceTypeClusterIP, 80))
		}, true},
		{"dashboard deletes the kubernetes service", func() error {
			return dash.Delete(ctx, resServices, "default", "kubernetes", client.DeleteOptions{})
		}, true},
		{"node creates a deployment", func() error {
			return node.Create(ctx, resDeploys, "default", deployment("from-node"))
		}, true},
		{"node creates a service", func() error {
			return node.Create(ctx, resServices, "default", service("from-node", api.ServiceTypeClusterIP, 80))
		}, true},
		{"node lists services", func() error {
			return node.List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{})
		}, false},
		{"node creates a lease in kube-system", func() error {
			return node.Create(ctx, resLeases, "kube-system", lease("node-1"))
		}, true},
		{"node creates its lease", func() error {
			return node.Create(ctx, resLeases, "kube-node-lease", lease("node-1"))
		}, false},
		{"the join token lists services", func() error {
			return join.List(ctx, resServices, "", client.ListOptions{}, &api.ServiceList{})
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.forbidden {
				if !client.IsForbidden(err) {
					t.Fatalf("want 403 Forbidden, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want success, got %v", err)
			}
		})
	}
	// Nothing the forbidden calls tried exists.
	var s api.Service
	if err := ts.Client().Get(ctx, resServices, "default", "dash", &s); !client.IsNotFound(err) {
		t.Fatalf("forbidden create left an object: %v", err)
	}
	if err := ts.Client().Get(ctx, resServices, "default", "kubernetes", &s); err != nil {
		t.Fatalf("forbidden delete removed the kubernetes Service: %v", err)
	}
}
