package apiserver

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestCRUD(t *testing.T) {
	e := newEnv(t)
	// Create ignores client-sent server fields.
	r := e.must(201, "POST", widgetsPath, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"mine","generation":7,"creationTimestamp":"2001-01-01T00:00:00Z","labels":{"a":"b"}},"spec":{"size":1},"status":{"phase":"Made"}}`)
	var w widget
	r.into(t, &w)
	if w.UID == "" || w.UID == "mine" || len(w.UID) != 36 || w.UID[14] != '4' {
		t.Errorf("uid %q is not a server-set v4 UUID", w.UID)
	}
	if !w.CreationTimestamp.Equal(testNow) {
		t.Errorf("creationTimestamp %v, want %v", w.CreationTimestamp, testNow)
	}
	if w.Generation != 1 {
		t.Errorf("generation %d, want 1", w.Generation)
	}
	if w.Spec.Color != "blue" {
		t.Errorf("defaulting did not run: %+v", w.Spec)
	}
	rv1, err := strconv.ParseInt(w.ResourceVersion, 10, 64)
	if err != nil || rv1 <= 0 {
		t.Fatalf("resourceVersion %q", w.ResourceVersion)
	}
	if storeRev, _ := e.store.Revision(t.Context()); storeRev != rv1 {
		t.Errorf("resourceVersion %d is not the store revision %d", rv1, storeRev)
	}

	// Get returns the stored bytes.
	g := e.must(200, "GET", widgetsPath+"/w", nil)
	if string(g.body) != string(r.body) {
		t.Errorf("get differs from create:\n%s\n%s", g.body, r.body)
	}

	// Update: spec change bumps generation; status in the body is ignored.
	w.Spec.Size = 5
	w.Status.Phase = "Hacked"
	var w2 widget
	e.must(200, "PUT", widgetsPath+"/w", w).into(t, &w2)
	if w2.Generation != 2 || w2.Spec.Size != 5 || w2.Status.Phase != "Made" {
		t.Errorf("after spec update: gen %d size %d phase %q", w2.Generation, w2.Spec.Size, w2.Status.Phase)
	}
	if w2.ResourceVersion == w.ResourceVersion || w2.UID != w.UID {
		t.Errorf("rv %s uid %s after update", w2.ResourceVersion, w2.UID)
	}
	// Label change: no generation bump.
	w2.Labels = map[string]string{"a": "c"}
	var w3 widget
	e.must(200, "PUT", widgetsPath+"/w", w2).into(t, &w3)
	if w3.Generation != 2 || w3.Labels["a"] != "c" {
		t.Errorf("after label update: gen %d labels %v", w3.Generation, w3.Labels)
	}
	// No-op update: same resourceVersion, no new revision.
	before, _ := e.store.Revision(t.Context())
	var w4 widget
	e.must(200, "PUT", widgetsPath+"/w", w3).into(t, &w4)
	after, _ := e.store.Revision(t.Context())
	if w4.ResourceVersion != w3.ResourceVersion || before != after {
		t.Errorf("no-op update wrote: rv %s -> %s, store %d -> %d", w3.ResourceVersion, w4.ResourceVersion, before, after)
	}
	// Unconditional update (no resourceVersion) works.
	e.must(200, "PUT", widgetsPath+"/w", `{"metadata":{"name":"w"},"spec":{"size":9}}`)
	// Update of a missing object is 404.
	e.must(404, "PUT", widgetsPath+"/nope", `{"metadata":{"name":"nope"}}`)

	// YAML create.
	e.must(201, "POST", widgetsPath, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: yam\nspec:\n  size: 3\n", "Content-Type: application/yaml")

	// List.
	var list struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []widget `json:"items"`
	}
	e.must(200, "GET", widgetsPath, nil).into(t, &list)
	if list.Kind != "WidgetList" || len(list.Items) != 2 || list.Items[0].Name != "w" || list.Items[1].Name != "yam" {
		t.Fatalf("list: %+v", list)
	}
	cur, _ := e.store.Revision(t.Context())
	if list.Metadata.ResourceVersion != strconv.FormatInt(cur, 10) {
		t.Errorf("list rv %s, store %d", list.Metadata.ResourceVersion, cur)
	}
	// All-namespaces list.
	e.must(200, "GET", "/apis/example.com/v1/widgets", nil).into(t, &list)
	if len(list.Items) != 2 {
		t.Errorf("all-namespace list has %d items", len(list.Items))
	}

	// Delete returns the object, then it is gone.
	var del widget
	e.must(200, "DELETE", widgetsPath+"/w", nil).into(t, &del)
	if del.Name != "w" || del.Spec.Size != 9 {
		t.Errorf("delete returned %+v", del)
	}
	e.must(404, "GET", widgetsPath+"/w", nil)
	e.must(404, "DELETE", widgetsPath+"/w", nil)
}

func TestClusterScoped(t *testing.T) {
	e := newEnv(t)
	// A namespace in the body of a cluster-scoped object is dropped.
	var ns namespace
	e.must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team","namespace":"x"}}`).into(t, &ns)
	if ns.Namespace != "" || ns.Status.Phase != "Active" || len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != "kubernetes" {
		t.Errorf("namespace %+v", ns)
	}
	e.must(200, "GET", "/api/v1/namespaces/team", nil)
	// Namespaced resources need the namespaced path to create.
	e.must(405, "POST", "/api/v1/pods", `{"metadata":{"name":"p"}}`)
	e.must(404, "GET", "/api/v1/pods/p", nil)
}

