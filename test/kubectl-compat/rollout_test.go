package kubectlcompat

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// actAsNode plays the node agent for pods bound to node: it marks them
// Running and Ready, until ctx ends.
func actAsNode(ctx context.Context, t *testing.T, ns, node string) {
	for ctx.Err() == nil {
		pods, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil {
					continue
				}
				now := metav1.Now()
				p.Status.Phase = corev1.PodRunning
				p.Status.HostIP = "192.0.2.10"
				p.Status.PodIP = fmt.Sprintf("10.244.0.%d", 10+i)
				p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
				p.Status.StartTime = &now
				p.Status.Conditions = []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				}
				p.Status.ContainerStatuses = nil
				for _, c := range p.Spec.Containers {
					p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
						Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr(true),
						State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
					})
				}
				if _, err := env.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
					t.Logf("node: pod %s status: %v", p.Name, err)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestRolloutStatus(t *testing.T) {
	ns := namespace(t, "rollout")
	kubectl(t, "apply", "-f", manifest(t, "node.yaml", `apiVersion: v1
kind: Node
metadata:
  name: compat-node
status:
  conditions:
  - type: Ready
    status: "True"
  addresses:
  - type: InternalIP
    address: 192.0.2.10
`))
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		actAsNode(c, t, ns, "compat-node")
	}()
	defer func() {
		cancel()
		<-done
	}()

	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "d.yaml", fmt.Sprintf(deploymentYAML, 2, "busybox", "a")))
	out := kubectl(t, "rollout", "status", "-n", ns, "deploy/compute-node", "--timeout=60s")
	if !strings.Contains(out, `deployment "compute-node" successfully rolled out`) {
		t.Errorf("rollout status: %q", out)
	}
	pods := lines(kubectl(t, "get", "pods", "-n", ns, "-o", "wide"))
	if len(pods) != 3 || strings.Join(fields(pods[0]), " ") != "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES" {
		t.Fatalf("pods:\n%s", strings.Join(pods, "\n"))
	}
	for _, l := range pods[1:] {
		f := fields(l)
		if f[1] != "1/1" || f[2] != "Running" || f[6] != "compat-node" {
			t.Errorf("pod row %q", f)
		}
	}
	dep := lines(kubectl(t, "get", "deploy", "-n", ns))
	if f := fields(dep[1]); strings.Join(fields(dep[0]), " ") != "NAME READY UP-TO-DATE AVAILABLE AGE" || f[1] != "2/2" || f[2] != "2" || f[3] != "2" {
		t.Errorf("deployment:\n%s", strings.Join(dep, "\n"))
	}

	// A new template rolls out too (the node readies the new pods).
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "d2.yaml", fmt.Sprintf(deploymentYAML, 2, "busybox:2", "b")))
	var buf bytes.Buffer
	buf.WriteString(kubectl(t, "rollout", "status", "-n", ns, "deploy/compute-node", "--timeout=60s"))
	if !strings.Contains(buf.String(), "successfully rolled out") {
		t.Errorf("second rollout: %q", buf.String())
	}
	if n := kubectl(t, "get", "nodes", "compat-node", "-o", "jsonpath={.status.conditions[0].type}"); n != "Ready" {
		t.Errorf("node condition %q", n)
	}
}
