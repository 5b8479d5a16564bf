package apiserver

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

type oaDoc struct {
	Swagger     string                    `json:"swagger"`
	OpenAPI     string                    `json:"openapi"`
	Paths       map[string]map[string]any `json:"paths"`
	Definitions map[string]map[string]any `json:"definitions"`
	Components  struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

func (d oaDoc) defs() map[string]map[string]any {
	if d.Definitions != nil {
		return d.Definitions
	}
	return d.Components.Schemas
}

// prop follows a dotted property path through refs, allOf and array items.
func (d oaDoc) prop(t *testing.T, def string, path string) map[string]any {
	t.Helper()
	s := d.defs()[def]
	if s == nil {
		t.Fatalf("no definition %s", def)
	}
	for _, p := range strings.Split(path, ".") {
		s = d.resolve(t, s)
		if items, ok := s["items"].(map[string]any); ok && p == "[]" {
			s = items
			continue
		}
		props, _ := s["properties"].(map[string]any)
		next, ok := props[p].(map[string]any)
		if !ok {
			t.Fatalf("%s: no property %q in %v", def, p, s)
		}
		s = next
	}
	return s
}

func (d oaDoc) resolve(t *testing.T, s map[string]any) map[string]any {
	t.Helper()
	for {
		if ref, ok := s["$ref"].(string); ok {
			name := ref[strings.LastIndex(ref, "/")+1:]
			s = d.defs()[name]
			if s == nil {
				t.Fatalf("dangling $ref %s", ref)
			}
			continue
		}
		if all, ok := s["allOf"].([]any); ok && len(all) == 1 && s["properties"] == nil {
			s = all[0].(map[string]any)
			continue
		}
		return s
	}
}

func getDoc(t *testing.T, e *testEnv, path string) oaDoc {
	t.Helper()
	var d oaDoc
	e.must(200, "GET", path, nil, "Accept: application/json").into(t, &d)
	return d
}

// refs collects every $ref string in a document.
func refs(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "$ref" {
				out[val.(string)] = true
			}
			refs(val, out)
		}
	case []any:
		for _, val := range x {
			refs(val, out)
		}
	}
}

func checkRefs(t *testing.T, e *testEnv, path, prefix string) {
	t.Helper()
	var raw map[string]any
	e.must(200, "GET", path, nil).into(t, &raw)
	var d oaDoc
	e.must(200, "GET", path, nil).into(t, &d)
	all := map[string]bool{}
	refs(raw, all)
	if len(all) == 0 {
		t.Fatalf("%s has no refs", path)
	}
	for r := range all {
		if !strings.HasPrefix(r, prefix) || d.defs()[strings.TrimPrefix(r, prefix)] == nil {
			t.Errorf("%s: dangling $ref %q", path, r)
		}
	}
}

func hasGVK(s map[string]any, group, version, kind string) bool {
	list, _ := s["x-kubernetes-group-version-kind"].([]any)
	for _, g := range list {
		m := g.(map[string]any)
		if m["group"] == group && m["version"] == version && m["kind"] == kind {
			return true
		}
	}
	return false
}

func v3Path(info *api.ResourceInfo) string {
	if info.Group == "" {
		return "api/" + info.Version
	}
	return "apis/" + info.Group + "/" + info.Version
}