func TestGenerateName(t *testing.T) {
	e := newEnv(t)
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		var w widget
		e.must(201, "POST", widgetsPath, `{"metadata":{"generateName":"web-"}}`).into(t, &w)
		suffix, ok := strings.CutPrefix(w.Name, "web-")
		if !ok || len(suffix) != 5 || strings.Trim(suffix, "bcdfghjklmnpqrstvwxz2456789") != "" {
			t.Fatalf("generated name %q", w.Name)
		}
		if seen[w.Name] {
			t.Fatalf("duplicate generated name %q", w.Name)
		}
		seen[w.Name] = true
		if w.GenerateName != "web-" {
			t.Errorf("generateName not kept: %q", w.GenerateName)
		}
	}
}

func TestDryRun(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", widgetsPath+"?dryRun=All", `{"metadata":{"name":"dry"}}`)
	e.must(404, "GET", widgetsPath+"/dry", nil)
	e.createWidget("wet", nil, map[string]any{"size": 1})
	e.must(200, "DELETE", widgetsPath+"/wet?dryRun=All", nil)
	e.must(200, "GET", widgetsPath+"/wet", nil)
}

// TestDryRunUnknownValue: a dryRun other than All is 422 naming dryRun and
// writes nothing (it used to be a real write).
func TestDryRunUnknownValue(t *testing.T) {
	e := newEnv(t)
	e.createWidget("wet", nil, map[string]any{"size": 1})
	for _, c := range []struct{ method, path, body string }{
		{"POST", widgetsPath + "?dryRun=Bogus", `{"metadata":{"name":"dry"}}`},
		{"POST", widgetsPath + "?dryRun=all", `{"metadata":{"name":"dry"}}`},
		{"DELETE", widgetsPath + "/wet?dryRun=true", ""},
		{"DELETE", widgetsPath + "/wet", `{"dryRun":["Bogus"]}`},
		{"DELETE", widgetsPath + "?dryRun=Bogus", ""},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		st := e.must(422, c.method, c.path, body).status(t)
		if st.Reason != "Invalid" || !strings.Contains(st.Message, "dryRun") {
			t.Errorf("%s %s: %s %q", c.method, c.path, st.Reason, st.Message)
		}
	}
	e.must(404, "GET", widgetsPath+"/dry", nil)
	e.must(200, "GET", widgetsPath+"/wet", nil)
}

func TestStatusSubresource(t *testing.T) {
	e := newEnv(t)
	w := e.createWidget("s", nil, map[string]any{"size": 1})
	// PUT /status changes only status.
	w.Spec.Size = 99
	w.Labels = map[string]string{"sneaky": "yes"}
	w.Status = widgetStatus{Phase: "Running", Ready: true}
	var got widget
	e.must(200, "PUT", widgetsPath+"/s/status", w).into(t, &got)
	if got.Status.Phase != "Running" || !got.Status.Ready || got.Spec.Size != 1 || got.Labels["sneaky"] != "" || got.Generation != 1 {
		t.Errorf("after status PUT: %+v", got)
	}
	// Stale resourceVersion on /status conflicts.
	e.must(409, "PUT", widgetsPath+"/s/status", w)
	// PATCH /status.
	e.must(200, "PATCH", widgetsPath+"/s/status", `{"status":{"phase":"Done"},"spec":{"size":50}}`, "Content-Type: application/merge-patch+json").into(t, &got)
	if got.Status.Phase != "Done" || got.Spec.Size != 1 {
		t.Errorf("after status PATCH: %+v", got)
	}
	// GET /status is the whole object.
	e.must(200, "GET", widgetsPath+"/s/status", nil).into(t, &got)
	if got.Name != "s" || got.Status.Phase != "Done" {
		t.Errorf("GET status: %+v", got)
	}
	// Main-resource PATCH cannot change status.
	e.must(200, "PATCH", widgetsPath+"/s", `{"status":{"phase":"Nope"},"spec":{"size":2}}`, "Content-Type: application/merge-patch+json").into(t, &got)
	if got.Status.Phase != "Done" || got.Spec.Size != 2 || got.Generation != 2 {
		t.Errorf("main PATCH: %+v", got)
	}
}

