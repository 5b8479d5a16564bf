package kubectlcompat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The k8s-website ReplicaSet and ReplicationController examples.
const replicaSetYAML = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
  labels:
    app: guestbook
    tier: frontend
spec:
  replicas: 3
  selector:
    matchLabels:
      tier: frontend
  template:
    metadata:
      labels:
        tier: frontend
    spec:
      containers:
      - name: php-redis
        image: us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5
`

const replicationControllerYAML = `apiVersion: v1
kind: ReplicationController
metadata:
  name: nginx
spec:
  replicas: 3
  selector:
    app: nginx
  template:
    metadata:
      name: nginx
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx
        ports:
        - containerPort: 80
`

// TestReplicaSetsAndReplicationControllers: kubectl applies the website's
// examples, `get rs` / `get rc` print kubectl's columns, `describe rs`
// shows the pods and the controller's Events, `scale rc` goes through
// /scale and the controller deletes the surplus, `get all` lists both.
func TestReplicaSetsAndReplicationControllers(t *testing.T) {
	ns := namespace(t, "replicasets")
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "rs.yaml", replicaSetYAML))
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "rc.yaml", replicationControllerYAML))

	eventually(t, 30*time.Second, func() error {
		rs, err := env.cs.AppsV1().ReplicaSets(ns).Get(ctx(t), "frontend", metav1.GetOptions{})
		if err != nil {
			return err
		}
		rc, err := env.cs.CoreV1().ReplicationControllers(ns).Get(ctx(t), "nginx", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if rs.Status.Replicas != 3 || rc.Status.Replicas != 3 || rs.Status.ObservedGeneration != rs.Generation {
			return fmt.Errorf("rs status %+v, rc status %+v", rs.Status, rc.Status)
		}
		return nil
	})

	for _, tc := range []struct{ resource, name, selector string }{
		{"rs", "frontend", "tier=frontend"}, {"rc", "nginx", "app=nginx"},
	} {
		out := lines(kubectl(t, "get", tc.resource, "-n", ns))
		if len(out) != 2 || strings.Join(fields(out[0]), " ") != "NAME DESIRED CURRENT READY AGE" ||
			strings.Join(fields(out[1])[:4], " ") != tc.name+" 3 3 0" {
			t.Errorf("get %s:\n%s", tc.resource, strings.Join(out, "\n"))
		}
		wide := lines(kubectl(t, "get", tc.resource, "-n", ns, "-o", "wide"))
		if h := fields(wide[0]); strings.Join(h[5:], " ") != "CONTAINERS IMAGES SELECTOR" || fields(wide[1])[7] != tc.selector {
			t.Errorf("get %s -o wide:\n%s", tc.resource, strings.Join(wide, "\n"))
		}
	}

	// describe rs: kubectl's own describer lists the pods by selector and
	// the Events of the ReplicaSet.
	eventually(t, 30*time.Second, func() error {
		out := kubectl(t, "describe", "rs", "frontend", "-n", ns)
		for _, want := range []string{"Name:         frontend", "Selector:     tier=frontend", "Replicas:     3 current / 3 desired",
			"Pods Status:  0 Running / 3 Waiting / 0 Succeeded / 0 Failed", "SuccessfulCreate", "replicaset-controller", "Created pod: frontend-"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("describe rs lacks %q:\n%s", want, out)
			}
		}
		return nil
	})

	if out := kubectl(t, "scale", "rc", "nginx", "-n", ns, "--replicas=1"); strings.TrimSpace(out) != "replicationcontroller/nginx scaled" {
		t.Errorf("scale rc: %q", out)
	}
	eventually(t, 30*time.Second, func() error {
		pods, err := env.cs.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return err
		}
		live := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				live++
			}
		}
		rc, err := env.cs.CoreV1().ReplicationControllers(ns).Get(ctx(t), "nginx", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if live != 1 || rc.Status.Replicas != 1 || *rc.Spec.Replicas != 1 {
			return fmt.Errorf("%d live pods, rc spec %d status %+v", live, *rc.Spec.Replicas, rc.Status)
		}
		return nil
	})
	if out := fields(lines(kubectl(t, "get", "rc", "nginx", "-n", ns))[1]); strings.Join(out[:4], " ") != "nginx 1 1 0" {
		t.Errorf("get rc after scale: %q", out)
	}

	all := kubectl(t, "get", "all", "-n", ns, "-o", "name")
	for _, want := range []string{"replicaset.apps/frontend", "replicationcontroller/nginx"} {
		if !strings.Contains(all, want) {
			t.Errorf("get all lacks %s:\n%s", want, all)
		}
	}

	// Deleting the ReplicaSet takes its pods with it (garbage collector).
	kubectl(t, "delete", "rs", "frontend", "-n", ns)
	eventually(t, 30*time.Second, func() error {
		pods, err := env.cs.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{LabelSelector: "tier=frontend"})
		if err != nil {
			return err
		}
		if len(pods.Items) != 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
}
