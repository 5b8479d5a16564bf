package kubectl_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
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

	// The EndpointSlice controller lists the ready pods in the service's
	// slice (the test's kubelet makes them ready).
	checkSlices(t, h, "data-channel", 3)

	r := h.run("run", "health-check", "--restart=Never", "--image=curlimages/curl", "--rm", "-it", "--",
		"sh", "-c", "curl -s http://data-channel:9090/metrics")
	if r.code != 0 || !strings.Contains(r.stdout, `pod "health-check" deleted from `+h.ns+` namespace`) {
		t.Fatalf("run: %s", r)
	}
	// The test's node publishes no node API (no real agent): the note
	// says the output cannot be shown.
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
	// The scale-up reaches the service's endpoints.
	checkSlices(t, h, "data-channel", 5)
}

// checkSlices waits until `get endpointslices -l
// kubernetes.io/service-name=SVC` shows the IPs of want ready pods of the
// service, in kubectl's columns (at most 3 addresses, then "+ N more...").
func checkSlices(t *testing.T, h *harness, svc string, want int) {
	t.Helper()
	var out string
	eventually(t, fmt.Sprintf("%d endpoints of %s", want, svc), 20*time.Second, func() (bool, string) {
		var pods api.PodList
		_ = h.c.List(context.Background(), resPods, h.ns, client.ListOptions{LabelSelector: "app=compute-node"}, &pods)
		ips := map[string]bool{}
		for _, p := range pods.Items {
			if api.IsPodReady(&p) && p.DeletionTimestamp == nil {
				ips[p.Status.PodIP] = true
			}
		}
		if len(ips) != want {
			return false, fmt.Sprintf("%d ready pods", len(ips))
		}
		r := h.run("get", "endpointslices", "-l", "kubernetes.io/service-name="+svc)
		out = r.stdout
		if r.code != 0 || out == "" {
			return false, r.String()
		}
		rows := checkColumns(t, out, "NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE")
		if len(rows) != 1 || !strings.HasPrefix(rows[0][0], svc+"-") || rows[0][1] != "IPv4" || rows[0][2] != "9090" {
			return false, out
		}
		addrs, more, _ := strings.Cut(rows[0][3], " + ")
		listed := strings.Split(addrs, ",")
		if len(listed) != min(want, 3) {
			return false, out
		}
		for _, a := range listed {
			if !ips[a] {
				return false, out
			}
		}
		if want > 3 && more != fmt.Sprintf("%d more...", want-3) {
			return false, out
		}
		return true, ""
	})
}
