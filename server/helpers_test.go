package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// Resource table entries the tests address.
var (
	resources     = api.Resources()
	resNamespaces = api.Lookup(resources, "v1", "namespaces")
	resServices   = api.Lookup(resources, "v1", "services")
	resPods       = api.Lookup(resources, "v1", "pods")
	resDeploys    = api.Lookup(resources, "apps/v1", "deployments")
	resSlices     = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
	resCIDRs      = api.Lookup(resources, "networking.k8s.io/v1", "servicecidrs")
	resIPAddrs    = api.Lookup(resources, "networking.k8s.io/v1", "ipaddresses")
	resLeases     = api.Lookup(resources, "coordination.k8s.io/v1", "leases")
)

// clientWith is a client of ts with another token.
func clientWith(t testing.TB, ts *servertest.Server, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Server: ts.URL(), CAPEM: ts.Bundle().CACertPEM, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// httpClient trusts the server's CA; it is for raw requests.
func httpClient(t testing.TB, caPEM []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA PEM holds no certificate")
	}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 64,
		},
	}
}

// rawResponse is what a raw request got back.
type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

// status decodes the body as a Status; it fails the test when it is not one.
func (r rawResponse) status(t testing.TB) api.Status {
	t.Helper()
	var st api.Status
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("response %d is not JSON: %v: %s", r.code, err, r.body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("response %d is not a v1 Status: %s", r.code, r.body)
	}
	return st
}

// raw sends one request with an optional token; headers are "Key: value".
func raw(t testing.TB, hc *http.Client, method, url, token string, body []byte, headers ...string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: data}
}

// ctxT is a context bounded by the test's deadline or by d.
func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// service builds a Service with one port per entry of ports.
func service(name, typ string, ports ...int32) *api.Service {
	s := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec:       api.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}},
	}
	for i, p := range ports {
		s.Spec.Ports = append(s.Spec.Ports, api.ServicePort{
			Name: fmt.Sprintf("p%d", i), Protocol: api.ProtocolTCP, Port: p, TargetPort: api.FromInt32(p),
		})
	}
	return s
}

// deployment builds a valid Deployment with replicas 1.
func deployment(name string) *api.Deployment {
	one := int32(1)
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.DeploymentSpec{
			Replicas: &one,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// lease builds a Lease.
func lease(name string) *api.Lease {
	holder := "holder"
	d := int32(10)
	return &api.Lease{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d}}
}

// ownerRef points at a Deployment.
func ownerRef(d *api.Deployment) api.OwnerReference {
	return api.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID}
}

// eventually polls cond until it is true or d has passed.
func eventually(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not true after %v (last error: %v)", what, d, lastErr)
}

// mustCreateNS creates a namespace.
func mustCreateNS(t testing.TB, c *client.Client, name string) {
	t.Helper()
	if err := c.Create(ctxT(t, 10*time.Second), resNamespaces, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// listServices lists every Service in every namespace.
func listServices(t testing.TB, c *client.Client) []api.Service {
	t.Helper()
	var l api.ServiceList
	if err := c.List(ctxT(t, 30*time.Second), resServices, "", client.ListOptions{}, &l); err != nil {
		t.Fatalf("list services: %v", err)
	}
	return l.Items
}

// listIPAddresses lists every IPAddress.
func listIPAddresses(t testing.TB, c *client.Client) []api.IPAddress {
	t.Helper()
	var l api.IPAddressList
	if err := c.List(ctxT(t, 30*time.Second), resIPAddrs, "", client.ListOptions{}, &l); err != nil {
		t.Fatalf("list ipaddresses: %v", err)
	}
	return l.Items
}

// checkAllocations proves the store's allocation invariants: no two
// Services share a ClusterIP or a NodePort, every ClusterIP has its
// IPAddress pointing back at its Service, and every managed IPAddress
// has a live Service holding that IP.
func checkAllocations(t testing.TB, c *client.Client) (svcs []api.Service) {
	t.Helper()
	svcs = listServices(t, c)
	ipas := listIPAddresses(t, c)
	ipOwner := map[string]string{}
	portOwner := map[int32]string{}
	for _, s := range svcs {
		id := s.Namespace + "/" + s.Name
		if ip := s.Spec.ClusterIP; ip != "" && ip != api.ClusterIPNone {
			if o, dup := ipOwner[ip]; dup {
				t.Errorf("ClusterIP %s held by %s and %s", ip, o, id)
			}
			ipOwner[ip] = id
		}
		for _, p := range s.Spec.Ports {
			if p.NodePort == 0 {
				continue
			}
			if o, dup := portOwner[p.NodePort]; dup {
				t.Errorf("NodePort %d held by %s and %s", p.NodePort, o, id)
			}
			portOwner[p.NodePort] = id
		}
		if hc := s.Spec.HealthCheckNodePort; hc != 0 {
			if o, dup := portOwner[hc]; dup {
				t.Errorf("healthCheckNodePort %d held by %s and %s", hc, o, id)
			}
			portOwner[hc] = id
		}
	}
	ipaOwner := map[string]string{}
	for _, a := range ipas {
		ref := a.Spec.ParentRef
		if ref == nil {
			t.Errorf("IPAddress %s has no parentRef", a.Name)
			continue
		}
		id := ref.Namespace + "/" + ref.Name
		ipaOwner[a.Name] = id
		if ipOwner[a.Name] != id {
			t.Errorf("IPAddress %s points at %s but that IP is held by %q (leak)", a.Name, id, ipOwner[a.Name])
		}
	}
	for ip, id := range ipOwner {
		if ipaOwner[ip] != id {
			t.Errorf("Service %s holds %s but its IPAddress points at %q", id, ip, ipaOwner[ip])
		}
	}
	return svcs
}

// afterTests run once every test and benchmark is done (servers that
// outlive one benchmark function's b.N rounds).
var afterTests []func()

func TestMain(m *testing.M) {
	// The crash test re-executes this binary as the server process.
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(runCrashChild())
	}
	code := m.Run()
	for _, f := range afterTests {
		f()
	}
	os.Exit(code)
}

// clientListAll lists without selectors.
var clientListAll = client.ListOptions{}

// asErr is errors.As.
func asErr(err error, target any) bool { return errors.As(err, target) }
