package kubectlcompat

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wdg], categories: [gadgets]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

// TestCRDs: the real kubectl applies a CustomResourceDefinition and its
// objects, finds the resource by plural, short name and category and in
// api-resources, edits the objects (apply again, patch, label), and
// `kubectl delete crd` removes the resource and its objects. A
// kustomization holding a kind Skiff does not serve applies every other
// object (the CRD list kubectl's field validation reads is served).
func TestCRDs(t *testing.T) {
	ns := namespace(t, "crd")

	dir := writeFiles(t, t.TempDir(), map[string]string{"crd.yaml": widgetCRD})
	if out := kubectl(t, "apply", "-f", dir+"/crd.yaml"); !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created") {
		t.Fatalf("apply crd: %s", out)
	}
	t.Cleanup(func() { _, _, _ = kubectlErr(t, "delete", "crd", "widgets.example.com", "--ignore-not-found") })
	kubectl(t, "wait", "--for=condition=Established", "--timeout=10s", "crd/widgets.example.com")
	if out := kubectl(t, "get", "crd"); !strings.Contains(out, "widgets.example.com") {
		t.Errorf("get crd: %s", out)
	}

	// kubectl's discovery cache is per HOME; each kubectl here re-reads it
	// when a resource is unknown, as it does on any cluster.
	out := kubectl(t, "api-resources", "--api-group=example.com")
	if !strings.Contains(out, "widgets") || !strings.Contains(out, "wdg") || !strings.Contains(out, "example.com/v1") || !strings.Contains(out, "Widget") {
		t.Errorf("api-resources does not list widgets:\n%s", out)
	}
	if out := kubectl(t, "api-versions"); !strings.Contains(out, "example.com/v1") {
		t.Errorf("api-versions lacks example.com/v1:\n%s", out)
	}

	widgets := `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  labels: {tier: a}
spec: {size: 3}
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w2
spec: {size: 4}
`
	objs := writeFiles(t, t.TempDir(), map[string]string{"widgets.yaml": widgets})
	out = kubectl(t, "apply", "-n", ns, "-f", objs)
	for _, want := range []string{"widget.example.com/w1 created", "widget.example.com/w2 created"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply widgets: %q lacks %q", out, want)
		}
	}
	for _, typ := range []string{"widgets", "widget", "wdg", "widgets.example.com", "gadgets"} {
		out := kubectl(t, "get", "-n", ns, typ)
		if !strings.Contains(out, "w1") || !strings.Contains(out, "w2") || !strings.Contains(out, "NAME") {
			t.Errorf("kubectl get %s:\n%s", typ, out)
		}
	}
	// The definition's printer columns.
	if out := kubectl(t, "get", "-n", ns, "widgets"); !strings.Contains(out, "SIZE") || !strings.Contains(out, "AGE") ||
		len(strings.Fields(strings.Split(out, "\n")[1])) != 3 || strings.Fields(strings.Split(out, "\n")[1])[1] != "3" {
		t.Errorf("kubectl get widgets lacks the printer columns:\n%s", out)
	}
	if out := kubectl(t, "get", "-n", ns, "wdg", "-l", "tier=a", "-o", "name"); strings.TrimSpace(out) != "widget.example.com/w1" {
		t.Errorf("get -l tier=a: %q", out)
	}
	if out := kubectl(t, "get", "-n", ns, "wdg", "w2", "-o", "jsonpath={.spec.size} {.apiVersion} {.metadata.generation}"); out != "4 example.com/v1 1" {
		t.Errorf("get w2 jsonpath: %q", out)
	}

	// Apply again with a change (a client-side apply: a merge patch for a
	// custom resource), patch, label.
	changed := strings.Replace(strings.Replace(widgets, "size: 3", "size: 5", 1), "size: 4", "size: 4, color: red", 1)
	writeFiles(t, objs, map[string]string{"widgets.yaml": changed})
	out = kubectl(t, "apply", "-n", ns, "-f", objs)
	if !strings.Contains(out, "widget.example.com/w1 configured") {
		t.Errorf("apply again: %s", out)
	}
	if out := kubectl(t, "get", "-n", ns, "widget", "w1", "-o", "jsonpath={.spec.size} {.metadata.generation}"); out != "5 2" {
		t.Errorf("after apply: %q", out)
	}
	kubectl(t, "patch", "-n", ns, "widget", "w2", "--type=merge", "-p", `{"spec":{"size":9}}`)
	kubectl(t, "label", "-n", ns, "widget", "w2", "tier=b")
	if out := kubectl(t, "get", "-n", ns, "widget", "w2", "-o", "jsonpath={.spec.size} {.spec.color} {.metadata.labels.tier}"); out != "9 red b" {
		t.Errorf("after patch and label: %q", out)
	}
	// The scale subresource.
	if out := kubectl(t, "scale", "-n", ns, "widget", "w1", "--replicas=4"); !strings.Contains(out, "widget.example.com/w1 scaled") {
		t.Errorf("kubectl scale: %s", out)
	}
	if out := kubectl(t, "get", "-n", ns, "widget", "w1", "-o", "jsonpath={.spec.replicas} {.spec.size}"); out != "4 5" {
		t.Errorf("after kubectl scale: %q", out)
	}

	// Applying the definition again with a change configures it: a new
	// short name is served at once, the objects stay.
	writeFiles(t, dir, map[string]string{"crd.yaml": strings.Replace(widgetCRD, "shortNames: [wdg]", "shortNames: [wdg, wdgt]", 1)})
	if out := kubectl(t, "apply", "-f", dir+"/crd.yaml"); !strings.Contains(out, "widgets.example.com configured") {
		t.Errorf("apply of the changed crd: %s", out)
	}
	if out := kubectl(t, "get", "crd", "widgets.example.com", "-o", "jsonpath={.spec.names.shortNames} {.status.acceptedNames.shortNames} {.metadata.generation}"); out != `["wdg","wdgt"] ["wdg","wdgt"] 2` {
		t.Errorf("the changed crd: %q", out)
	}
	if spdyOnly() {
		// Debian's kubectl 1.20 does not rediscover when a name misses its
		// discovery cache (newer kubectl does): refresh it as its user
		// would, with api-resources (not cached by default).
		kubectl(t, "api-resources")
	}
	if out := kubectl(t, "get", "-n", ns, "wdgt", "-o", "name"); !strings.Contains(out, "widget.example.com/w1") {
		t.Errorf("get by the new short name: %q", out)
	}
	writeFiles(t, dir, map[string]string{"crd.yaml": widgetCRD})

	// delete crd removes the resource and its objects.
	if out := kubectl(t, "delete", "crd", "widgets.example.com"); !strings.Contains(out, `"widgets.example.com" deleted`) {
		t.Errorf("delete crd: %s", out)
	}
	// kubectl's discovery cache may still hold widgets: the list is then
	// the server's 404, as on any cluster.
	_, errOut, err := kubectlErr(t, "get", "-n", ns, "widgets")
	if err == nil || !(strings.Contains(errOut, `the server doesn't have a resource type "widgets"`) ||
		strings.Contains(errOut, "the server could not find the requested resource")) {
		t.Errorf("get widgets after delete crd: %v: %s", err, errOut)
	}
	if out := kubectl(t, "api-resources"); strings.Contains(out, "example.com") {
		t.Errorf("api-resources still lists example.com:\n%s", out)
	}
	_, err = env.cs.Discovery().RESTClient().Get().AbsPath("/apis/example.com/v1/namespaces/" + ns + "/widgets/w1").DoRaw(ctx(t))
	if !apierrors.IsNotFound(err) {
		t.Errorf("GET w1 after delete crd: %v", err)
	}
	// Created again, the definition has no objects left.
	kubectl(t, "apply", "-f", dir+"/crd.yaml")
	kubectl(t, "wait", "--for=condition=Established", "--timeout=10s", "crd/widgets.example.com")
	if out := kubectl(t, "get", "-n", ns, "widgets", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("objects of the deleted definition came back: %q", out)
	}

	// A definition the server refuses: 422 naming the field.
	bad := writeFiles(t, t.TempDir(), map[string]string{"bad.yaml": strings.Replace(strings.Replace(widgetCRD,
		"widgets.example.com", "gizmos.example.com", 1), "names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wdg], categories: [gadgets]}",
		"names: {kind: Gizmo, plural: gizmos}\n  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {url: \"https://x.example.com\"}}}", 1)})
	_, errOut, err = kubectlErr(t, "apply", "-f", bad+"/bad.yaml")
	if err == nil || !strings.Contains(errOut, "spec.conversion.strategy") || !strings.Contains(errOut, "is invalid") {
		t.Errorf("apply of a Webhook conversion: %v: %s", err, errOut)
	}

	// kustomize orders a ResourceQuota (a kind Skiff does not serve)
	// before a Deployment; the Deployment is applied.
	kdir := writeFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources:\n- quota.yaml\n- deploy.yaml\n",
		"quota.yaml": `apiVersion: v1
kind: ResourceQuota
metadata:
  name: pods
spec:
  hard: {pods: "10"}
`,
		"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: after-claim
spec:
  replicas: 0
  selector: {matchLabels: {app: after-claim}}
  template:
    metadata: {labels: {app: after-claim}}
    spec:
      containers: [{name: c, image: busybox}]
`,
	})
	out, errOut, err = kubectlErr(t, "apply", "-n", ns, "-k", kdir)
	if err == nil {
		t.Errorf("apply -k of a ResourceQuota succeeded: %s", out)
	}
	if strings.Contains(errOut, "failed to check CRD") {
		t.Errorf("apply -k stopped at the CRD check:\n%s", errOut)
	}
	if _, err := env.cs.AppsV1().Deployments(ns).Get(ctx(t), "after-claim", metav1.GetOptions{}); err != nil {
		t.Errorf("the Deployment after the unserved kind in apply -k: %v (stdout %q, stderr %q)", err, out, errOut)
	}
}
