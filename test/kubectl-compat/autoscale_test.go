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
// Debian's kubectl 1.20 writes autoscaling/v1, which Skiff serves by
// conversion from the stored autoscaling/v2 object; both kubectls read it
// back through v1 as targetCPUUtilizationPercentage.
func TestAutoscaleAndGetHPA(t *testing.T) {
	ns := namespace(t, "autoscale")
	kubectl(t, "-n", ns, "create", "deployment", "web", "--image=netexec", "--replicas=1")
	out := kubectl(t, "-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")
	if !strings.Contains(out, "horizontalpodautoscaler.autoscaling/web autoscaled") {
		t.Fatalf("autoscale: %q", out)
	}
	if got := kubectl(t, "-n", ns, "get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}"); got != "autoscaling/v1 80" {
		t.Fatalf("the autoscaler through autoscaling/v1: %q", got)
	}
	if got := kubectl(t, "-n", ns, "get", "horizontalpodautoscalers.v2.autoscaling", "web", "-o", "jsonpath={.spec.metrics[0].resource.target.averageUtilization}"); got != "80" {
		t.Fatalf("the autoscaler through autoscaling/v2: %q", got)
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
