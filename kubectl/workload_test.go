package kubectl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

func TestExpose(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))

	t.Run("deployment, ports from the template", func(t *testing.T) {
		h := h.with(t)
		if out := h.ok("expose", "deploy/web"); out != "service/web exposed\n" {
			t.Fatalf("expose: %q", out)
		}
		var svc api.Service
		h.getObj(resSvc, "web", &svc)
		if svc.Spec.Selector["app"] != "web" || len(svc.Spec.Selector) != 1 || svc.Labels["team"] != "a" ||
			len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
			t.Fatalf("service %+v labels %v", svc.Spec, svc.Labels)
		}
	})
	t.Run("deployment, NodePort with target port", func(t *testing.T) {
		h := h.with(t)
		h.ok("expose", "deployment", "web", "--name=web-np", "--port=8080", "--target-port=80", "--type=NodePort", "--protocol=TCP")
		rows := checkColumns(t, h.ok("get", "svc", "web-np"), "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE")
		if rows[0][1] != "NodePort" || !strings.HasPrefix(rows[0][4], "8080:3") || !strings.HasSuffix(rows[0][4], "/TCP") {
			t.Fatalf("row %q", rows[0])
		}
	})
	t.Run("service and pod", func(t *testing.T) {
		h := h.with(t)
		h.ok("expose", "svc", "web", "--name=web-copy", "--port=90")
		var svc api.Service
		h.getObj(resSvc, "web-copy", &svc)
		if svc.Spec.Selector["app"] != "web" || svc.Spec.Ports[0].Port != 90 {
			t.Fatalf("from service: %+v", svc.Spec)
		}
		h.ok("run", "solo", "--image=nginx", "--labels=app=solo,tier=x", "--port=7000")
		h.ok("expose", "pod", "solo")
		h.getObj(resSvc, "solo", &svc)
		if svc.Spec.Selector["tier"] != "x" || svc.Spec.Ports[0].Port != 7000 {
			t.Fatalf("from pod: %+v", svc.Spec)
		}
	})
	t.Run("dry run prints the service", func(t *testing.T) {
		h := h.with(t)
		out := h.ok("expose", "deploy", "web", "--name=dry", "--port=1", "--dry-run=client", "-o", "yaml")
		if !strings.Contains(out, "name: dry") || !strings.Contains(out, "port: 1") {
			t.Fatalf("dry run:\n%s", out)
		}
		if err := h.c.Get(context.Background(), resSvc, h.ns, "dry", &api.Service{}); !client.IsNotFound(err) {
			t.Fatalf("dry run created the service: %v", err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		h := h.with(t)
		h.fails(1, `Error from server (NotFound): deployments.apps "nope" not found`, "expose", "deploy", "nope", "--port=1")
		h.fails(1, `Error from server (AlreadyExists): services "web" already exists`, "expose", "deploy", "web")
		h.fails(1, "error: cannot expose a Namespace", "expose", "ns", h.ns)
		h.fails(1, "error: invalid --type", "expose", "deploy", "web", "--name=x", "--type=Weird")
	})
}

func TestScale(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))
	if out := h.ok("scale", "deployment", "web", "--replicas=4"); out != "deployment.apps/web scaled\n" {
		t.Fatalf("scale: %q", out)
	}
	var sc api.Scale
	p, _ := client.ResourcePath(resDeploy, h.ns, "web", "scale")
	if err := h.c.Do(context.Background(), "GET", p, nil, &sc); err != nil || sc.Spec.Replicas != 4 {
		t.Fatalf("scale subresource: %+v %v", sc, err)
	}
	h.fails(1, "error: Expected replicas to be 3, was 4", "scale", "deploy/web", "--replicas=1", "--current-replicas=3")
	if out := h.ok("scale", "deploy/web", "--replicas=1", "--current-replicas=4"); out != "deployment.apps/web scaled\n" {
		t.Fatalf("scale with precondition: %q", out)
	}
	h.fails(1, "error: cannot scale a service", "scale", "svc/web", "--replicas=1")
	h.fails(1, `Error from server (NotFound)`, "scale", "deploy/nope", "--replicas=1")
	h.fails(1, `required flag(s) "replicas" not set`, "scale", "deploy/web")
}

// templateHash is the pod-template-hash of the deployment's current
// revision, once the controller has recorded it.
func templateHash(t *testing.T, h *harness, name string) (string, int64) {
	t.Helper()
	var d api.Deployment
	h.getObj(resDeploy, name, &d)
	var rev int64
	fmt.Sscan(d.Annotations["deployment.kubernetes.io/revision"], &rev)
	var list api.PodList
	_ = h.c.List(context.Background(), resPods, h.ns, client.ListOptions{LabelSelector: "app=" + name}, &list)
	hashes := map[string]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			hashes[p.Labels["pod-template-hash"]] = true
		}
	}
	if len(hashes) != 1 {
		return "", rev
	}
	for k := range hashes {
		return k, rev
	}
	return "", rev
}

