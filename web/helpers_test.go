package web_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/web"
)

var (
	resources   = api.Resources()
	resServices = api.Lookup(resources, "v1", "services")
	resPods     = api.Lookup(resources, "v1", "pods")
	resNodes    = api.Lookup(resources, "v1", "nodes")
	resDeploys  = api.Lookup(resources, "apps/v1", "deployments")
)

// testOptions are the servertest options of the tests: no agent (the
// tests play the node where one is needed) and no node lifecycle
// controller (a node without heartbeats would be tainted).
func testOptions() servertest.Options {
	return servertest.Options{DisabledControllers: []string{"nodelifecycle"}}
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// browserish is an HTTPS client with a cookie jar that trusts the server's
// CA and sends what a same-origin page sends.
type browserish struct {
	t    testing.TB
	base string
	hc   *http.Client
	csrf string
}

func newBrowserish(t testing.TB, ts *servertest.Server) *browserish {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ts.Bundle().CACertPEM) {
		t.Fatal("no CA")
	}
	jar, _ := cookiejar.New(nil)
	return &browserish{t: t, base: ts.URL(), hc: &http.Client{
		Jar:       jar,
		Timeout:   20 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}}
}

// do sends a request; hdr may override the same-origin headers.
func (b *browserish) do(method, path, ctype string, body []byte, hdr map[string]string) (int, []byte, http.Header) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if method != http.MethodGet {
		req.Header.Set("Origin", b.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if b.csrf != "" {
			req.Header.Set(web.CSRFHeader, b.csrf)
		}
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

type sessionInfo struct {
	User     string `json:"user"`
	ReadOnly bool   `json:"readOnly"`
	CSRF     string `json:"csrf"`
	Trace    bool   `json:"trace"`
}

func (b *browserish) login(token string) (int, sessionInfo, http.Header) {
	b.t.Helper()
	body, _ := json.Marshal(map[string]string{"token": token})
	code, data, hdr := b.do(http.MethodPost, "/ui/login", "application/json", body, nil)
	var si sessionInfo
	if code == http.StatusOK {
		if err := json.Unmarshal(data, &si); err != nil {
			b.t.Fatalf("login answer %s: %v", data, err)
		}
		b.csrf = si.CSRF
	}
	return code, si, hdr
}

func (b *browserish) mustLogin(token string) sessionInfo {
	b.t.Helper()
	code, si, _ := b.login(token)
	if code != http.StatusOK {
		b.t.Fatalf("login: HTTP %d", code)
	}
	return si
}

func svcJSON(name string, port int) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"selector":{"app":%q},"ports":[{"port":%d}]}}`, name, name, port))
}

// eventually polls f until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, f func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		ok, err := f()
		if ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last: %v)", what, last)
}

// fakeNode plays a node agent through the API, as the server tests do:
// it registers a Ready node and reports every pod bound to it as
// Running and Ready with an address from 10.244.0.0/24. It stops at
// cleanup.
func fakeNode(t testing.TB, c *client.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name}}
	if err := c.Create(ctxT(t, 10*time.Second), resNodes, "", n); err != nil {
		t.Fatalf("create node: %v", err)
	}
	n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady"}}
	n.Status.Addresses = []api.NodeAddress{{Type: "InternalIP", Address: "192.0.2.10"}, {Type: "Hostname", Address: name}}
	n.ResourceVersion = ""
	if err := c.UpdateStatus(ctxT(t, 10*time.Second), resNodes, "", n); err != nil {
		t.Fatalf("node status: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := 10
		ips := map[string]string{}
		for ctx.Err() == nil {
			var pods api.PodList
			if err := c.List(ctx, resPods, "", client.ListOptions{FieldSelector: "spec.nodeName=" + name}, &pods); err == nil {
				for i := range pods.Items {
					p := &pods.Items[i]
					if api.IsPodReady(p) || p.DeletionTimestamp != nil {
						continue
					}
					ip, ok := ips[string(p.UID)]
					if !ok {
						ip = fmt.Sprintf("10.244.0.%d", next)
						next++
						ips[string(p.UID)] = ip
					}
					now := api.Now()
					p.Status.Phase = api.PodRunning
					p.Status.PodIP, p.Status.PodIPs = ip, []api.PodIP{{IP: ip}}
					p.Status.HostIP = "192.0.2.10"
					p.Status.StartTime = &now
					p.Status.Conditions = []api.PodCondition{
						{Type: api.PodScheduled, Status: api.ConditionTrue},
						{Type: api.ContainersReady, Status: api.ConditionTrue},
						{Type: api.PodReady, Status: api.ConditionTrue},
					}
					p.Status.ContainerStatuses = nil
					for _, ctr := range p.Spec.Containers {
						p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, api.ContainerStatus{
							Name: ctr.Name, Ready: true, Image: ctr.Image,
							State: api.ContainerState{Running: &api.ContainerStateRunning{StartedAt: now}}})
					}
					p.ResourceVersion = ""
					_ = c.UpdateStatus(ctx, resPods, p.Namespace, p)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func deployment(name string, replicas int32) *api.Deployment {
	labels := map[string]string{"app": name}
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.DeploymentSpec{
			Replicas: &replicas,
			Selector: &api.LabelSelector{MatchLabels: labels},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: labels},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "web", Image: "busybox:1.36", Command: []string{"httpd", "-f"}}}},
			},
		},
	}
}

func service(name string, port int32) *api.Service {
	return &api.Service{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []api.ServicePort{{Port: port, TargetPort: api.FromInt32(8080)}},
		},
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