func TestScaleSubresource(t *testing.T) {
	e := newEnv(t)
	path := "/apis/example.com/v1/namespaces/default/gizmos"
	e.must(201, "POST", path, `{"metadata":{"name":"g"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web","tier":"fe"},"matchExpressions":[{"key":"env","operator":"In","values":["prod","dev"]},{"key":"canary","operator":"DoesNotExist"}]}},"status":{"replicas":2}}`)
	var sc scale
	e.must(200, "GET", path+"/g/scale", nil).into(t, &sc)
	if sc.Kind != "Scale" || sc.APIVersion != "autoscaling/v1" || sc.Spec.Replicas != 3 || sc.Status.Replicas != 2 {
		t.Fatalf("scale %+v", sc)
	}
	// Requirements sorted by key: app, canary, env, tier.
	if want := "app=web,!canary,env in (dev,prod),tier=fe"; sc.Status.Selector != want {
		t.Errorf("selector %q, want %q", sc.Status.Selector, want)
	}
	sc.Spec.Replicas = 5
	var sc2 scale
	e.must(200, "PUT", path+"/g/scale", sc).into(t, &sc2)
	if sc2.Spec.Replicas != 5 || sc2.Metadata.ResourceVersion == sc.Metadata.ResourceVersion {
		t.Errorf("after PUT scale: %+v", sc2)
	}
	var g gizmo
	e.must(200, "GET", path+"/g", nil).into(t, &g)
	if *g.Spec.Replicas != 5 || g.Generation != 2 {
		t.Errorf("gizmo after scale: replicas %d gen %d", *g.Spec.Replicas, g.Generation)
	}
	// Stale scale conflicts.
	e.must(409, "PUT", path+"/g/scale", sc)
	// PATCH scale.
	var sc3 scale
	e.must(200, "PATCH", path+"/g/scale", `{"spec":{"replicas":0}}`, "Content-Type: application/merge-patch+json").into(t, &sc3)
	if sc3.Spec.Replicas != 0 || sc3.Status.Replicas != 2 {
		t.Errorf("after PATCH scale: %+v", sc3)
	}
	e.must(422, "PATCH", path+"/g/scale", `{"spec":{"replicas":-1}}`, "Content-Type: application/merge-patch+json")
	// Widgets have no scale.
	e.createWidget("w", nil, nil)
	e.must(404, "GET", widgetsPath+"/w/scale", nil)
}

func TestSelectorString(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", ``, ""},
		{"plain map", `{"b":"2","a":"1"}`, "a=1,b=2"},
		{"match labels", `{"matchLabels":{"tier":"fe","app":"web"}}`, "app=web,tier=fe"},
		{"expressions", `{"matchExpressions":[{"key":"x","operator":"NotIn","values":["b","a"]},{"key":"e","operator":"Exists"}]}`, "e,x notin (a,b)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := selectorString(json.RawMessage(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := selectorString(json.RawMessage(`{"matchExpressions":[{"key":"x","operator":"Near"}]}`)); err == nil {
		t.Fatal("bad operator accepted")
	}
}

const podsPath = "/api/v1/namespaces/default/pods"