func TestRollout(t *testing.T) {
	h := newHarness(t)
	h.kubelet()
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))
	out := h.ok("rollout", "status", "deployment/web", "--timeout=30s")
	if !strings.HasSuffix(out, "deployment \"web\" successfully rolled out\n") {
		t.Fatalf("status: %q", out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "Waiting for deployment") && !strings.HasPrefix(l, "deployment \"web\" successfully") {
			t.Fatalf("unexpected status line %q", l)
		}
	}
	hash1, rev1 := templateHash(t, h, "web")
	if hash1 == "" || rev1 != 1 {
		t.Fatalf("after the first rollout: hash %q revision %d", hash1, rev1)
	}

	if out := h.ok("rollout", "restart", "deploy/web"); out != "deployment.apps/web restarted\n" {
		t.Fatalf("restart: %q", out)
	}
	out = h.ok("rollout", "status", "deploy/web", "--timeout=30s")
	if !strings.HasSuffix(out, "successfully rolled out\n") {
		t.Fatalf("status after restart: %q", out)
	}
	var hash2 string
	eventually(t, "the restarted pods", 20*time.Second, func() (bool, string) {
		var rev int64
		hash2, rev = templateHash(t, h, "web")
		return hash2 != "" && hash2 != hash1 && rev == 2, hash2
	})
	var d api.Deployment
	h.getObj(resDeploy, "web", &d)
	if d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Fatalf("no restartedAt annotation: %v", d.Spec.Template.Annotations)
	}

	out = h.ok("rollout", "history", "deploy/web")
	if out != "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n" {
		t.Fatalf("history: %q", out)
	}
	if out := h.ok("rollout", "history", "deploy/web", "--revision=2"); !strings.Contains(out, "deployment.apps/web with revision #2") || !strings.Contains(out, "kubectl.kubernetes.io/restartedAt") {
		t.Fatalf("history --revision: %q", out)
	}

	if out := h.ok("rollout", "undo", "deploy/web"); out != "deployment.apps/web rolled back\n" {
		t.Fatalf("undo: %q", out)
	}
	eventually(t, "the rolled back pods", 20*time.Second, func() (bool, string) {
		h2, rev := templateHash(t, h, "web")
		return h2 == hash1 && rev == 3, fmt.Sprint(h2, rev)
	})
	h.ok("rollout", "status", "deploy/web", "--timeout=30s")
	// revision 2 is now the previous one; revision 3 is the current one
	if out := h.ok("rollout", "undo", "deploy/web", "--to-revision=3"); out != "deployment.apps/web skipped rollback (current template already matches revision 3)\n" {
		t.Fatalf("undo to current: %q", out)
	}
	h.fails(1, "error: unable to find specified revision 9 in history", "rollout", "undo", "deploy/web", "--to-revision=9")
	h.ok("rollout", "undo", "deploy/web", "--to-revision=2")
	eventually(t, "revision 2's pods again", 20*time.Second, func() (bool, string) {
		h3, _ := templateHash(t, h, "web")
		return h3 == hash2, h3
	})

	if out := h.ok("rollout", "pause", "deploy/web"); out != "deployment.apps/web paused\n" {
		t.Fatalf("pause: %q", out)
	}
	h.fails(1, "can't restart paused deployment", "rollout", "restart", "deploy/web")
	h.fails(1, "is not resumed", "rollout", "pause", "deploy/web")
	h.ok("rollout", "resume", "deploy/web")
	h.fails(1, `no status has been implemented for "v1, Kind=Service"`, "rollout", "status", "svc/web")
	h.fails(1, `Error from server (NotFound): deployments.apps "nope" not found`, "rollout", "status", "deploy/nope")
}

// TestRolloutStatusTimeout: no agent runs the pods, so the rollout never
// completes.
func TestRolloutStatusTimeout(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))
	r := h.fails(1, "error: timed out waiting for the condition", "rollout", "status", "deploy/web", "--timeout=1s")
	if !strings.Contains(r.stdout, "Waiting for deployment \"web\" rollout to finish") && !strings.Contains(r.stdout, "Waiting for deployment spec update to be observed") {
		t.Fatalf("no progress message: %s", r)
	}
	if r := h.run("rollout", "status", "deploy/web", "--watch=false"); r.code != 0 || !strings.HasPrefix(r.stdout, "Waiting for") {
		t.Fatalf("--watch=false: %s", r)
	}
}

