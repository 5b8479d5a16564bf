package kubectlcompat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// actAsDrainNodes plays the node agent of nodes: pods bound to them become
// Running and Ready, and terminating ones are removed (a grace-0 delete,
// as a kubelet does once the containers stopped), until ctx ends.
func actAsDrainNodes(ctx context.Context, t *testing.T, ns string, nodes ...string) {
	for ctx.Err() == nil {
		for _, node := range nodes {
			pods, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
			if err != nil {
				continue
			}
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp != nil {
					_ = env.cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0)),
						Preconditions: &metav1.Preconditions{UID: &p.UID}})
					continue
				}
				if p.Status.Phase == corev1.PodRunning {
					continue
				}
				now := metav1.Now()
				p.Status.Phase = corev1.PodRunning
				p.Status.PodIP = fmt.Sprintf("10.244.9.%d", 10+i)
				p.Status.StartTime = &now
				p.Status.Conditions = []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				}
				if _, err := env.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
					t.Logf("node: pod %s status: %v", p.Name, err)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func nodeManifest(name string) string {
	return `apiVersion: v1
kind: Node
metadata:
  name: ` + name + `
  labels:
    drain-test: "yes"
spec:
  # Only this test's pods tolerate it: another test's pending pods must
  # not land here (kubectl drain refuses unmanaged pods).
  taints:
  - {key: drain-test, value: "yes", effect: NoSchedule}
status:
  conditions:
  - type: Ready
    status: "True"
  allocatable:
    cpu: "4"
    memory: 8Gi
    pods: "110"
`
}

// TestCordonDrainUncordon runs kubectl cordon, drain --ignore-daemonsets
// --delete-emptydir-data (through the eviction API, held back by a
// PodDisruptionBudget until a replacement is ready elsewhere) and uncordon
// against Skiff, with a DaemonSet whose pod stays on the drained node.
func TestCordonDrainUncordon(t *testing.T) {
	ns := namespace(t, "drain")
	kubectl(t, "apply", "-f", manifest(t, "node.yaml", nodeManifest("drain-a")))
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		actAsDrainNodes(c, t, ns, "drain-a", "drain-b")
	}()
	defer func() {
		cancel()
		<-done
		_, _, _ = kubectlErr(t, "delete", "node", "drain-a", "drain-b", "--ignore-not-found")
	}()

	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "apps.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeSelector: {drain-test: "yes"}
      tolerations:
      - {key: drain-test, operator: Equal, value: "yes", effect: NoSchedule}
      containers:
      - name: web
        image: nginx
        volumeMounts:
        - {name: scratch, mountPath: /scratch}
      volumes:
      - name: scratch
        emptyDir: {}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      nodeSelector: {drain-test: "yes"}
      tolerations:
      - {key: drain-test, operator: Equal, value: "yes", effect: NoSchedule}
      containers:
      - name: agent
        image: busybox
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web-pdb
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
`))
	podsOn := func(node, app string) []corev1.Pod {
		list, err := env.cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: "app=" + app, FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			t.Fatal(err)
		}
		var out []corev1.Pod
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
		return out
	}
	eventually(t, 30*time.Second, func() error {
		if n := len(podsOn("drain-a", "web")); n != 2 {
			return fmt.Errorf("%d web pods on drain-a, want 2", n)
		}
		if n := len(podsOn("drain-a", "agent")); n != 1 {
			return fmt.Errorf("%d agent pods on drain-a, want 1", n)
		}
		return nil
	})
	eventually(t, 30*time.Second, func() error {
		out := kubectl(t, "get", "pdb", "web-pdb", "-n", ns)
		ls := lines(out)
		if len(ls) != 2 || strings.Join(fields(ls[0]), " ") != "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE" {
			return fmt.Errorf("get pdb:\n%s", out)
		}
		if f := fields(ls[1]); len(f) != 5 || f[1] != "1" || f[2] != "N/A" || f[3] != "1" {
			return fmt.Errorf("get pdb row: %q", ls[1])
		}
		return nil
	})
	eventually(t, 30*time.Second, func() error {
		out := kubectl(t, "get", "ds", "agent", "-n", ns)
		ls := lines(out)
		if len(ls) != 2 || strings.Join(fields(ls[0]), " ") != "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE" {
			return fmt.Errorf("get ds:\n%s", out)
		}
		if f := fields(ls[1]); len(f) != 8 || strings.Join(f[1:7], " ") != "1 1 1 1 1 drain-test=yes" {
			return fmt.Errorf("get ds row: %q", ls[1])
		}
		return nil
	})

	// A second node joins: the DaemonSet follows it, and it is where the
	// drained pods' replacements go.
	kubectl(t, "apply", "-f", manifest(t, "node-b.yaml", nodeManifest("drain-b")))
	eventually(t, 30*time.Second, func() error {
		if n := len(podsOn("drain-b", "agent")); n != 1 {
			return fmt.Errorf("%d agent pods on drain-b, want 1", n)
		}
		return nil
	})

	if out := kubectl(t, "cordon", "drain-a"); !strings.Contains(out, "node/drain-a cordoned") {
		t.Fatalf("cordon: %q", out)
	}
	node, err := env.cs.CoreV1().Nodes().Get(context.Background(), "drain-a", metav1.GetOptions{})
	if err != nil || !node.Spec.Unschedulable {
		t.Fatalf("after cordon: unschedulable %v, %v", node.Spec.Unschedulable, err)
	}

	// Without --ignore-daemonsets drain refuses; without
	// --delete-emptydir-data too.
	if _, errOut, err := kubectlErr(t, "drain", "drain-a", "--timeout=20s"); err == nil ||
		!strings.Contains(errOut, "DaemonSet-managed Pods") {
		t.Fatalf("drain without --ignore-daemonsets: %v\n%s", err, errOut)
	}

	out, errOut, err := kubectlErr(t, "drain", "drain-a", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=50s")
	if err != nil {
		t.Fatalf("drain: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	all := out + errOut
	// kubectl 1.20 ends with "node/drain-a evicted", later ones "drained".
	drained := "node/drain-a drained"
	if spdyOnly() {
		drained = "node/drain-a evicted"
	}
	for _, want := range []string{"node/drain-a already cordoned", "ignoring DaemonSet-managed Pods: " + ns + "/agent-", "evicting pod " + ns + "/web-", drained} {
		if !strings.Contains(all, want) {
			t.Errorf("drain output lacks %q:\n%s", want, all)
		}
	}
	// The budget held the second eviction until a replacement was ready.
	if !strings.Contains(all, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Logf("drain did not hit the budget (the replacement was ready before the second eviction):\n%s", all)
	}
	if n := len(podsOn("drain-a", "web")); n != 0 {
		t.Fatalf("%d web pods left on drain-a", n)
	}
	if n := len(podsOn("drain-a", "agent")); n != 1 {
		t.Fatalf("the DaemonSet's pod left drain-a (%d)", n)
	}
	eventually(t, 30*time.Second, func() error {
		if n := len(podsOn("drain-b", "web")); n != 2 {
			return fmt.Errorf("%d web pods on drain-b, want 2", n)
		}
		return nil
	})

	if out := kubectl(t, "uncordon", "drain-a"); !strings.Contains(out, "node/drain-a uncordoned") {
		t.Fatalf("uncordon: %q", out)
	}
	node, err = env.cs.CoreV1().Nodes().Get(context.Background(), "drain-a", metav1.GetOptions{})
	if err != nil || node.Spec.Unschedulable {
		t.Fatalf("after uncordon: unschedulable %v, %v", node.Spec.Unschedulable, err)
	}
}
