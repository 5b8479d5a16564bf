package kubectlcompat

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const externalDB = `apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  ports:
  - name: pg
    port: 5432
---
apiVersion: v1
kind: Endpoints
metadata:
  name: db
  labels:
    team: data
subsets:
- addresses:
  - ip: 192.0.2.10
  - ip: 192.0.2.11
  notReadyAddresses:
  - ip: 192.0.2.12
  ports:
  - name: pg
    port: 5432
`

// TestEndpointsApplyAndMirror: kubectl apply of a selector-less Service
// and its hand-written Endpoints (a common manifest for an external
// database), kubectl get ep as upstream prints it, client-go's typed
// (protobuf) read, and the mirrored EndpointSlice the proxy uses.
func TestEndpointsApplyAndMirror(t *testing.T) {
	ns := namespace(t, "endpoints-mirror")
	out := kubectl(t, "apply", "-n", ns, "-f", manifest(t, "db.yaml", externalDB))
	if !strings.Contains(out, "service/db created") || !strings.Contains(out, "endpoints/db created") {
		t.Fatalf("apply: %q", out)
	}
	got := kubectl(t, "get", "ep", "-n", ns)
	if !regexp.MustCompile(`^NAME\s+ENDPOINTS\s+AGE\ndb\s+192\.0\.2\.10:5432,192\.0\.2\.11:5432\s+\S+\n$`).MatchString(got) {
		t.Errorf("get ep:\n%s", got)
	}
	ep, err := env.cs.CoreV1().Endpoints(ns).Get(ctx(t), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 2 || len(ep.Subsets[0].NotReadyAddresses) != 1 ||
		ep.Subsets[0].Ports[0].Protocol != "TCP" {
		t.Fatalf("client-go Endpoints: %+v", ep.Subsets)
	}
	eventually(t, 10*time.Second, func() error {
		l, err := env.cs.DiscoveryV1().EndpointSlices(ns).List(ctx(t), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=db"})
		if err != nil {
			return err
		}
		if len(l.Items) != 1 || len(l.Items[0].Endpoints) != 3 {
			return fmt.Errorf("%d slices", len(l.Items))
		}
		s := l.Items[0]
		if s.Labels["endpointslice.kubernetes.io/managed-by"] != "endpointslicemirroring-controller.k8s.io" || s.Labels["team"] != "data" {
			return fmt.Errorf("labels %v", s.Labels)
		}
		return nil
	})
	// Applied again: subsets is an atomic list and the live one has the
	// defaulted protocol, so kubectl sends a patch ("configured", as
	// against Kubernetes); the object does not change.
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "db.yaml", externalDB))
	again, err := env.cs.CoreV1().Endpoints(ns).Get(ctx(t), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != ep.ResourceVersion {
		t.Errorf("re-apply rewrote the Endpoints: resourceVersion %s -> %s", ep.ResourceVersion, again.ResourceVersion)
	}
	// Invalid as upstream: a loopback address.
	bad := strings.Replace(externalDB, "192.0.2.10", "127.0.0.1", 1)
	_, errOut, err := kubectlErr(t, "apply", "-n", ns, "-f", manifest(t, "bad.yaml", bad))
	if err == nil || !strings.Contains(errOut, "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range") {
		t.Errorf("loopback: %v\n%s", err, errOut)
	}
}
