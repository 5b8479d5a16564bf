package kubectl_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// TestReplicaSetGetScaleDescribe: skiff apply of a ReplicaSet and a
// ReplicationController, get rs/rc with kubectl's columns, scale rc
// through /scale, describe rs and rc.
func TestReplicaSetGetScaleDescribe(t *testing.T) {
	h := newHarness(t)
	file := h.writeFile("sets.yaml", `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
spec:
  replicas: 2
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
        image: gb-frontend:v5
---
apiVersion: v1
kind: ReplicationController
metadata:
  name: nginx
spec:
  replicas: 3
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx
`)
	if out := h.ok("apply", "-f", file); out != "replicaset.apps/frontend created\nreplicationcontroller/nginx created\n" {
		t.Fatalf("apply: %q", out)
	}
	rsInfo := api.Lookup(api.Resources(), "apps/v1", "replicasets")
	rcInfo := api.Lookup(api.Resources(), "v1", "replicationcontrollers")
	eventually(t, "both sets' pods", 30*time.Second, func() (bool, string) {
		var rs api.ReplicaSet
		var rc api.ReplicationController
		h.getObj(rsInfo, "frontend", &rs)
		h.getObj(rcInfo, "nginx", &rc)
		return rs.Status.Replicas == 2 && rc.Status.Replicas == 3, fmt.Sprintf("rs %+v, rc %+v", rs.Status, rc.Status)
	})
	out := strings.Join(strings.Fields(h.ok("get", "rs,rc")), " ")
	for _, want := range []string{"NAME DESIRED CURRENT READY AGE", "replicaset.apps/frontend 2 2 0", "replicationcontroller/nginx 3 3 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("get rs,rc lacks %q:\n%s", want, out)
		}
	}
	if out := h.ok("scale", "rc", "nginx", "--replicas=1"); out != "replicationcontroller/nginx scaled\n" {
		t.Errorf("scale: %q", out)
	}
	eventually(t, "rc scaled to 1", 30*time.Second, func() (bool, string) {
		var rc api.ReplicationController
		h.getObj(rcInfo, "nginx", &rc)
		return rc.Status.Replicas == 1, fmt.Sprintf("%+v", rc.Status)
	})
	out = h.ok("describe", "rs", "frontend")
	for _, want := range []string{"Name:         frontend\n", "Selector:     tier=frontend\n", "Replicas:     2 current / 2 desired\n",
		"Pods Status:  0 Running / 2 Waiting / 0 Succeeded / 0 Failed\n", "php-redis:", "gb-frontend:v5"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe rs lacks %q:\n%s", want, out)
		}
	}
	if out := h.ok("expose", "rc", "nginx", "--port=80"); out != "service/nginx exposed\n" {
		t.Errorf("expose rc: %q", out)
	}
	var svc api.Service
	h.getObj(api.Lookup(api.Resources(), "v1", "services"), "nginx", &svc)
	if svc.Spec.Selector["app"] != "nginx" || len(svc.Spec.Selector) != 1 {
		t.Errorf("exposed selector %v", svc.Spec.Selector)
	}
	out = h.ok("describe", "rc", "nginx")
	for _, want := range []string{"Selector:     app=nginx\n", "Labels:       app=nginx\n", "Replicas:     1 current / 1 desired\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe rc lacks %q:\n%s", want, out)
		}
	}
}
