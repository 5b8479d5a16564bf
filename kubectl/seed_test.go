package kubectl_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// workerDeployment is the seed's worker-deployment.yaml.
const workerDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: compute-node
  labels:
    app: compute-node
spec:
  replicas: 3
  selector:
    matchLabels:
      app: compute-node
  template:
    metadata:
      labels:
        app: compute-node
    spec:
      containers:
      - name: worker
        image: example/worker:1.0
        ports:
        - containerPort: 9090
`

// TestSeedCommands runs the seed's kubectl session with skiff, in order.
func TestSeedCommands(t *testing.T) {
	h := newHarness(t)
	h.kubelet()
	file := h.writeFile("worker-deployment.yaml", workerDeployment)

	if out := h.ok("apply", "-f", file); out != "deployment.apps/compute-node created\n" {
		t.Fatalf("apply: %q", out)
	}
	if out := h.ok("expose", "deployment", "compute-node", "--name=data-channel", "--port=9090"); out != "service/data-channel exposed\n" {
		t.Fatalf("expose: %q", out)
	}

	rows := checkColumns(t, h.ok("get", "svc", "data-channel"), "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE")
	if len(rows) != 1 || rows[0][0] != "data-channel" || rows[0][1] != "ClusterIP" || rows[0][3] != "<none>" || rows[0][4] != "9090/TCP" {
		t.Fatalf("get svc rows: %q", rows)
	}
	ip, err := netip.ParseAddr(rows[0][2])
	if err != nil || !netip.MustParsePrefix("10.96.0.0/16").Contains(ip) {
		t.Fatalf("CLUSTER-IP %q is not in the service CIDR", rows[0][2])
	}
	var svc api.Service
	h.getObj(resSvc, "data-channel", &svc)
	if svc.Spec.Selector["app"] != "compute-node" || svc.Spec.Ports[0].TargetPort.IntValue() != 9090 {
		t.Fatalf("service spec: %+v", svc.Spec)
	}

	// The EndpointSlice of the service (written here in case no
	// EndpointSlice controller runs in this server) once pods are ready.
	eventually(t, "3 ready pods", 20*time.Second, func() (bool, string) {
		var list api.PodList
		_ = h.c.List(context.Background(), resPods, h.ns, listAll, &list)
		n := 0
		for _, p := range list.Items {
			if api.IsPodReady(&p) {
				n++
			}
		}
		return n == 3, ""
	})
	slice := sliceFor(t, h, "data-channel-z1a", "data-channel", 9090, "10.244.1.8", "10.244.2.15", "10.244.3.7")
	_ = slice
	out := h.ok("get", "endpointslices", "-l", "kubernetes.io/service-name=data-channel")
	rows = checkColumns(t, out, "NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE")
	found := false
	for _, r := range rows {
		if r[0] == "data-channel-z1a" {
			found = true
			if r[1] != "IPv4" || r[2] != "9090" || r[3] != "10.244.1.8,10.244.2.15,10.244.3.7" {
				t.Fatalf("slice row %q", r)
			}
		}
	}
	if !found {
		t.Fatalf("slice missing:\n%s", out)
	}

	r := h.run("run", "health-check", "--restart=Never", "--image=curlimages/curl", "--rm", "-it", "--",
		"sh", "-c", "curl -s http://data-channel:9090/metrics")
	if r.code != 0 || !strings.Contains(r.stdout, `pod "health-check" deleted`) {
		t.Fatalf("run: %s", r)
	}
	// No log source is configured in this server: the note says so.
	if !strings.Contains(r.stderr, "note: cannot show the output of pod "+h.ns+"/health-check") {
		t.Fatalf("run: no note about the missing output: %s", r)
	}

	if out := h.ok("scale", "deploy/compute-node", "--replicas=5"); out != "deployment.apps/compute-node scaled\n" {
		t.Fatalf("scale: %q", out)
	}
	var d api.Deployment
	h.getObj(resDeploy, "compute-node", &d)
	if *d.Spec.Replicas != 5 {
		t.Fatalf("replicas = %d", *d.Spec.Replicas)
	}
	if out := h.ok("rollout", "status", "deploy/compute-node", "--timeout=30s"); !strings.HasSuffix(out, "deployment \"compute-node\" successfully rolled out\n") {
		t.Fatalf("rollout status: %q", out)
	}
}