func TestRunAndLogs(t *testing.T) {
	h := newHarness(t)
	h.kubelet()
	if out := h.ok("run", "web", "--image=nginx", "--env=A=1", "--env=B=2", "--port=80"); out != "pod/web created\n" {
		t.Fatalf("run: %q", out)
	}
	var p api.Pod
	h.getObj(resPods, "web", &p)
	c := p.Spec.Containers[0]
	if p.Labels["run"] != "web" || p.Spec.RestartPolicy != api.RestartPolicyAlways || c.Name != "web" || c.Image != "nginx" ||
		len(c.Env) != 2 || c.Ports[0].ContainerPort != 80 {
		t.Fatalf("pod %+v", p.Spec)
	}
	h.ok("run", "cmd", "--image=busybox", "--restart=Never", "--command", "--", "sleep", "10")
	h.getObj(resPods, "cmd", &p)
	if strings.Join(p.Spec.Containers[0].Command, " ") != "sleep 10" || p.Spec.RestartPolicy != api.RestartPolicyNever {
		t.Fatalf("--command pod %+v", p.Spec)
	}

	// -i with a failing container: its exit code, and --rm deletes it.
	r := h.run("run", "bad", "--image=busybox", "--restart=Never", "--labels=test/exit=fail", "--rm", "-i", "--", "false")
	if r.code != 3 || !strings.Contains(r.stderr, "pod "+h.ns+"/bad terminated (Error)") || !strings.Contains(r.stdout, `pod "bad" deleted`) {
		t.Fatalf("failing run: %s", r)
	}
	h.fails(1, "error: --rm should only be used for attached containers", "run", "x", "--image=a", "--rm")
	h.fails(1, "error: --image is required", "run", "x")
	h.fails(1, `Error from server (AlreadyExists): pods "web" already exists`, "run", "web", "--image=nginx")
	out := h.ok("run", "dry", "--image=nginx", "--dry-run=client", "-o", "json")
	if m := mustJSON(t, out); m["kind"] != "Pod" {
		t.Fatalf("dry run: %s", out)
	}

	// The test's kubelet publishes no node API: kubectl's error.
	h.fails(1, `Error from server (ServiceUnavailable): node "node-1" publishes no node API`, "logs", "web")
	h.fails(1, "error: container nope is not valid for pod web", "logs", "web", "-c", "nope")
	h.fails(1, `Error from server (NotFound): pods "ghost" not found`, "logs", "ghost")
}

// TestRunTimeout: no agent runs the pod, so it never starts; --rm still
// deletes it.
func TestRunTimeout(t *testing.T) {
	h := newHarness(t)
	r := h.fails(1, "error: timed out waiting for the condition", "run", "stuck", "--image=x", "--restart=Never",
		"--pod-running-timeout=1s", "--rm", "-it", "--", "true")
	if !strings.Contains(r.stdout, `pod "stuck" deleted`) || !strings.Contains(r.stderr, "pod "+h.ns+"/stuck is") {
		t.Fatalf("run timeout: %s", r)
	}
}

// TestRolloutHistoryUndoControllerRevisions: `skiff rollout history` and
// `undo` of a DaemonSet and a StatefulSet read their ControllerRevisions
// and patch the chosen one's data back, as kubectl does.
func TestRolloutHistoryUndoControllerRevisions(t *testing.T) {
	h := newHarness(t)
	for _, w := range []struct{ ref, kind, yaml string }{
		{"ds/agent", "daemonset.apps/agent", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {none: none}
      containers: [{name: c, image: "%s"}]
`},
		{"sts/db", "statefulset.apps/db", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      nodeSelector: {none: none}
      containers: [{name: c, image: "%s"}]
`},
	} {
		h.ok("apply", "-f", h.writeFile("w1.yaml", fmt.Sprintf(w.yaml, "img:1")))
		// The first template's revision before the second template: a
		// controller that sees only the second makes only its revision.
		want := w.kind + " \nREVISION  CHANGE-CAUSE\n1         <none>\n\n"
		eventually(t, w.ref+" first revision", 20*time.Second, func() (bool, string) {
			out := h.ok("rollout", "history", w.ref)
			return out == want, out
		})
		h.ok("apply", "-f", h.writeFile("w2.yaml", fmt.Sprintf(w.yaml, "img:2")))
		want = w.kind + " \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
		eventually(t, w.ref+" history", 20*time.Second, func() (bool, string) {
			out := h.ok("rollout", "history", w.ref)
			return out == want, out
		})
		if out := h.ok("rollout", "history", w.ref, "--revision=1"); !strings.Contains(out, w.kind+" with revision #1") || !strings.Contains(out, "img:1") {
			t.Errorf("%s history --revision=1: %q", w.ref, out)
		}
		if out := h.ok("rollout", "undo", w.ref); out != w.kind+" rolled back\n" {
			t.Errorf("%s undo: %q", w.ref, out)
		}
		want = w.kind + " \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
		eventually(t, w.ref+" history after the undo", 20*time.Second, func() (bool, string) {
			out := h.ok("rollout", "history", w.ref)
			return out == want, out
		})
		if out := h.ok("rollout", "undo", w.ref, "--to-revision=3"); out != w.kind+" skipped rollback (current template already matches revision 3)\n" {
			t.Errorf("%s undo to the current: %q", w.ref, out)
		}
		h.fails(1, "error: unable to find specified revision 9 in history", "rollout", "undo", w.ref, "--to-revision=9")
	}
}
