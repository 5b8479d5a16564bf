package kubectlcompat

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestTopAndHPAOnTheProcessRuntime is the whole pipeline with nothing
// stood in: a server with its built-in agent on the process runtime (in
// a network namespace the test made; root and the CNI plugins, else it
// skips) measures its pods from /proc, serves /metrics/resource, the
// server scrapes it every second; `kubectl top pod` sees the pod that
// burns a core and the one that sleeps, `kubectl top node` the node; and
// the built-in HPA scales a Deployment whose one pod burns a core against
// a request of 100m up to its maximum (2).
func TestTopAndHPAOnTheProcessRuntime(t *testing.T) {
	netnstest.RequireCNIPlugins(t)
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the portmap plugin runs it)")
	}
	nsn := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = nsn.Path
		cfg.AgentNodeName = "top-agent"
		cfg.NodeIP = []string{"192.0.2.31"}
		cfg.Runtime = "process"
		cfg.MetricResolution = time.Second
	}})
	rc, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	// The whole test (top, then an HPA that syncs every 15 s) outlasts
	// ctx's one minute on a loaded machine.
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	// Last cleanup before the server stops: every pod gone, so that the
	// agent has torn the sandboxes down (their netns mounts).
	t.Cleanup(func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
			if err == nil && len(l.Items) == 0 {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Error("pods left after 30 s")
	})
	const burn = "while :; do :; done"
	del := func(name string) {
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(1))})
	}
	for name, script := range map[string]string{"burn": burn, "idle": "exec sleep 3600"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers:                    []corev1.Container{{Name: "sh", Image: "none", Command: []string{"sh", "-c", script}}}}}
		if _, err := cs.CoreV1().Pods("default").Create(c, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { del(name) })
	}
	top := func(args ...string) (string, error) {
		out, errOut, code := kubectlOn(t, c, ts.Kubeconfig(), "", append([]string{"top"}, args...)...)
		if code != 0 {
			return "", fmt.Errorf("top %v: %d %s", args, code, errOut)
		}
		return out, nil
	}
	milli := func(q string) int {
		var m int
		if _, err := fmt.Sscanf(q, "%dm", &m); err != nil {
			return -1
		}
		return m
	}
	eventually(t, 60*time.Second, func() error {
		out, err := top("pod", "-n", "default")
		if err != nil {
			return err
		}
		got := map[string][]string{}
		for _, l := range lines(out)[1:] {
			got[fields(l)[0]] = fields(l)
		}
		b, i := got["burn"], got["idle"]
		if b == nil || i == nil {
			return fmt.Errorf("top pod: %q", out)
		}
		// A shared two-core machine: "most of a core" is 300m up.
		if m := milli(b[1]); m < 300 {
			return fmt.Errorf("burn at %s: %q", b[1], out)
		}
		if m := milli(i[1]); m < 0 || m > 50 {
			return fmt.Errorf("idle at %s: %q", i[1], out)
		}
		if !strings.HasSuffix(b[2], "Mi") {
			return fmt.Errorf("burn memory %q", b[2])
		}
		return nil
	})
	eventually(t, 30*time.Second, func() error {
		out, err := top("node")
		if err != nil {
			return err
		}
		if ls := lines(out); len(ls) != 2 || fields(ls[1])[0] != "top-agent" || milli(fields(ls[1])[1]) < 300 {
			return fmt.Errorf("top node: %q", out)
		}
		return nil
	})
	del("burn")

	// The HPA scales a burning Deployment up to its maximum.
	labels := map[string]string{"app": "burner"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "burner"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers: []corev1.Container{{Name: "sh", Image: "none", Command: []string{"sh", "-c", burn},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(c, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AppsV1().Deployments("default").Delete(context.Background(), "burner", metav1.DeleteOptions{})
		_ = cs.CoreV1().Pods("default").DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(1))},
			metav1.ListOptions{LabelSelector: "app=burner"})
	})
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "burner"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "burner"},
		MinReplicas:    ptr(int32(1)), MaxReplicas: 2,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(50))}}}}}}
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers("default").Create(c, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, func() error {
		d, err := cs.AppsV1().Deployments("default").Get(c, "burner", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			h, _ := cs.AutoscalingV2().HorizontalPodAutoscalers("default").Get(c, "burner", metav1.GetOptions{})
			return errors.New(fmt.Sprint("replicas ", *d.Spec.Replicas, ", hpa status ", h.Status))
		}
		return nil
	})
	// Stop burning at once: the machine is shared.
	_ = cs.AppsV1().Deployments("default").Delete(c, "burner", metav1.DeleteOptions{})
	h, err := cs.AutoscalingV2().HorizontalPodAutoscalers("default").Get(c, "burner", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Status.CurrentMetrics) == 0 || h.Status.CurrentMetrics[0].Resource == nil ||
		h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization == nil || *h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization < 100 {
		t.Errorf("hpa current metrics %+v", h.Status.CurrentMetrics)
	}
}
