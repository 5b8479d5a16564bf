package kubectlcompat

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/metricsapi/nodeapitest"
)

// topNodeAPI serves /metrics/resource as a node agent does: pod web of
// ns runs containers app (250m, 64Mi) and side (50m, 16Mi); the node
// burns 1.5 cores and holds 2Gi.
func topNodeAPI(t *testing.T, ns string) *httptest.Server {
	t0 := time.Now()
	return nodeapitest.Start(t, func(_ *http.Request, now time.Time) (string, error) {
		el := now.Sub(t0).Seconds()
		var b strings.Builder
		nodeapitest.Container(&b, ns, "web", "app", 3+el*0.25, 64<<20, t0, now)
		nodeapitest.Container(&b, ns, "web", "side", 3+el*0.05, 16<<20, t0, now)
		nodeapitest.Node(&b, 100+el*1.5, 2<<30, now)
		return b.String(), nil
	})
}

// TestTop: `kubectl top pod` and `kubectl top node` read metrics.k8s.io,
// which the server fills by scraping a node's /metrics/resource (here a
// test node API that the node published, as an agent does).
func TestTop(t *testing.T) {
	ns := namespace(t, "top")
	node := "top-node"
	srv := topNodeAPI(t, ns)
	_, err := netagent.Join(ctx(t), env.srv.URL(), env.srv.Bundle().CACertPEM, env.srv.Bundle().NodeToken, node, "0123456789abcdef-top-password")
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.cs.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Annotations: nodeapitest.Annotations(srv)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.cs.CoreV1().Nodes().Delete(ctx(t), node, metav1.DeleteOptions{}) })
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	eventually(t, 10*time.Second, func() error { // the controllers write the node too
		n, err := env.cs.CoreV1().Nodes().Get(ctx(t), node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Capacity, n.Status.Allocatable = res, res
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now()}}
		_, err = env.cs.CoreV1().Nodes().UpdateStatus(ctx(t), n, metav1.UpdateOptions{})
		return err
	})
	if _, err := env.cs.CoreV1().Pods(ns).Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "netexec"}, {Name: "side", Image: "netexec"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var ls []string
	eventually(t, 30*time.Second, func() error {
		out, errOut, err := kubectlErr(t, "-n", ns, "top", "pod")
		if err != nil {
			return fmt.Errorf("top pod: %v: %s", err, errOut)
		}
		ls = lines(out)
		if len(ls) != 2 {
			return fmt.Errorf("top pod: %q", out)
		}
		return nil
	})
	if h := strings.Join(fields(ls[0]), " "); h != "NAME CPU(cores) MEMORY(bytes)" {
		t.Errorf("top pod header %q", ls[0])
	}
	// 300m +- rounding of the window; 80Mi.
	if f := fields(ls[1]); len(f) != 3 || f[0] != "web" || !strings.HasSuffix(f[1], "m") || f[2] != "80Mi" || !near(f[1], 300) {
		t.Errorf("top pod row %q", ls[1])
	}
	out := kubectl(t, "-n", ns, "top", "pod", "web", "--containers")
	ls = lines(out)
	if len(ls) != 3 || strings.Join(fields(ls[0]), " ") != "POD NAME CPU(cores) MEMORY(bytes)" {
		t.Fatalf("top pod --containers: %q", out)
	}
	if f := fields(ls[1]); f[1] != "app" || f[3] != "64Mi" || !near(f[2], 250) {
		t.Errorf("container row %q", ls[1])
	}
	// Debian's kubectl 1.20 has no `top pod --field-selector`.
	if !spdyOnly() {
		if out := kubectl(t, "-n", ns, "top", "pod", "--field-selector", "metadata.name=web"); !strings.Contains(out, "web") {
			t.Errorf("top pod --field-selector metadata.name=web: %q", out)
		}
		if out, _, _ := kubectlErr(t, "-n", ns, "top", "pod", "--field-selector", "metadata.name!=web"); strings.Contains(out, "web") {
			t.Errorf("top pod --field-selector metadata.name!=web: %q", out)
		}
	}
	if out := kubectl(t, "-n", ns, "top", "pod", "-l", "app=nothing"); strings.Contains(out, "web") {
		t.Errorf("top pod -l app=nothing: %q", out)
	}

	out = kubectl(t, "top", "node", node)
	ls = lines(out)
	// kubectl has printed both "CPU%" and "CPU(%)".
	if len(ls) != 2 || strings.ReplaceAll(strings.Join(fields(ls[0]), " "), "(%)", "%") != "NAME CPU(cores) CPU% MEMORY(bytes) MEMORY%" {
		t.Fatalf("top node: %q", out)
	}
	// 1500m of 4 cores, 2048Mi of 8Gi.
	if f := fields(ls[1]); f[0] != node || !near(f[1], 1500) || f[2] != "37%" && f[2] != "38%" || f[3] != "2048Mi" || f[4] != "25%" {
		t.Errorf("top node row %q", ls[1])
	}
	if out := kubectl(t, "top", "nodes"); !strings.Contains(out, node) {
		t.Errorf("top nodes lacks %s: %q", node, out)
	}
}

// near: "303m" is within 3% of want millicores.
func near(q string, want int) bool {
	var m int
	if _, err := fmt.Sscanf(q, "%dm", &m); err != nil {
		return false
	}
	return m*100 >= want*97 && m*100 <= want*103
}
