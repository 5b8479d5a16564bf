package kubectlcompat

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCRDsAreNotServed: until Skiff serves CustomResourceDefinitions,
// kubectl sees an API server that has none and cannot make one:
// discovery without the group, a 404 NotFound Status at its paths but
// the collection, which is an empty CustomResourceDefinitionList (what
// kubectl's field validation lists; server/crdlist.go says why), `get
// crd` an unknown type, and an apply of a directory holding a CRD (and
// one of its objects) that applies every other object and fails only
// those two. A kustomization holding a kind Skiff does not serve applies
// every other object too: before the list was served, kubectl stopped
// the whole `apply -k` at that kind with "failed to check CRD".
func TestCRDsAreNotServed(t *testing.T) {
	ns := namespace(t, "crd-unserved")

	for _, out := range []string{kubectl(t, "api-versions"), kubectl(t, "api-resources")} {
		if strings.Contains(out, "apiextensions.k8s.io") {
			t.Errorf("discovery lists apiextensions.k8s.io:\n%s", out)
		}
	}
	groups, err := env.cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "apiextensions.k8s.io" {
			t.Errorf("/apis lists %s", g.Name)
		}
	}

	for _, path := range []string{
		"/apis/apiextensions.k8s.io",
		"/apis/apiextensions.k8s.io/v1",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
		"/apis/example.com/v1/namespaces/" + ns + "/widgets",
	} {
		err := env.cs.Discovery().RESTClient().Get().AbsPath(path).Do(ctx(t)).Error()
		var se *apierrors.StatusError
		if !apierrors.IsNotFound(err) || !asStatus(err, &se) || se.ErrStatus.Code != 404 || se.ErrStatus.Status != metav1.StatusFailure ||
			se.ErrStatus.Message != "the server could not find the requested resource" {
			t.Errorf("GET %s: %v, want a 404 NotFound Status", path, err)
		}
		_, errOut, err := kubectlErr(t, "get", "--raw", path)
		if err == nil || !strings.Contains(errOut, "(NotFound)") {
			t.Errorf("kubectl get --raw %s: %v: %s", path, err, errOut)
		}
	}

	raw, err := env.cs.Discovery().RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").DoRaw(ctx(t))
	if err != nil || !strings.Contains(string(raw), `"kind":"CustomResourceDefinitionList"`) || !strings.Contains(string(raw), `"items":[]`) {
		t.Errorf("GET the CRD collection: %v %s, want an empty CustomResourceDefinitionList", err, raw)
	}

	for typ, want := range map[string]string{
		"crd":                       `the server doesn't have a resource type "crd"`,
		"customresourcedefinitions": `the server doesn't have a resource type "customresourcedefinitions"`,
		// Newer kubectl adds ` in group "apiextensions.k8s.io"`.
		"customresourcedefinitions.apiextensions.k8s.io": `the server doesn't have a resource type "customresourcedefinitions`,
	} {
		_, errOut, err := kubectlErr(t, "get", typ)
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("kubectl get %s: %v: %s", typ, err, errOut)
		}
	}

	dir := writeFiles(t, t.TempDir(), map[string]string{
		"00-crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
		"10-widget.yaml": `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec: {size: 3}
`,
		"20-config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
data: {a: b}
---
apiVersion: v1
kind: Service
metadata:
  name: plain
spec:
  ports: [{port: 80}]
`,
	})
	out, errOut, err := kubectlErr(t, "apply", "-n", ns, "-f", dir)
	if err == nil {
		t.Errorf("apply of a CRD succeeded: %s", out)
	}
	for _, want := range []string{"configmap/plain created", "service/plain created"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply -f dir did not apply the other objects: stdout %q, stderr %q", out, errOut)
		}
	}
	for _, want := range []string{
		`no matches for kind "CustomResourceDefinition" in version "apiextensions.k8s.io/v1"`,
		`no matches for kind "Widget" in version "example.com/v1"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("apply -f dir: stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := env.cs.CoreV1().ConfigMaps(ns).Get(ctx(t), "plain", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap next to the CRD: %v", err)
	}

	// kustomize orders a PersistentVolumeClaim before a Deployment.
	kdir := writeFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources:\n- claim.yaml\n- deploy.yaml\n",
		"claim.yaml": `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
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
		t.Errorf("apply -k of a PersistentVolumeClaim succeeded: %s", out)
	}
	if strings.Contains(errOut, "failed to check CRD") {
		t.Errorf("apply -k stopped at the CRD check:\n%s", errOut)
	}
	if _, err := env.cs.AppsV1().Deployments(ns).Get(ctx(t), "after-claim", metav1.GetOptions{}); err != nil {
		t.Errorf("the Deployment after the unserved kind in apply -k: %v (stdout %q, stderr %q)", err, out, errOut)
	}
}

func asStatus(err error, se **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	if ok {
		*se = s
	}
	return ok
}
