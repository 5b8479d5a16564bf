package kubectlcompat

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAutoscaleAndGetHPA: `kubectl autoscale` creates an autoscaling/v2
// HorizontalPodAutoscaler, the built-in controller brings the Deployment
// up to --min without metrics, and `kubectl get hpa` prints kubectl's
// columns with the target as "cpu: <unknown>/80%" (no metrics: no agent
// runs the shared server's pods, so metrics.k8s.io lists none of them).
// Debian's kubectl 1.20 writes autoscaling/v1, which Skiff does not serve
// (only v2): its autoscale fails with the server's 404, and the pass
// applies the same autoscaler as a v2 manifest instead.
func TestAutoscaleAndGetHPA(t *testing.T) {
	ns := namespace(t, "autoscale")
	kubectl(t, "-n", ns, "create", "deployment", "web", "--image=netexec", "--replicas=1")
	if spdyOnly() {
		_, errOut, err := kubectlErr(t, "-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")
		if err == nil || !strings.Contains(errOut, "the server could not find the requested resource") {
			t.Fatalf("kubectl 1.20 autoscale (autoscaling/v1): err %v, stderr %q; want the 404 of a version not served", err, errOut)
		}
		kubectl(t, "-n", ns, "apply", "-f", manifest(t, "hpa.yaml", `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
`))
	} else {
		out := kubectl(t, "-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")
		if !strings.Contains(out, "horizontalpodautoscaler.autoscaling/web autoscaled") {
			t.Fatalf("autoscale: %q", out)
		}
	}
	eventually(t, 30*time.Second, func() error {
		got := strings.TrimSpace(kubectl(t, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"))
		if got != "2" {
			return fmt.Errorf("replicas %q, want 2 (the HPA's minimum)", got)
		}
		return nil
	})
	ls := lines(kubectl(t, "-n", ns, "get", "hpa"))
	if len(ls) != 2 {
		t.Fatalf("get hpa: %q", ls)
	}
	if h := fields(ls[0]); strings.Join(h, " ") != "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE" {
		t.Fatalf("header %q", ls[0])
	}
	if !strings.Contains(ls[1], "Deployment/web") || !strings.Contains(ls[1], "cpu: <unknown>/80%") {
		t.Fatalf("row %q", ls[1])
	}
	if spdyOnly() {
		// kubectl 1.20 describes autoscalers through autoscaling/v2beta2.
		kubectl(t, "-n", ns, "delete", "hpa", "web")
		return
	}
	desc := kubectl(t, "-n", ns, "describe", "hpa", "web")
	for _, want := range []string{"Reference:", "Deployment/web", "Min replicas:", "2", "Max replicas:", "5", "AbleToScale"} {
		if !strings.Contains(desc, want) {
			t.Fatalf("describe hpa lacks %q:\n%s", want, desc)
		}
	}
	kubectl(t, "-n", ns, "delete", "hpa", "web")
}
