package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resIngresses      = api.Lookup(resources, "networking.k8s.io/v1", "ingresses")
	resIngressClasses = api.Lookup(resources, "networking.k8s.io/v1", "ingressclasses")
	resNetpols        = api.Lookup(resources, "networking.k8s.io/v1", "networkpolicies")
)

// TestNetworkingResources: Ingress, IngressClass and NetworkPolicy over
// the real HTTPS API: stored as written, invalid ones refused with a
// Status naming the field, the Ingress's status only through /status,
// metadata.generation bumped by spec changes, and real kubectl's
// `apply` and `get` columns (when kubectl is installed).
func TestNetworkingResources(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"scheduler", "nodelifecycle"}})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)

	port := api.ServiceBackendPort{Name: "http"}
	ing := &api.Ingress{
		ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.IngressSpec{
			IngressClassName: ptr("nginx"),
			Rules: []api.IngressRule{{Host: "web.example.com", HTTP: &api.HTTPIngressRuleValue{
				Paths: []api.HTTPIngressPath{{Path: "/", PathType: ptr(string(api.PathTypePrefix)),
					Backend: api.IngressBackend{Service: &api.IngressServiceBackend{Name: "web", Port: port}}}},
			}}},
		},
		// Status on create is dropped, as Kubernetes drops it.
		Status: api.IngressStatus{LoadBalancer: api.IngressLoadBalancerStatus{Ingress: []api.IngressLoadBalancerIngress{{IP: "192.0.2.50"}}}},
	}
	if err := c.Create(ctx, resIngresses, "default", ing); err != nil {
		t.Fatal(err)
	}
	if len(ing.Status.LoadBalancer.Ingress) != 0 || ing.Generation != 1 {
		t.Fatalf("created Ingress: status %+v generation %d, want no status and generation 1", ing.Status, ing.Generation)
	}

	// A spec change bumps the generation; a status written in the same
	// update is ignored.
	ing.Spec.Rules[0].Host = "www.example.com"
	ing.Status.LoadBalancer.Ingress = []api.IngressLoadBalancerIngress{{IP: "192.0.2.50"}}
	if err := c.Update(ctx, resIngresses, "default", ing); err != nil {
		t.Fatal(err)
	}
	if ing.Generation != 2 || len(ing.Status.LoadBalancer.Ingress) != 0 {
		t.Fatalf("updated Ingress: generation %d status %+v, want 2 and no status", ing.Generation, ing.Status)
	}
	// The status subresource writes the address and leaves the spec.
	ing.Status.LoadBalancer.Ingress = []api.IngressLoadBalancerIngress{{IP: "192.0.2.50"}}
	ing.Spec.Rules[0].Host = "ignored.example.com"
	if err := c.Update(ctx, resIngresses, "default", ing, "status"); err != nil {
		t.Fatal(err)
	}
	var got api.Ingress
	if err := c.Get(ctx, resIngresses, "default", "web", &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Rules[0].Host != "www.example.com" || len(got.Status.LoadBalancer.Ingress) != 1 || got.Generation != 2 {
		t.Fatalf("after the status write: host %q status %+v generation %d", got.Spec.Rules[0].Host, got.Status, got.Generation)
	}

	// Invalid objects: a Status naming the field, nothing stored.
	for _, tc := range []struct {
		name  string
		info  *api.ResourceInfo
		obj   api.Object
		field string
	}{
		{"an IP as host", resIngresses, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "bad-host"}, Spec: api.IngressSpec{
			Rules: []api.IngressRule{{Host: "192.0.2.1"}},
		}}, "spec.rules[0].host"},
		{"an upper-case class", resIngresses, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "bad-class"}, Spec: api.IngressSpec{
			IngressClassName: ptr("NGINX"),
			DefaultBackend:   &api.IngressBackend{Service: &api.IngressServiceBackend{Name: "web", Port: port}},
		}}, "spec.ingressClassName"},
		{"a class without controller", resIngressClasses, &api.IngressClass{ObjectMeta: api.ObjectMeta{Name: "bad"}}, "spec.controller"},
		{"a policy port out of range", resNetpols, &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Name: "bad"}, Spec: api.NetworkPolicySpec{
			Ingress: []api.NetworkPolicyIngressRule{{Ports: []api.NetworkPolicyPort{{Port: ptr(api.FromInt32(70000))}}}},
		}}, "spec.ingress[0].ports[0].port"},
	} {
		ns := "default"
		if !tc.info.Namespaced {
			ns = ""
		}
		err := c.Create(ctx, tc.info, ns, tc.obj)
		if !client.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want Invalid naming %s", tc.name, err, tc.field)
		}
		name := tc.obj.GetObjectMeta().Name
		if err := c.Get(ctx, tc.info, ns, name, tc.info.New()); !client.IsNotFound(err) {
			t.Errorf("%s: stored after the refusal (%v)", tc.name, err)
		}
	}

	// A NetworkPolicy gets policyTypes defaulted as Kubernetes does:
	// Ingress, plus Egress when it has egress rules.
	np := &api.NetworkPolicy{ObjectMeta: api.ObjectMeta{Name: "db"}, Spec: api.NetworkPolicySpec{
		PodSelector: api.LabelSelector{MatchLabels: map[string]string{"role": "db"}},
		Egress:      []api.NetworkPolicyEgressRule{{}},
	}}
	if err := c.Create(ctx, resNetpols, "default", np); err != nil {
		t.Fatal(err)
	}
	if pt := np.Spec.PolicyTypes; len(pt) != 2 || pt[0] != api.PolicyTypeIngress || pt[1] != api.PolicyTypeEgress {
		t.Errorf("policyTypes %v, want [Ingress Egress]", pt)
	}

	if _, err := os.Stat(kubectlPath); err != nil {
		t.Skip("no " + kubectlPath + " for the kubectl part")
	}
	manifest := filepath.Join(t.TempDir(), "net.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: traefik}
spec: {controller: traefik.io/ingress-controller}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all}
spec: {podSelector: {}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := endpointsKubectl(t, ts, "apply", "-f", manifest); !strings.Contains(out, "ingressclass.networking.k8s.io/traefik created") ||
		!strings.Contains(out, "networkpolicy.networking.k8s.io/deny-all created") {
		t.Errorf("kubectl apply:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "ing"}, `(?m)^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\nweb\s+nginx\s+www\.example\.com\s+192\.0\.2\.50\s+80\s+\d+s$`},
		{[]string{"get", "ingressclass"}, `(?m)^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\ntraefik\s+traefik\.io/ingress-controller\s+<none>\s+\d+s$`},
		{[]string{"get", "netpol"}, `(?m)^NAME\s+POD-SELECTOR\s+AGE\ndb\s+role=db\s+\d+s\ndeny-all\s+<none>\s+\d+s$`},
	} {
		if out := endpointsKubectl(t, ts, tc.args...); !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("kubectl %s:\n%s", strings.Join(tc.args, " "), out)
		}
	}
}