func TestOpenAPIV3(t *testing.T) {
	e := newEnv(t, realResources)
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	e.must(200, "GET", "/openapi/v3", nil).into(t, &idx)
	for _, want := range []string{"api/v1", "apis/apps/v1", "apis/discovery.k8s.io/v1", "apis/networking.k8s.io/v1", "apis/coordination.k8s.io/v1"} {
		if _, ok := idx.Paths[want]; !ok {
			t.Errorf("index lacks %s: %+v", want, idx.Paths)
		}
	}

	core := idx.Paths["api/v1"].ServerRelativeURL
	r := e.must(200, "GET", core, nil)
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("hashed URL Cache-Control %q", cc)
	}
	etag := r.header.Get("ETag")
	e.must(304, "GET", core, nil, "If-None-Match: "+etag)
	req := httptest.NewRequest("GET", "/openapi/v3/api/v1?hash=stale", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	e.s.Handler().ServeHTTP(rec, req)
	if rec.Code != 301 || rec.Header().Get("Location") != core {
		t.Errorf("stale hash: code %d, Location %q", rec.Code, rec.Header().Get("Location"))
	}
	e.must(404, "GET", "/openapi/v3/apis/example.com/v1", nil)

	for _, info := range api.Resources() {
		t.Run(info.Resource, func(t *testing.T) {
			path := "/openapi/v3/" + v3Path(info)
			d := getDoc(t, e, path)
			if d.OpenAPI != "3.0.0" {
				t.Errorf("openapi %q", d.OpenAPI)
			}
			pkg := "io.k8s.api." + k8sGroupPackage(info.Group) + "." + info.Version + "."
			def := d.defs()[pkg+info.Kind]
			if def == nil || !hasGVK(def, info.Group, info.Version, info.Kind) {
				t.Fatalf("no definition %s%s with its GVK", pkg, info.Kind)
			}
			if !hasGVK(d.defs()[pkg+info.ListKind], info.Group, info.Version, info.ListKind) {
				t.Errorf("no %s with its GVK", info.ListKind)
			}
			// What kubectl checks before it lets the server validate
			// fields, and before a client-side apply's strategic merge.
			collection := "/" + v3Path(info) + "/" + info.Resource
			if info.Namespaced {
				collection = "/" + v3Path(info) + "/namespaces/{namespace}/" + info.Resource
			}
			item := d.Paths[collection+"/{name}"]
			patch, ok := item["patch"].(map[string]any)
			if !ok {
				t.Fatalf("no PATCH on %s/{name}: %v", collection, d.Paths[collection+"/{name}"])
			}
			gvk := patch["x-kubernetes-group-version-kind"].(map[string]any)
			if gvk["kind"] != info.Kind || gvk["group"] != info.Group {
				t.Errorf("patch GVK %v", gvk)
			}
			found := false
			for _, p := range patch["parameters"].([]any) {
				m := p.(map[string]any)
				if m["name"] == "fieldValidation" && m["in"] == "query" {
					found = true
				}
			}
			if !found {
				t.Error("PATCH lacks the fieldValidation query parameter")
			}
			content := patch["requestBody"].(map[string]any)["content"].(map[string]any)
			if _, ok := content["application/strategic-merge-patch+json"]; !ok {
				t.Errorf("PATCH content types %v", content)
			}
			checkRefs(t, e, path, "#/components/schemas/")
		})
	}

	d := getDoc(t, e, "/openapi/v3/api/v1")
	ports := d.prop(t, "io.k8s.api.core.v1.Service", "spec.ports")
	if ports["type"] != "array" || ports["x-kubernetes-patch-merge-key"] != "port" || ports["x-kubernetes-patch-strategy"] != "merge" {
		t.Errorf("Service spec.ports %v", ports)
	}
	if tp := d.prop(t, "io.k8s.api.core.v1.Service", "spec.ports.[].targetPort"); d.resolve(t, tp)["format"] != "int-or-string" {
		t.Errorf("targetPort %v", tp)
	}
	if req := d.resolve(t, d.prop(t, "io.k8s.api.core.v1.Service", "spec.ports.[]"))["required"]; !strings.Contains(strings.Join(toStrings(req), ","), "port") {
		t.Errorf("ServicePort required %v", req)
	}
	cports := d.prop(t, "io.k8s.api.core.v1.Pod", "spec.containers.[].ports")
	if cports["x-kubernetes-patch-merge-key"] != "containerPort" {
		t.Errorf("container ports %v", cports)
	}
	if c := d.prop(t, "io.k8s.api.core.v1.Pod", "spec.containers"); c["x-kubernetes-patch-merge-key"] != "name" {
		t.Errorf("containers %v", c)
	}
	if env := d.prop(t, "io.k8s.api.core.v1.Pod", "spec.containers.[].env"); env["x-kubernetes-patch-merge-key"] != "name" {
		t.Errorf("env %v", env)
	}
	if ts := d.resolve(t, d.prop(t, "io.k8s.api.core.v1.Pod", "metadata.creationTimestamp")); ts["format"] != "date-time" {
		t.Errorf("creationTimestamp %v", ts)
	}
	if d.defs()["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
		t.Error("ObjectMeta is not an apimachinery definition")
	}

	apps := getDoc(t, e, "/openapi/v3/apis/apps/v1")
	if c := apps.prop(t, "io.k8s.api.apps.v1.Deployment", "spec.template.spec.containers"); c["x-kubernetes-patch-merge-key"] != "name" {
		t.Errorf("deployment containers %v", c)
	}
	if apps.defs()["io.k8s.api.core.v1.PodTemplateSpec"] == nil || apps.defs()["io.k8s.api.core.v1.PodSpec"] == nil {
		t.Error("PodTemplateSpec and PodSpec are not core definitions in apps/v1")
	}
	if !hasGVK(apps.defs()["io.k8s.api.autoscaling.v1.Scale"], "autoscaling", "v1", "Scale") {
		t.Error("apps/v1 lacks autoscaling/v1 Scale")
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}

func TestOpenAPIV2(t *testing.T) {
	e := newEnv(t, realResources)
	d := getDoc(t, e, "/openapi/v2")
	if d.Swagger != "2.0" {
		t.Errorf("swagger %q", d.Swagger)
	}
	for _, info := range api.Resources() {
		name := "io.k8s.api." + k8sGroupPackage(info.Group) + "." + info.Version + "." + info.Kind
		if !hasGVK(d.defs()[name], info.Group, info.Version, info.Kind) {
			t.Errorf("no %s with its GVK", name)
		}
	}
	if ports := d.prop(t, "io.k8s.api.core.v1.Service", "spec.ports"); ports["x-kubernetes-patch-merge-key"] != "port" {
		t.Errorf("spec.ports %v", ports)
	}
	checkRefs(t, e, "/openapi/v2", "#/definitions/")

	// client-go asks for protobuf (test/kubectl-compat decodes it with
	// gnostic); anything else without JSON gets 406.
	r := e.must(200, "GET", "/openapi/v2", nil, "Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	if ct := r.header.Get("Content-Type"); ct != mediaOpenAPIV2ProtobufReply || len(r.body) < 1000 || r.body[0] != 0x0a {
		t.Errorf("protobuf: Content-Type %q, %d bytes", ct, len(r.body))
	}
	r = e.do("GET", "/openapi/v2", nil, "Accept: application/x-protobuf")
	if r.code != 406 || r.status(t).Reason != api.StatusReasonNotAcceptable {
		t.Errorf("other protobuf: code %d %s", r.code, r.body)
	}
	e.must(200, "GET", "/openapi/v2", nil, "Accept: application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	if r := e.do("GET", "/openapi/v2", nil, "Authorization: Bearer wrong"); r.code != 401 {
		t.Errorf("unauthenticated: code %d", r.code)
	}
}

// TestPatchStrategiesOfFollowsPatchTable checks that the definitions' merge
// keys are apiserver/patch's table seen per Go type, and that a type whose
// one field the table merges differently at two paths is refused rather
// than described by whichever path came last.
func TestPatchStrategiesOfFollowsPatchTable(t *testing.T) {
	got, err := patchStrategiesOf(api.Resources())
	if err != nil {
		t.Fatalf("patchStrategiesOf(api.Resources()): %v", err)
	}
	for key, want := range map[string]patchStrategy{
		"ServiceSpec.ports":     {"merge", "port"},
		"Container.ports":       {"merge", "containerPort"},
		"ObjectMeta.finalizers": {"merge", ""},
		"PodSpec.volumes":       {"merge,retainKeys", "name"},
	} {
		if got[key] != want {
			t.Errorf("%s = %+v, want %+v", key, got[key], want)
		}
	}
	if ps, ok := got["PodSpec.tolerations"]; ok {
		t.Errorf("PodSpec.tolerations (atomic) has %+v", ps)
	}

	// spec.ports (by port) and spec.containers[].ports (by containerPort)
	// both reach PortsHolder.ports.
	conflict := &api.ResourceInfo{New: func() api.Object { return &conflictObject{} }}
	if _, err := patchStrategiesOf([]*api.ResourceInfo{conflict}); err == nil || !strings.Contains(err.Error(), "PortsHolder.ports") {
		t.Errorf("conflicting merge keys: err = %v, want one naming PortsHolder.ports", err)
	}
}

type PortsHolder struct {
	Ports []int32 `json:"ports"`
}

type conflictObject struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Spec           struct {
		PortsHolder `json:",inline"`
		Containers  []PortsHolder `json:"containers"`
	} `json:"spec"`
}