func TestBinding(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", podsPath, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	bind := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p","annotations":{"sched":"yes"}},"target":{"apiVersion":"v1","kind":"Node","name":"node-1"}}`
	r := e.must(201, "POST", podsPath+"/p/binding", bind)
	if st := r.status(t); st.Status != "Success" || st.Code != 201 {
		t.Errorf("binding status %+v", st)
	}
	var p pod
	e.must(200, "GET", podsPath+"/p", nil).into(t, &p)
	if p.Spec.NodeName != "node-1" || p.Annotations["sched"] != "yes" {
		t.Errorf("pod after binding: %+v", p)
	}
	if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != "PodScheduled" || p.Status.Conditions[0].Status != "True" ||
		p.Status.Conditions[0].LastTransitionTime == nil || !p.Status.Conditions[0].LastTransitionTime.Equal(testNow) {
		t.Errorf("conditions %+v", p.Status.Conditions)
	}
	r = e.must(409, "POST", podsPath+"/p/binding", strings.Replace(bind, "node-1", "node-2", 1))
	if st := r.status(t); !strings.Contains(st.Message, `already assigned to node "node-1"`) {
		t.Errorf("message %q", st.Message)
	}
	e.must(404, "POST", podsPath+"/missing/binding", strings.Replace(bind, `"name":"p"`, `"name":"missing"`, 1))
	e.must(422, "POST", podsPath+"/p/binding", `{"target":{}}`)
	e.must(400, "POST", podsPath+"/p/binding", `{"metadata":{"name":"q"},"target":{"name":"n"}}`)
	e.must(405, "GET", podsPath+"/p/binding", nil)
}

func TestPatchTypes(t *testing.T) {
	e := newEnv(t)
	e.createWidget("p", map[string]string{"a": "1"}, map[string]any{"size": 1, "items": []any{map[string]any{"name": "x", "value": 1}}})
	cases := []struct {
		name  string
		ct    string
		patch string
		code  int
		check func(t *testing.T, w widget)
	}{
		{"merge", "application/merge-patch+json", `{"metadata":{"labels":{"b":"2"}},"spec":{"size":2}}`, 200, func(t *testing.T, w widget) {
			if w.Spec.Size != 2 || w.Labels["a"] != "1" || w.Labels["b"] != "2" {
				t.Errorf("%+v", w)
			}
		}},
		{"json", "application/json-patch+json", `[{"op":"replace","path":"/spec/size","value":3},{"op":"add","path":"/spec/items/-","value":{"name":"y"}}]`, 200, func(t *testing.T, w widget) {
			if w.Spec.Size != 3 || len(w.Spec.Items) != 2 || w.Spec.Items[1].Name != "y" {
				t.Errorf("%+v", w)
			}
		}},
		{"strategic falls back to merge", "application/strategic-merge-patch+json", `{"spec":{"color":"red"}}`, 200, func(t *testing.T, w widget) {
			if w.Spec.Color != "red" || w.Spec.Size != 3 {
				t.Errorf("%+v", w)
			}
		}},
		{"json patch test fails", "application/json-patch+json", `[{"op":"test","path":"/spec/size","value":100}]`, 422, nil},
		{"malformed json patch", "application/json-patch+json", `{"op":"x"}`, 400, nil},
		{"malformed merge patch", "application/merge-patch+json", `{"spec":`, 400, nil},
		{"unknown field via patch", "application/merge-patch+json", `{"spec":{"foo":1}}`, 400, nil},
		{"name change via patch", "application/merge-patch+json", `{"metadata":{"name":"q"}}`, 400, nil},
		{"stale rv in patch", "application/merge-patch+json", `{"metadata":{"resourceVersion":"1"}}`, 409, nil},
		{"invalid via patch", "application/merge-patch+json", `{"spec":{"size":-4}}`, 422, nil},
		{"patch with params", "application/merge-patch+json; charset=utf-8", `{"spec":{"size":4}}`, 200, func(t *testing.T, w widget) {
			if w.Spec.Size != 4 {
				t.Errorf("%+v", w)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			r := e.must(tc.code, "PATCH", widgetsPath+"/p", tc.patch, "Content-Type: "+tc.ct)
			if tc.check != nil {
				var w widget
				r.into(t, &w)
				tc.check(t, w)
			} else {
				r.status(t)
			}
		})
	}
	e.t = t
	e.must(404, "PATCH", widgetsPath+"/missing", `{}`, "Content-Type: application/merge-patch+json")
}

func TestCustomPatcher(t *testing.T) {
	var gotType string
	e := newEnv(t, func(c *Config) {
		c.Patcher = func(ctx context.Context, ct string, original, patch []byte) ([]byte, error) {
			gotType = ct
			return defaultPatcher(ctx, mediaMergePatch, original, patch)
		}
	})
	e.createWidget("p", nil, nil)
	e.must(200, "PATCH", widgetsPath+"/p", `{"spec":{"size":2}}`, "Content-Type: application/strategic-merge-patch+json")
	if gotType != "application/strategic-merge-patch+json" {
		t.Errorf("patcher got %q", gotType)
	}
}
