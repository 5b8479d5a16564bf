package kubectlcompat

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// actAsNode plays the node agent for pods bound to node (any node when
// node is ""): it marks them Running and Ready, until ctx ends.
func actAsNode(ctx context.Context, t *testing.T, ns, node string) {
	sel := "spec.nodeName!="
	if node != "" {
		sel = "spec.nodeName=" + node
	}
	for ctx.Err() == nil {
		pods, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
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

// TestRolloutHistoryUndo: a Deployment's revisions are its ReplicaSets,
// which kubectl reads itself: rollout history (and --revision), get rs,
// describe deploy's NewReplicaSet/OldReplicaSets, rollout undo (kubectl
// patches the template of the chosen ReplicaSet client-side) and
// --to-revision, pause (no rollout, no undo), resume and restart.
func TestRolloutHistoryUndo(t *testing.T) {
	ns := namespace(t, "rollout-history")
	kubectl(t, "apply", "-f", manifest(t, "node.yaml", `apiVersion: v1
kind: Node
metadata:
  name: compat-node-history
status:
  conditions:
  - type: Ready
    status: "True"
  addresses:
  - type: InternalIP
    address: 192.0.2.11
`))
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		actAsNode(c, t, ns, "") // the scheduler may pick any test's node
	}()
	defer func() {
		cancel()
		<-done
	}()
	status := func(what string) {
		t.Helper()
		if out := kubectl(t, "rollout", "status", "-n", ns, "deploy/compute-node", "--timeout=60s"); !strings.Contains(out, "successfully rolled out") {
			t.Fatalf("%s: rollout status %q", what, out)
		}
	}
	image := func() string {
		return kubectl(t, "get", "deploy", "-n", ns, "compute-node", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
	}
	revision := func() string {
		return kubectl(t, "get", "deploy", "-n", ns, "compute-node", "-o", `jsonpath={.metadata.annotations.deployment\.kubernetes\.io/revision}`)
	}

	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "d1.yaml", fmt.Sprintf(deploymentYAML, 2, "busybox:1", "a")))
	status("first rollout")
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "d2.yaml", fmt.Sprintf(deploymentYAML, 2, "busybox:2", "b")))
	status("second rollout")
	kubectl(t, "annotate", "-n", ns, "deploy/compute-node", "kubernetes.io/change-cause=to busybox 2")
	eventually(t, 20*time.Second, func() error {
		out := kubectl(t, "rollout", "history", "-n", ns, "deploy/compute-node")
		got := lines(out)
		want := []string{"deployment.apps/compute-node", "REVISION  CHANGE-CAUSE", "1         <none>", "2         to busybox 2"}
		if len(got) != len(want) {
			return fmt.Errorf("history %q", out)
		}
		for i := range want {
			if strings.TrimSpace(got[i]) != want[i] {
				return fmt.Errorf("history line %d %q, want %q", i, got[i], want[i])
			}
		}
		return nil
	})
	if out := kubectl(t, "rollout", "history", "-n", ns, "deploy/compute-node", "--revision=1"); !strings.Contains(out, "deployment.apps/compute-node with revision #1") ||
		!strings.Contains(out, "busybox:1") || strings.Contains(out, "busybox:2") || !strings.Contains(out, "pod-template-hash=") {
		t.Errorf("history --revision=1:\n%s", out)
	}

	rs := lines(kubectl(t, "get", "rs", "-n", ns))
	if len(rs) != 3 || strings.Join(fields(rs[0]), " ") != "NAME DESIRED CURRENT READY AGE" {
		t.Fatalf("get rs:\n%s", strings.Join(rs, "\n"))
	}
	var newRS, oldRS string
	for _, l := range rs[1:] {
		f := fields(l)
		switch strings.Join(f[1:4], " ") {
		case "2 2 2":
			newRS = f[0]
		case "0 0 0":
			oldRS = f[0]
		}
		if !strings.HasPrefix(f[0], "compute-node-") {
			t.Errorf("replica set %q", f[0])
		}
	}
	if newRS == "" || oldRS == "" {
		t.Fatalf("get rs: want one of 2 and one of 0:\n%s", strings.Join(rs, "\n"))
	}
	out := kubectl(t, "describe", "deploy", "-n", ns, "compute-node")
	// kubectl 1.32 and later list every old ReplicaSet; Debian's 1.20 only
	// those that still have replicas (none here).
	wantOld := `OldReplicaSets:\s+` + oldRS + ` \(0/0 replicas created\)`
	if spdyOnly() {
		wantOld = `OldReplicaSets:\s+<none>`
	}
	if !strings.Contains(out, "NewReplicaSet:   "+newRS+" (2/2 replicas created)") || !regexpMatch(wantOld, out) {
		t.Errorf("describe deploy:\n%s", out)
	}
	if owner := kubectl(t, "get", "rs", "-n", ns, newRS, "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}"); owner != "Deployment/compute-node" {
		t.Errorf("replica set owner %q", owner)
	}

	// undo: back to revision 1's template, as revision 3.
	if out := kubectl(t, "rollout", "undo", "-n", ns, "deploy/compute-node"); strings.TrimSpace(out) != "deployment.apps/compute-node rolled back" {
		t.Errorf("undo: %q", out)
	}
	status("undo")
	if img := image(); img != "busybox:1" {
		t.Errorf("image after undo %q", img)
	}
	eventually(t, 20*time.Second, func() error {
		if r := revision(); r != "3" {
			return fmt.Errorf("revision %q after undo, want 3", r)
		}
		return nil
	})
	// The rolled-back ReplicaSet is reused, not a new one.
	if n := len(lines(kubectl(t, "get", "rs", "-n", ns))); n != 3 {
		t.Errorf("%d replica set rows after undo, want 2", n-1)
	}
	// undo --to-revision=2
	kubectl(t, "rollout", "undo", "-n", ns, "deploy/compute-node", "--to-revision=2")
	status("undo --to-revision=2")
	if img := image(); img != "busybox:2" {
		t.Errorf("image after undo --to-revision=2 %q", img)
	}
	if _, errOut, err := kubectlErr(t, "rollout", "undo", "-n", ns, "deploy/compute-node", "--to-revision=9"); err == nil || !strings.Contains(errOut, "unable to find specified revision 9 in history") {
		t.Errorf("undo to a missing revision: %v %q", err, errOut)
	}

	// pause: a template change rolls nothing out, undo is refused.
	kubectl(t, "rollout", "pause", "-n", ns, "deploy/compute-node")
	kubectl(t, "set", "image", "-n", ns, "deploy/compute-node", "worker=busybox:5")
	time.Sleep(time.Second)
	if n := len(lines(kubectl(t, "get", "rs", "-n", ns))); n != 3 {
		t.Errorf("a paused deployment got a new replica set (%d rows)", n-1)
	}
	if _, errOut, err := kubectlErr(t, "rollout", "undo", "-n", ns, "deploy/compute-node"); err == nil || !strings.Contains(errOut, "paused") {
		t.Errorf("undo while paused: %v %q", err, errOut)
	}
	kubectl(t, "rollout", "resume", "-n", ns, "deploy/compute-node")
	status("resume")
	if n := len(lines(kubectl(t, "get", "rs", "-n", ns))); n != 4 {
		t.Errorf("resume: %d replica sets, want 3", n-1)
	}
	// restart: a new template (restartedAt), a new ReplicaSet.
	kubectl(t, "rollout", "restart", "-n", ns, "deploy/compute-node")
	status("restart")
	if n := len(lines(kubectl(t, "get", "rs", "-n", ns))); n != 5 {
		t.Errorf("restart: %d replica sets, want 4", n-1)
	}
	// The pods are the newest ReplicaSet's.
	pods := lines(kubectl(t, "get", "pods", "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}{\"\\n\"}{end}"))
	for _, k := range pods {
		if k != "ReplicaSet" {
			t.Errorf("pod owned by %q", k)
		}
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
