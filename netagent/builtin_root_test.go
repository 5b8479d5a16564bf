package netagent_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestServerBuiltinAgent runs `skiff server` with its built-in agent (the
// process runtime), its network in a namespace the test made: the server's
// own node registers, gets a podCIDR and runs a pod.
func TestServerBuiltinAgent(t *testing.T) {
	requireNode(t)
	ns := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Logger: testLog(t), Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ns.Path
		cfg.AgentNodeName = "server-node"
		cfg.NodeIP = []string{"192.0.2.20"}
		cfg.Runtime = "process"
	}})
	s, stop := ts.Server(), ts.Stop
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.Agent() == nil {
		t.Fatal("no built-in agent")
	}
	select {
	case <-s.Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	// The built-in agent's proxy metrics are on the API server's /metrics.
	eventually(t, 20*time.Second, "the server's /metrics shows the proxy's", func() (bool, error) {
		body, err := serverMetrics(s)
		if err != nil {
			return false, err
		}
		v, ok := sample(body, "kubeproxy_sync_proxy_rules_duration_seconds_count")
		_, api := sample(body, "apiserver_watchers")
		return ok && v >= 1 && api,
			fmt.Errorf("kubeproxy_sync_proxy_rules_duration_seconds_count %v %v; apiserver_watchers %v", v, ok, api)
	})
	var n api.Node
	if err := admin.Get(ctx, resNodes, "", "server-node", &n); err != nil || n.Spec.PodCIDR == "" ||
		n.Status.Addresses[0].Address != "192.0.2.20" {
		t.Fatalf("server node: %v %+v", err, n)
	}
	if err := admin.Create(ctx, resPods, "default", netexecPod("on-server", "netexec", "--http-port=8080", "--udp-port=8081")); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, admin, "on-server", 30*time.Second, "Ready", podReady)
	if p.Spec.NodeName != "server-node" {
		t.Fatalf("scheduled to %q", p.Spec.NodeName)
	}
	one := int64(1)
	if err := admin.Delete(ctx, resPods, "default", "on-server", client.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "pod deleted", func() (bool, error) {
		var q api.Pod
		err := admin.Get(ctx, resPods, "default", "on-server", &q)
		return client.IsNotFound(err), err
	})
	stop()
}

// serverMetrics reads the server's /metrics as the admin.
func serverMetrics(s *server.Server) (string, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Bundle().CACertPEM)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequest("GET", s.URL()+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+s.Bundle().AdminToken)
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("/metrics: %d %s", resp.StatusCode, b)
	}
	return string(b), err
}
