package kubectl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

func TestLabelAndAnnotate(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("svcs.yaml", twoServices))
	if out := h.ok("label", "svc", "front", "env=prod", "owner=me"); out != "service/front labeled\n" {
		t.Fatalf("label: %q", out)
	}
	h.fails(1, "error: 'env' already has a value (prod), and --overwrite is false", "label", "svc", "front", "env=dev")
	if out := h.ok("label", "svc/front", "env=dev", "--overwrite"); out != "service/front labeled\n" {
		t.Fatalf("overwrite: %q", out)
	}
	if out := h.ok("label", "svc", "front", "env=dev"); out != "service/front not labeled\n" {
		t.Fatalf("no change: %q", out)
	}
	if out := h.ok("label", "svc", "front", "owner-"); out != "service/front unlabeled\n" {
		t.Fatalf("remove: %q", out)
	}
	var svc api.Service
	h.getObj(resSvc, "front", &svc)
	if svc.Labels["env"] != "dev" || svc.Labels["owner"] != "" || svc.Labels["app"] != "front" {
		t.Fatalf("labels %v", svc.Labels)
	}
	if out := h.ok("label", "svc", "-l", "app", "all=yes"); out != "service/back labeled\nservice/front labeled\n" {
		t.Fatalf("label -l: %q", out)
	}
	if out := h.ok("label", "svc", "back", "--list"); out != "all=yes\napp=back\n" {
		t.Fatalf("--list: %q", out)
	}
	h.fails(1, "Error from server (Conflict)", "label", "svc", "back", "x=1", "--resource-version=1")
	h.fails(1, `Error from server (NotFound): services "nope" not found`, "label", "svc", "nope", "a=b")
	h.fails(1, "at least one label update is required", "label", "svc", "front")

	if out := h.ok("annotate", "svc", "front", "note=hello world"); out != "service/front annotated\n" {
		t.Fatalf("annotate: %q", out)
	}
	h.getObj(resSvc, "front", &svc)
	if svc.Annotations["note"] != "hello world" {
		t.Fatalf("annotations %v", svc.Annotations)
	}
}

// editor writes a script that edits the file it is given with sed.
func editor(t *testing.T, sedExpr string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\nset -e\necho \"$1\" >> \"$(dirname \"$0\")/calls\"\nsed -i '" + sedExpr + "' \"$1\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func editorCalls(t *testing.T, script string) int {
	data, _ := os.ReadFile(filepath.Join(filepath.Dir(script), "calls"))
	return strings.Count(string(data), "\n")
}

func TestEdit(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))

	h.env["EDITOR"] = editor(t, "s/replicas: 2/replicas: 7/; s/image: nginx:1/image: nginx:9/")
	if out := h.ok("edit", "deploy/web"); out != "deployment.apps/web edited\n" {
		t.Fatalf("edit: %q", out)
	}
	var d api.Deployment
	h.getObj(resDeploy, "web", &d)
	if *d.Spec.Replicas != 7 || d.Spec.Template.Spec.Containers[0].Image != "nginx:9" || len(d.Spec.Template.Spec.Containers[0].Env) != 2 {
		t.Fatalf("after edit: %+v", d.Spec)
	}

	// KUBE_EDITOR wins, and an editor command with arguments runs through
	// the shell.
	h.env["KUBE_EDITOR"] = "sed -i s/replicas:\\ 7/replicas:\\ 3/"
	if out := h.ok("edit", "deployment", "web"); out != "deployment.apps/web edited\n" {
		t.Fatalf("edit with KUBE_EDITOR: %q", out)
	}
	h.getObj(resDeploy, "web", &d)
	if *d.Spec.Replicas != 3 {
		t.Fatalf("replicas %d", *d.Spec.Replicas)
	}
	delete(h.env, "KUBE_EDITOR")

	// No change: cancelled.
	h.env["EDITOR"] = "true"
	if out := h.ok("edit", "deploy/web"); out != "Edit cancelled, no changes made.\n" {
		t.Fatalf("unchanged edit: %q", out)
	}

	// An invalid change reopens the file with the error; the same content
	// saved again cancels the edit.
	script := editor(t, "s/replicas: 3/replicas: -1/")
	h.env["EDITOR"] = script
	r := h.fails(1, "error: Edit cancelled, no valid changes were saved.", "edit", "deploy/web")
	if n := editorCalls(t, script); n != 2 {
		t.Fatalf("editor ran %d times, want 2 (the reopen after the error): %s", n, r)
	}
	m := regexp.MustCompile(`A copy of your changes has been stored to "([^"]+)"`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no copy reported: %s", r)
	}
	saved, err := os.ReadFile(m[1])
	os.Remove(m[1])
	if err != nil || !strings.Contains(string(saved), "# deployments.apps \"web\" was not valid:\n# * spec.replicas: Invalid value: -1") || !strings.Contains(string(saved), "replicas: -1") {
		t.Fatalf("saved copy:\n%s (%v)", saved, err)
	}
	h.getObj(resDeploy, "web", &d)
	if *d.Spec.Replicas != 3 {
		t.Fatalf("an invalid edit changed the object: %d", *d.Spec.Replicas)
	}

	// An empty file cancels.
	h.env["EDITOR"] = editor(t, "d")
	if out := h.ok("edit", "deploy/web"); out != "Edit cancelled, no changes made.\n" {
		t.Fatalf("emptied edit: %q", out)
	}
	h.fails(1, `Error from server (NotFound): services "nope" not found`, "edit", "svc", "nope")
}

