package kubectlcompat

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyExamples: kubectl applies the repository's examples/ (every
// Service type of docs/architecture.md) as it applies them to Kubernetes, re-applies
// them unchanged, and lists them with the server's columns.
func TestApplyExamples(t *testing.T) {
	ns := namespace(t, "examples")
	dir, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	out := kubectl(t, "apply", "-n", ns, "-f", dir)
	for _, want := range []string{"deployment.apps/backend created", "service/backend-svc created", "pod/client created",
		"service/backend-nodeport created", "service/backend-lb created", "service/cache-redis-external created",
		"service/web created", "statefulset.apps/web created"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply -f examples/: no %q in\n%s", want, out)
		}
	}
	again := kubectl(t, "apply", "-n", ns, "-f", dir)
	if strings.Contains(again, "created") || strings.Contains(again, "configured") {
		t.Errorf("re-apply of examples/ changed something:\n%s", again)
	}
	svcs := kubectl(t, "get", "svc", "-n", ns)
	for _, want := range []string{"backend-svc   ClusterIP", "backend-nodeport   NodePort", "80:30080/TCP", "backend-lb   LoadBalancer",
		"cache-redis-external   ExternalName", "redis.prod.azurecache.net", "web   ClusterIP   None"} {
		if !strings.Contains(strings.Join(strings.Fields(svcs), "   "), strings.Join(strings.Fields(want), "   ")) {
			t.Errorf("kubectl get svc: no %q in\n%s", want, svcs)
		}
	}
	kubectl(t, "delete", "-n", ns, "-f", dir)
}
