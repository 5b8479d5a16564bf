package kubectl_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/kubectl"
)

const webV1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, team: a}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
        ports:
        - containerPort: 80
`

func TestApply(t *testing.T) {
	h := newHarness(t)
	file := h.writeFile("web.yaml", webV1)

	if out := h.ok("apply", "-f", file); out != "deployment.apps/web created\n" {
		t.Fatalf("create: %q", out)
	}
	var d api.Deployment
	h.getObj(resDeploy, "web", &d)
	la := d.Annotations[kubectl.LastAppliedAnnotation]
	if !strings.HasSuffix(la, "\n") || !strings.Contains(la, `"image":"nginx:1"`) || strings.Contains(la, kubectl.LastAppliedAnnotation) {
		t.Fatalf("last-applied annotation %q", la)
	}
	if out := h.ok("apply", "-f", file); out != "deployment.apps/web unchanged\n" {
		t.Fatalf("second apply: %q", out)
	}

	// Someone else adds a label; the configuration drops env B and the
	// team label and changes the image: B and team go, the other label
	// stays, defaults stay.
	if err := h.c.Patch(context.Background(), resDeploy, h.ns, "web", client.MergePatchType, []byte(`{"metadata":{"labels":{"other":"x"}}}`), nil); err != nil {
		t.Fatal(err)
	}
	v2 := strings.NewReplacer("nginx:1", "nginx:2", "\n        - {name: B, value: \"2\"}", "", ", team: a", "").Replace(webV1)
	if err := os.WriteFile(file, []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := h.ok("apply", "-f", file); out != "deployment.apps/web configured\n" {
		t.Fatalf("apply v2: %q", out)
	}
	h.getObj(resDeploy, "web", &d)
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "nginx:2" || len(c.Env) != 1 || c.Env[0].Name != "A" || d.Labels["team"] != "" || d.Labels["other"] != "x" || c.ImagePullPolicy == "" {
		t.Fatalf("after apply v2: labels %v, container %+v", d.Labels, c)
	}
	if out := h.ok("apply", "-f", file); out != "deployment.apps/web unchanged\n" {
		t.Fatalf("apply v2 again: %q", out)
	}

	t.Run("stdin, multi-document, dry run", func(t *testing.T) {
		h := h.with(t)
		r := h.runIn(context.Background(), twoServices, "apply", "-f", "-")
		if r.code != 0 || r.stdout != "service/front created\nservice/back created\n" {
			t.Fatalf("stdin: %s", r)
		}
		r = h.runIn(context.Background(), twoServices, "apply", "-f", "-", "--dry-run=client")
		if r.code != 0 || r.stdout != "service/front unchanged (dry run)\nservice/back unchanged (dry run)\n" {
			t.Fatalf("dry run: %s", r)
		}
	})
	t.Run("directory with YAML and a JSON List", func(t *testing.T) {
		h := h.with(t)
		dir := t.TempDir()
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: dir-a}\nspec: {ports: [{port: 1}]}\n"), 0o644))
		must(os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"apiVersion":"v1","kind":"List","items":[
			{"apiVersion":"v1","kind":"Service","metadata":{"name":"dir-b"},"spec":{"ports":[{"port":2}]}},
			{"apiVersion":"v1","kind":"Service","metadata":{"name":"dir-c"},"spec":{"ports":[{"port":3}]}}]}`), 0o644))
		must(os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a manifest"), 0o644))
		must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
		must(os.WriteFile(filepath.Join(dir, "sub", "d.yml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: dir-d}\nspec: {ports: [{port: 4}]}\n"), 0o644))
		if out := h.ok("apply", "-f", dir); out != "service/dir-a created\nservice/dir-b created\nservice/dir-c created\n" {
			t.Fatalf("dir: %q", out)
		}
		if out := h.ok("apply", "-R", "-f", dir); out != "service/dir-a unchanged\nservice/dir-b unchanged\nservice/dir-c unchanged\nservice/dir-d created\n" {
			t.Fatalf("dir -R: %q", out)
		}
	})
	t.Run("errors", func(t *testing.T) {
		h := h.with(t)
		bad := h.writeFile("bad.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 0}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: good}\nspec: {ports: [{port: 5}]}\n")
		r := h.fails(1, "The Service \"bad\" is invalid: \n* spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive\n* spec.ports[0].targetPort", "apply", "-f", bad)
		if r.stdout != "service/good created\n" {
			t.Fatalf("the valid object was not applied: %s", r)
		}
		h.fails(1, `no matches for kind "Widget" in version "v1"`, "apply", "-f", h.writeFile("w.yaml", "apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n"))
		h.fails(1, `error: the path "/nonexistent.yaml" does not exist`, "apply", "-f", "/nonexistent.yaml")
		h.fails(1, "error: must specify one of -f and -k", "apply")
		h.fails(1, "Error from server (BadRequest)", "apply", "-f", h.writeFile("u.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: u}\nspec: {ports: [{port: 1}], bogusField: 1}\n"))
		h.fails(1, "does not match the namespace", "apply", "-n", "other", "-f", h.writeFile("n.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: n, namespace: "+h.ns+"}\nspec: {ports: [{port: 1}]}\n"))
	})
}