func TestDescribe(t *testing.T) {
	h := newHarness(t)
	h.kubelet()
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))
	h.ok("expose", "deploy/web", "--port=80", "--target-port=80")
	h.ok("rollout", "status", "deploy/web", "--timeout=30s")
	// The EndpointSlice controller's slice of the service, with both pods.
	var slice api.EndpointSlice
	var podIPs []string
	eventually(t, "the service's slice", 20*time.Second, func() (bool, string) {
		var list api.EndpointSliceList
		_ = h.c.List(context.Background(), resSlices, h.ns, client.ListOptions{LabelSelector: "kubernetes.io/service-name=web"}, &list)
		if len(list.Items) != 1 || len(list.Items[0].Endpoints) != 2 {
			return false, fmt.Sprint(list.Items)
		}
		slice = list.Items[0]
		podIPs = []string{slice.Endpoints[0].Addresses[0], slice.Endpoints[1].Addresses[0]}
		return true, ""
	})

	out := h.ok("describe", "svc", "web")
	for _, want := range []string{
		"Name:                     web\n",
		"Namespace:                " + h.ns + "\n",
		"Labels:                   app=web\n                          team=a\n",
		"Selector:                 app=web\n",
		"Type:                     ClusterIP\n",
		"Port:                     <unset>  80/TCP\n",
		"TargetPort:               80/TCP\n",
		"Endpoints:                " + podIPs[0] + ":80," + podIPs[1] + ":80\n",
		"Session Affinity:         None\n",
		"Events:                   <none>\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe svc lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^IP:\s+10\.96\.\d+\.\d+$`).MatchString(out) {
		t.Fatalf("describe svc has no IP:\n%s", out)
	}

	out = h.ok("describe", "deploy/web")
	for _, want := range []string{"Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable",
		"RollingUpdateStrategy:  25% max unavailable, 25% max surge", "   web:\n    Image:", "nginx:1",
		"Available      True    MinimumReplicasAvailable", "NewReplicaSet:   web-", "(2/2 replicas created)",
		"ScalingReplicaSet", "deployment-controller"} {
		if !strings.Contains(out, want) {
			t.Fatalf("describe deploy lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "last-applied-configuration") || strings.Contains(out, "revision-history") {
		t.Fatalf("describe shows hidden annotations:\n%s", out)
	}

	out = h.ok("describe", "pods", "-l", "app=web")
	for _, re := range []string{`(?m)^Name:\s+web-`, `(?m)^Node:\s+node-1/192\.168\.1\.10$`, `(?m)^Controlled By:\s+ReplicaSet/web-[a-z0-9]+$`,
		`(?m)^Status:\s+Running$`, `(?m)^  Ready\s+True $`, `(?m)^    Ready:\s+True$`, `(?m)^  Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned`} {
		if n := len(regexp.MustCompile(re).FindAllString(out, -1)); n != 2 {
			t.Fatalf("describe pods: %d matches of %s, want 2:\n%s", n, re, out)
		}
	}
	// a name prefix
	if out := h.ok("describe", "pod", "web-"); strings.Count(out, "\nContainers:\n") != 2 {
		t.Fatalf("describe by prefix:\n%s", out)
	}

	out = h.ok("describe", "endpointslices", slice.Name)
	if !strings.Contains(out, "Ports:\n  Name     Port  Protocol\n  ----     ----  --------\n  <unset>  80    TCP\n") {
		t.Fatalf("describe slice ports:\n%s", out)
	}
	for _, re := range []string{`(?m)^AddressType:\s+IPv4$`, `(?m)^  - Addresses:\s+` + regexp.QuoteMeta(podIPs[0]) + `$`,
		`(?m)^      Ready:\s+true$`, `(?m)^    NodeName:\s+node-1$`, `(?m)^    TargetRef:\s+Pod/web-`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Fatalf("describe slice lacks %s:\n%s", re, out)
		}
	}

	out = h.ok("describe", "node", nodeName)
	for _, re := range []string{`(?m)^Name:\s+node-1$`, `(?m)^  Ready\s+True\s`, `(?m)^  InternalIP:\s+192\.168\.1\.10$`,
		`(?m)^PodCIDR:\s+10\.244\.1\.0/24$`, `(?m)^  Kubelet Version:\s+v1\.31\.0-skiff$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Fatalf("describe node lacks %s:\n%s", re, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  ` + h.ns + `\s+web-\S+\s+\S+$`).MatchString(out) {
		t.Fatalf("describe node does not list the pods:\n%s", out)
	}
	out = h.ok("describe", "ns", h.ns)
	if !strings.Contains(out, "Status:       Active") {
		t.Fatalf("describe ns:\n%s", out)
	}
	out = h.ok("describe", "servicecidrs", "kubernetes")
	if !strings.Contains(out, "Spec:\n  Cidrs:\n    10.96.0.0/16\n") {
		t.Fatalf("generic describe:\n%s", out)
	}
	h.fails(1, `Error from server (NotFound): services "zzz" not found`, "describe", "svc", "zzz")
}