func TestCreate(t *testing.T) {
	h := newHarness(t)
	file := h.writeFile("svcs.yaml", twoServices)
	if out := h.ok("create", "-f", file); out != "service/front created\nservice/back created\n" {
		t.Fatalf("create: %q", out)
	}
	h.fails(1, `Error from server (AlreadyExists): services "front" already exists`, "create", "-f", file)
	// apply over a created object warns about the missing annotation
	r := h.run("apply", "-f", file)
	if r.code != 0 || r.stdout != "service/front configured\nservice/back configured\n" || !strings.Contains(r.stderr, "missing the kubectl.kubernetes.io/last-applied-configuration annotation") {
		t.Fatalf("apply after create: %s", r)
	}
	if out := h.ok("create", "deployment", "api", "--image=example/api:1", "--replicas=2", "--port=8080"); out != "deployment.apps/api created\n" {
		t.Fatalf("create deployment: %q", out)
	}
	var d api.Deployment
	h.getObj(resDeploy, "api", &d)
	if *d.Spec.Replicas != 2 || d.Spec.Selector.MatchLabels["app"] != "api" || d.Spec.Template.Spec.Containers[0].Name != "api" || d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort != 8080 {
		t.Fatalf("generated deployment %+v", d.Spec)
	}
	out := h.ok("create", "service", "nodeport", "api", "--tcp=80:8080", "--dry-run=client", "-o", "yaml")
	if !strings.Contains(out, "type: NodePort") || !strings.Contains(out, "targetPort: 8080") {
		t.Fatalf("dry-run yaml:\n%s", out)
	}
	if out := h.ok("create", "service", "clusterip", "api", "--tcp=80:8080"); out != "service/api created\n" {
		t.Fatalf("create service: %q", out)
	}
	ns := h.ns + "-x"
	if out := h.ok("create", "namespace", ns); out != "namespace/"+ns+" created\n" {
		t.Fatalf("create namespace: %q", out)
	}
	t.Cleanup(func() { _ = h.c.Delete(context.Background(), resNS, "", ns, client.DeleteOptions{}) })
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	h.kubelet()
	file := h.writeFile("svcs.yaml", twoServices)
	h.ok("apply", "-f", file)
	if out := h.ok("delete", "svc", "front"); out != "service \"front\" deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete: %q", out)
	}
	r := h.fails(1, `Error from server (NotFound): services "front" not found`, "delete", "svc", "front", "back")
	if r.stdout != "service \"back\" deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete with a missing name: %s", r)
	}
	if r := h.run("delete", "svc", "front", "--ignore-not-found"); r.code != 0 {
		t.Fatalf("--ignore-not-found: %s", r)
	}

	h.ok("apply", "-f", file)
	if out := h.ok("delete", "-f", file); out != "service \"front\" deleted from "+h.ns+" namespace\nservice \"back\" deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete -f: %q", out)
	}

	h.ok("apply", "-f", file)
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))
	if out := h.ok("delete", "svc", "-l", "app=front"); out != "service \"front\" deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete -l: %q", out)
	}
	if r := h.run("delete", "svc", "-l", "app=nothing"); r.code != 0 || r.stderr != "No resources found\n" {
		t.Fatalf("delete -l without match: %s", r)
	}
	h.fails(1, "resource(s) were provided, but no name was specified", "delete", "svc")

	// A deployment's pods go with it (garbage collector); delete waits
	// for the deployment itself.
	eventually(t, "web's pods", 10*time.Second, func() (bool, string) {
		var list api.PodList
		_ = h.c.List(context.Background(), resPods, h.ns, listAll, &list)
		return len(list.Items) == 2, ""
	})
	if out := h.ok("delete", "deployment.apps/web", "--cascade=foreground", "--timeout=20s"); out != "deployment.apps \"web\" deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete deployment: %q", out)
	}
	var list api.PodList
	_ = h.c.List(context.Background(), resPods, h.ns, listAll, &list)
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			t.Fatalf("pod %s survived a foreground delete of its deployment", p.Name)
		}
	}

	// A bound pod with a grace period waits for the agent (here the test
	// kubelet) to confirm; --force does not wait.
	h.ok("run", "one", "--image=busybox")
	eventually(t, "pod running", 10*time.Second, func() (bool, string) {
		var p api.Pod
		h.getObj(resPods, "one", &p)
		return p.Status.Phase == api.PodRunning, p.Status.Phase
	})
	if out := h.ok("delete", "pod", "one", "--timeout=20s"); out != "pod \"one\" deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete pod: %q", out)
	}
	if err := h.c.Get(context.Background(), resPods, h.ns, "one", &api.Pod{}); !client.IsNotFound(err) {
		t.Fatalf("pod still there after delete --wait: %v", err)
	}
	h.ok("run", "two", "--image=busybox")
	if r := h.run("delete", "pod", "two", "--force"); r.code != 0 || r.stdout != "pod \"two\" force deleted from "+h.ns+" namespace\n" {
		t.Fatalf("delete --force: %s", r)
	}
	// A cluster-scoped object names no namespace.
	h.ok("create", "namespace", h.ns+"-x")
	if out := h.ok("delete", "namespace", h.ns+"-x", "--wait=false"); out != "namespace \""+h.ns+"-x\" deleted\n" {
		t.Fatalf("delete namespace: %q", out)
	}
}