func TestKubeconfigResolution(t *testing.T) {
	h := newHarness(t)
	h.ok("create", "-f", h.writeFile("svcs.yaml", twoServices))

	// --kubeconfig beats $KUBECONFIG; its context namespace is used.
	h.env["KUBECONFIG"] = "/nonexistent/kubeconfig"
	if out := h.ok("get", "svc", "front", "-o", "name", "--kubeconfig", h.kubeconfig); out != "service/front\n" {
		t.Fatalf("--kubeconfig: %q", out)
	}
	// $KUBECONFIG as a list: the first file that exists.
	h.env["KUBECONFIG"] = "/nonexistent/a" + string(os.PathListSeparator) + h.kubeconfig
	if out := h.ok("get", "svc", "front", "-o", "name"); out != "service/front\n" {
		t.Fatalf("$KUBECONFIG list: %q", out)
	}
	// <data-dir>/admin.kubeconfig when neither is set: context namespace
	// "default", -n picks ours.
	delete(h.env, "KUBECONFIG")
	if out := h.ok("get", "svc", "kubernetes", "-o", "name", "--data-dir", shared.dataDir); out != "service/kubernetes\n" {
		t.Fatalf("--data-dir: %q", out)
	}
	if out := h.ok("get", "svc", "front", "-o", "name", "--data-dir", shared.dataDir, "-n", h.ns); out != "service/front\n" {
		t.Fatalf("--data-dir -n: %q", out)
	}
	empty := t.TempDir()
	h.fails(1, "error: no kubeconfig at "+filepath.Join(empty, "admin.kubeconfig"), "get", "svc", "--data-dir", empty)

	// A server that is not there.
	bad := filepath.Join(t.TempDir(), "kc")
	data, _ := os.ReadFile(h.kubeconfig)
	re := regexp.MustCompile(`server: https://127\.0\.0\.1:\d+`)
	if err := os.WriteFile(bad, re.ReplaceAll(data, []byte("server: https://127.0.0.1:1")), 0o600); err != nil {
		t.Fatal(err)
	}
	h.fails(1, "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?", "get", "svc", "--kubeconfig", bad)

	// A wrong token.
	tok := regexp.MustCompile(`token: \S+`).ReplaceAll(data, []byte("token: wrong"))
	if err := os.WriteFile(bad, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	h.fails(1, "error: You must be logged in to the server", "get", "svc", "--kubeconfig", bad)
}

// The connection flags may come before the verb, as kubectl allows; so
// may a verb's own flags that take a value (a bool flag such as -A may
// not, in kubectl either: it would take the verb for its value).
func TestGlobalFlagsBeforeTheVerb(t *testing.T) {
	h := newHarness(t)
	h.ok("create", "-f", h.writeFile("svcs.yaml", twoServices))
	delete(h.env, "KUBECONFIG")
	for _, args := range [][]string{
		{"--kubeconfig", h.kubeconfig, "get", "svc", "front", "-o", "name"},
		{"--kubeconfig=" + h.kubeconfig, "get", "svc", "front", "-o", "name"},
		{"--data-dir", shared.dataDir, "-n", h.ns, "get", "svc", "front", "-o", "name"},
		{"-n", h.ns, "--data-dir=" + shared.dataDir, "get", "svc", "front", "-o", "name"},
		{"--namespace=" + h.ns, "--data-dir", shared.dataDir, "-o", "name", "get", "svc", "front"},
		{"-n" + h.ns, "--data-dir", shared.dataDir, "get", "-o", "name", "svc", "front"},
	} {
		if out := h.ok(args...); out != "service/front\n" {
			t.Errorf("skiff %s: %q", strings.Join(args, " "), out)
		}
	}
	// kube-system through -n before the verb.
	if out := h.ok("--data-dir", shared.dataDir, "-n", "kube-system", "get", "svc", "-o", "name"); !strings.Contains(out, "service/kube-dns") && out != "" {
		t.Errorf("-n kube-system get svc: %q", out)
	}
	h.fails(1, `Error from server (NotFound): services "front" not found`, "--data-dir", shared.dataDir, "-n", "kube-system", "get", "svc", "front")
}

func TestVersionAndAPIResources(t *testing.T) {
	h := newHarness(t)
	if out := h.ok("version"); out != "Client Version: v1.31.0-skiff\nServer Version: v1.31.0-skiff\n" {
		t.Fatalf("version: %q", out)
	}
	if out := h.ok("version", "--client"); out != "Client Version: v1.31.0-skiff\n" {
		t.Fatalf("version --client: %q", out)
	}
	m := mustJSON(t, h.ok("version", "-o", "json"))
	if m["serverVersion"].(map[string]any)["gitVersion"] != "v1.31.0-skiff" {
		t.Fatalf("version json %v", m)
	}
	delete(h.env, "KUBECONFIG")
	if out := h.ok("version", "--data-dir", t.TempDir()); out != "Client Version: v1.31.0-skiff\n" {
		t.Fatalf("version without a server: %q", out)
	}

	rows := checkColumns(t, h.ok("api-resources"), "NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")
	found := map[string]string{}
	for _, r := range rows {
		found[r[0]] = strings.Join(r, " ")
	}
	for name, want := range map[string]string{
		"services":       "services svc v1 true Service",
		"deployments":    "deployments deploy apps/v1 true Deployment",
		"endpointslices": "endpointslices  discovery.k8s.io/v1 true EndpointSlice",
		"nodes":          "nodes no v1 false Node",
	} {
		if found[name] != want {
			t.Errorf("api-resources %s = %q, want %q", name, found[name], want)
		}
	}
	if out := h.ok("api-resources", "--namespaced=false", "-o", "name"); !strings.Contains(out, "nodes\n") || strings.Contains(out, "pods") {
		t.Fatalf("api-resources -o name: %q", out)
	}
}

// TestCtrlC: a cancelled command (SIGINT in main) ends without an error
// of its own.
func TestCancelledRolloutStatus(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("web.yaml", webV1))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := h.start(ctx, "", &out, &errOut, "rollout", "status", "deploy/web")
	eventually(t, "a status line", 10*time.Second, func() (bool, string) { return out.String() != "", "" })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("rollout status did not end with its context")
	}
	_ = h.c.Delete(context.Background(), resDeploy, h.ns, "web", client.DeleteOptions{})
}
