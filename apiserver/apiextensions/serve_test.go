package apiextensions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

func TestCRDCreateSetsStatus(t *testing.T) {
	e := newEnv(t)
	var c CustomResourceDefinition
	e.must(201, "POST", crdPath, crdJSON).into(t, &c)
	if c.Spec.Names.Singular != "widget" || c.Spec.Names.ListKind != "WidgetList" || c.Spec.Conversion == nil || c.Spec.Conversion.Strategy != "None" {
		t.Errorf("defaults not filled: %+v", c.Spec)
	}
	conds := map[string]string{}
	for _, cd := range c.Status.Conditions {
		conds[cd.Type] = cd.Status
	}
	if conds[Established] != "True" || conds[NamesAccepted] != "True" {
		t.Errorf("conditions = %v", c.Status.Conditions)
	}
	if c.Status.AcceptedNames.Kind != "Widget" || c.Status.AcceptedNames.Plural != "widgets" {
		t.Errorf("acceptedNames = %+v", c.Status.AcceptedNames)
	}
	if !slices.Equal(c.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("storedVersions = %v", c.Status.StoredVersions)
	}
	if c.Generation != 1 || c.UID == "" || c.ResourceVersion == "" {
		t.Errorf("metadata = %+v", c.ObjectMeta)
	}
	// The main resource ignores status; a spec change bumps generation
	// and a new storage version is added to storedVersions.
	edited := strings.Replace(crdJSON, `"name":"v1beta1","served":true,"storage":false`, `"name":"v1beta1","served":true,"storage":true`, 1)
	edited = strings.Replace(edited, `"name":"v1","served":true,"storage":true`, `"name":"v1","served":true,"storage":false`, 1)
	edited = strings.Replace(edited, `"spec":{`, `"status":{"storedVersions":["bogus"]},"spec":{`, 1)
	var u CustomResourceDefinition
	e.must(200, "PUT", crdPath+"/widgets.example.com", edited).into(t, &u)
	if u.Generation != 2 || !slices.Equal(u.Status.StoredVersions, []string{"v1", "v1beta1"}) {
		t.Errorf("after update: generation %d, storedVersions %v", u.Generation, u.Status.StoredVersions)
	}
}

func TestCRDInvalidIs422NamingTheField(t *testing.T) {
	e := newEnv(t)
	cases := map[string]struct{ body, field string }{
		"webhook": {strings.Replace(crdJSON, `"scope":"Namespaced",`, `"scope":"Namespaced","conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"]}},`, 1), "spec.conversion.strategy"},
		"name":    {strings.Replace(crdJSON, `"name":"widgets.example.com"`, `"name":"gadgets.example.com"`, 1), "metadata.name"},
		"scope":   {strings.Replace(crdJSON, `"scope":"Namespaced"`, `"scope":"Everywhere"`, 1), "spec.scope"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st api.Status
			e.must(422, "POST", crdPath, tc.body).into(t, &st)
			if st.Reason != api.StatusReasonInvalid || st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field {
				t.Fatalf("status = %+v", st)
			}
		})
	}
	// A clash of names with another definition of the group.
	e.must(201, "POST", crdPath, crdJSON)
	clash := strings.NewReplacer(`"widgets.example.com"`, `"gizmos.example.com"`, `"plural":"widgets","kind":"Widget"`, `"plural":"gizmos","kind":"Gizmo"`).Replace(crdJSON)
	var st api.Status
	e.must(422, "POST", crdPath, clash).into(t, &st)
	if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "spec.names.shortNames[0]" {
		t.Fatalf("clash status = %+v", st)
	}
}

type discoveryList struct {
	GroupVersion string `json:"groupVersion"`
	Resources    []struct {
		Name       string   `json:"name"`
		Singular   string   `json:"singularName"`
		Namespaced bool     `json:"namespaced"`
		Kind       string   `json:"kind"`
		Verbs      []string `json:"verbs"`
		ShortNames []string `json:"shortNames"`
		Categories []string `json:"categories"`
	} `json:"resources"`
}

type groupList struct {
	Groups []struct {
		Name     string `json:"name"`
		Versions []struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"versions"`
		PreferredVersion struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"preferredVersion"`
	} `json:"groups"`
}

func TestCRDDiscovery(t *testing.T) {
	e := newEnv(t)
	hasGroup := func() (bool, string, []string) {
		var gl groupList
		e.must(200, "GET", "/apis", "").into(t, &gl)
		for _, g := range gl.Groups {
			if g.Name == "example.com" {
				var vs []string
				for _, v := range g.Versions {
					vs = append(vs, v.GroupVersion)
				}
				return true, g.PreferredVersion.GroupVersion, vs
			}
		}
		return false, "", nil
	}
	if ok, _, _ := hasGroup(); ok {
		t.Fatal("example.com served before its definition")
	}
	// The CRD resource itself is in discovery.
	var ext discoveryList
	e.must(200, "GET", "/apis/apiextensions.k8s.io/v1", "").into(t, &ext)
	if len(ext.Resources) == 0 || ext.Resources[0].Name != "customresourcedefinitions" || !slices.Contains(ext.Resources[0].ShortNames, "crd") {
		t.Fatalf("apiextensions discovery = %+v", ext)
	}

	e.must(201, "POST", crdPath, crdJSON)
	ok, pref, vs := hasGroup()
	if !ok || pref != "example.com/v1" || !slices.Equal(vs, []string{"example.com/v1", "example.com/v1beta1"}) {
		t.Fatalf("/apis: served %v, preferred %q, versions %v", ok, pref, vs)
	}
	e.must(200, "GET", "/apis/example.com", "")
	var dl discoveryList
	e.must(200, "GET", "/apis/example.com/v1", "").into(t, &dl)
	if len(dl.Resources) != 2 {
		t.Fatalf("/apis/example.com/v1 = %+v", dl)
	}
	w := dl.Resources[0]
	if w.Name != "widgets" || w.Kind != "Widget" || w.Singular != "widget" || !w.Namespaced ||
		!slices.Equal(w.ShortNames, []string{"wd"}) || !slices.Equal(w.Categories, []string{"all"}) ||
		!slices.Contains(w.Verbs, "watch") || !slices.Contains(w.Verbs, "deletecollection") {
		t.Errorf("widgets = %+v", w)
	}
	if dl.Resources[1].Name != "widgets/status" {
		t.Errorf("second resource = %+v", dl.Resources[1])
	}
	e.must(200, "GET", "/apis/example.com/v1beta1", "").into(t, &dl)
	if len(dl.Resources) != 1 {
		t.Errorf("v1beta1 has no status subresource: %+v", dl)
	}

	// An unserved version is not in discovery and its path is 404.
	unserved := strings.Replace(crdJSON, `"name":"v1beta1","served":true`, `"name":"v1beta1","served":false`, 1)
	var cur CustomResourceDefinition
	e.must(200, "GET", crdPath+"/widgets.example.com", "").into(t, &cur)
	unserved = strings.Replace(unserved, `"metadata":{"name":"widgets.example.com"}`, `"metadata":{"name":"widgets.example.com","resourceVersion":"`+cur.ResourceVersion+`"}`, 1)
	e.must(200, "PUT", crdPath+"/widgets.example.com", unserved)
	if _, _, vs := hasGroup(); !slices.Equal(vs, []string{"example.com/v1"}) {
		t.Errorf("versions after v1beta1 unserved = %v", vs)
	}
	e.must(404, "GET", "/apis/example.com/v1beta1", "")
	e.must(404, "GET", "/apis/example.com/v1beta1/namespaces/default/widgets", "")

	e.must(200, "DELETE", crdPath+"/widgets.example.com", "")
	if ok, _, _ := hasGroup(); ok {
		t.Error("example.com still served after its definition's deletion")
	}
	e.must(404, "GET", "/apis/example.com/v1", "")
	e.must(404, "GET", "/apis/example.com", "")
}

// TestCRDServedAfterRestart: a registry over a store that already holds
// definitions serves them once synced (as after a restart).
func TestCRDRegistrySync(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", crdPath, crdJSON)
	e.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"a"}}`)
	// Another server over the same store, synced by its registry alone.
	e2 := newEnvOver(t, e.st)
	if err := e2.reg.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2.must(200, "GET", "/apis/example.com/v1/namespaces/default/widgets/a", "")
}

type widget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		ResourceVersion   string            `json:"resourceVersion"`
		Generation        int64             `json:"generation"`
		CreationTimestamp string            `json:"creationTimestamp"`
		Labels            map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec   map[string]any `json:"spec"`
	Status map[string]any `json:"status"`
}

type widgetList struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Items      []widget `json:"items"`
}

func TestCustomObjectVerbs(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", crdPath, crdJSON)
	const v1 = "/apis/example.com/v1/namespaces/default/widgets"
	const beta = "/apis/example.com/v1beta1/namespaces/default/widgets"

	var a widget
	e.must(201, "POST", v1, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"color":"red"}},"spec":{"size":3,"big":12345678901234567},"status":{"phase":"ignored"}}`).into(t, &a)
	if a.Metadata.UID == "" || a.Metadata.Generation != 1 || a.Metadata.CreationTimestamp == "" || a.Metadata.ResourceVersion == "" || a.Metadata.Namespace != "default" {
		t.Fatalf("created metadata = %+v", a.Metadata)
	}
	if a.Status != nil {
		t.Errorf("status set on create through the main resource: %v", a.Status)
	}
	// Integers keep their precision.
	r := e.must(200, "GET", v1+"/a", "")
	if !strings.Contains(string(r.body), `"big":12345678901234567`) {
		t.Errorf("stored object lost precision: %s", r.body)
	}
	e.must(201, "POST", beta, `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"b","labels":{"color":"blue"}},"spec":{"size":1}}`)
	e.must(400, "POST", v1, `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"c"}}`)
	e.must(409, "POST", v1, `{"metadata":{"name":"a"}}`)
	e.must(422, "POST", v1, `{"metadata":{"name":"Not_A_Name"}}`)
	e.must(404, "POST", "/apis/example.com/v1/namespaces/absent/widgets", `{"metadata":{"name":"x"}}`)

	// Each version serves every object with its own apiVersion.
	var got widget
	e.must(200, "GET", beta+"/a", "").into(t, &got)
	if got.APIVersion != "example.com/v1beta1" || got.Kind != "Widget" {
		t.Errorf("a through v1beta1: %s %s", got.APIVersion, got.Kind)
	}
	e.must(200, "GET", v1+"/b", "").into(t, &got)
	if got.APIVersion != "example.com/v1" {
		t.Errorf("b through v1: %s", got.APIVersion)
	}
	var l widgetList
	e.must(200, "GET", beta, "").into(t, &l)
	if l.Kind != "WidgetList" || l.APIVersion != "example.com/v1beta1" || len(l.Items) != 2 {
		t.Fatalf("list = %+v", l)
	}
	for _, it := range l.Items {
		if it.APIVersion != "example.com/v1beta1" {
			t.Errorf("item %s apiVersion %s", it.Metadata.Name, it.APIVersion)
		}
	}
	// Across namespaces, selectors.
	e.must(200, "GET", "/apis/example.com/v1/widgets?labelSelector=color%3Dred", "").into(t, &l)
	if len(l.Items) != 1 || l.Items[0].Metadata.Name != "a" {
		t.Errorf("labelSelector: %+v", l.Items)
	}
	e.must(200, "GET", v1+"?fieldSelector=metadata.name%3Db", "").into(t, &l)
	if len(l.Items) != 1 || l.Items[0].Metadata.Name != "b" {
		t.Errorf("fieldSelector name: %+v", l.Items)
	}
	e.must(200, "GET", "/apis/example.com/v1/widgets?fieldSelector=metadata.namespace%3Dother", "").into(t, &l)
	if len(l.Items) != 0 {
		t.Errorf("fieldSelector namespace: %+v", l.Items)
	}
	e.must(400, "GET", v1+"?fieldSelector=spec.size%3D3", "")

	// Update: a metadata change keeps generation, a spec change bumps it,
	// status on the main resource is ignored.
	var u widget
	e.must(200, "PUT", v1+"/a", `{"metadata":{"name":"a","labels":{"color":"green"}},"spec":{"size":3,"big":12345678901234567}}`).into(t, &u)
	if u.Metadata.Generation != 1 || u.Metadata.Labels["color"] != "green" || u.Metadata.UID != a.Metadata.UID {
		t.Errorf("label update: %+v", u.Metadata)
	}
	e.must(200, "PUT", v1+"/a", `{"metadata":{"name":"a","labels":{"color":"green"}},"spec":{"size":4},"status":{"phase":"x"}}`).into(t, &u)
	if u.Metadata.Generation != 2 || u.Status != nil {
		t.Errorf("spec update: generation %d status %v", u.Metadata.Generation, u.Status)
	}
	e.must(409, "PUT", v1+"/a", `{"metadata":{"name":"a","resourceVersion":"1"},"spec":{}}`)
	// /status changes status only.
	e.must(200, "PUT", v1+"/a/status", `{"metadata":{"name":"a"},"spec":{"size":99},"status":{"phase":"Ready"}}`).into(t, &u)
	if u.Status["phase"] != "Ready" || u.Spec["size"] != float64(4) || u.Metadata.Generation != 2 {
		t.Errorf("status update: %+v %+v gen %d", u.Spec, u.Status, u.Metadata.Generation)
	}
	e.must(404, "PUT", beta+"/a/status", `{"metadata":{"name":"a"}}`)

	// Patches, through the version objects are not stored in, too.
	e.mustCT(200, "PATCH", beta+"/a", "application/merge-patch+json", `{"spec":{"color":"blue"}}`).into(t, &u)
	if u.APIVersion != "example.com/v1beta1" || u.Spec["color"] != "blue" || u.Spec["size"] != float64(4) || u.Metadata.Generation != 3 {
		t.Errorf("merge patch: %+v gen %d", u, u.Metadata.Generation)
	}
	e.mustCT(200, "PATCH", v1+"/a", "application/json-patch+json", `[{"op":"replace","path":"/spec/size","value":5},{"op":"add","path":"/metadata/labels/x","value":"y"}]`).into(t, &u)
	if u.Spec["size"] != float64(5) || u.Metadata.Labels["x"] != "y" {
		t.Errorf("json patch: %+v", u)
	}
	e.mustCT(200, "PATCH", v1+"/a/status", "application/merge-patch+json", `{"status":{"phase":"Done"},"spec":{"size":0}}`).into(t, &u)
	if u.Status["phase"] != "Done" || u.Spec["size"] != float64(5) {
		t.Errorf("status patch: %+v", u)
	}
	e.mustCT(422, "PATCH", v1+"/a", "application/json-patch+json", `[{"op":"test","path":"/spec/size","value":6}]`)
	// Custom resources have no patch strategies: 415, as upstream.
	e.mustCT(415, "PATCH", v1+"/a", "application/strategic-merge-patch+json", `{"spec":{"size":7}}`)

	// Delete and deletecollection.
	e.must(200, "DELETE", v1+"/a", "")
	e.must(404, "GET", v1+"/a", "")
	e.must(404, "DELETE", v1+"/a", "")
	e.must(201, "POST", v1, `{"metadata":{"name":"c"}}`)
	e.must(200, "DELETE", beta+"?labelSelector=color%3Dblue", "")
	e.must(200, "GET", v1, "").into(t, &l)
	if len(l.Items) != 1 || l.Items[0].Metadata.Name != "c" {
		t.Errorf("after deletecollection: %+v", l.Items)
	}
}

func TestCustomObjectWatch(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", crdPath, crdJSON)
	const beta = "/apis/example.com/v1beta1/namespaces/default/widgets"
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	e.must(200, "GET", beta, "").into(t, &l)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+beta+"?watch=1&labelSelector=w%3D1&resourceVersion="+l.Metadata.ResourceVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	e.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"skip"}}`)
	e.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"w","labels":{"w":"1"}}}`)
	e.must(200, "DELETE", "/apis/example.com/v1/namespaces/default/widgets/w", "")
	sc := bufio.NewScanner(res.Body)
	var events []string
	for len(events) < 2 && sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Object widget `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %s: %v", sc.Bytes(), err)
		}
		if ev.Object.APIVersion != "example.com/v1beta1" {
			t.Errorf("event object apiVersion %s", ev.Object.APIVersion)
		}
		events = append(events, ev.Type+" "+ev.Object.Metadata.Name)
	}
	if !slices.Equal(events, []string{"ADDED w", "DELETED w"}) {
		t.Fatalf("events = %v (%v)", events, sc.Err())
	}
}

func TestCRDDeletionDeletesObjects(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", crdPath, crdJSON)
	cluster := strings.NewReplacer(`"widgets.example.com"`, `"gadgets.example.com"`, `"plural":"widgets","kind":"Widget","shortNames":["wd"]`, `"plural":"gadgets","kind":"Gadget"`,
		`"scope":"Namespaced"`, `"scope":"Cluster"`).Replace(crdJSON)
	e.must(201, "POST", crdPath, cluster)
	e.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"a"}}`)
	e.must(201, "POST", "/apis/example.com/v1/gadgets", `{"metadata":{"name":"g"}}`)
	e.must(200, "DELETE", crdPath+"/widgets.example.com", "")
	e.must(404, "GET", "/apis/example.com/v1/namespaces/default/widgets/a", "")
	e.must(200, "GET", "/apis/example.com/v1/gadgets/g", "")
	e.must(201, "POST", crdPath, crdJSON)
	var l widgetList
	e.must(200, "GET", "/apis/example.com/v1/widgets", "").into(t, &l)
	if len(l.Items) != 0 {
		t.Errorf("objects of the deleted definition came back: %+v", l.Items)
	}
	res, err := e.st.List(context.Background(), "/registry/example.com/widgets/", storeAll)
	if err != nil || len(res.Items) != 0 {
		t.Errorf("store still holds %d widgets (%v)", len(res.Items), err)
	}
}

// TestDefinitionGuard: a custom object's write commits only while the
// definition it was served for is stored with the same uid.
func TestDefinitionGuard(t *testing.T) {
	e := newEnv(t)
	var c CustomResourceDefinition
	e.must(201, "POST", crdPath, crdJSON).into(t, &c)
	g := definitionGuard{key: apiserverKey(c.Name), uid: c.UID, name: c.Name}
	admit := func(op apiserver.Op) error {
		_, err := e.st.Update(context.Background(), func(tx store.Txn) error {
			_, err := g.Admit(context.Background(), tx, apiserver.Admission{Op: op, Obj: &Object{}})
			return err
		})
		return err
	}
	if err := admit(apiserver.OpCreate); err != nil {
		t.Fatalf("create with the definition stored: %v", err)
	}
	e.must(200, "DELETE", crdPath+"/"+c.Name, "")
	for _, op := range []apiserver.Op{apiserver.OpCreate, apiserver.OpUpdate} {
		var se *apiserver.StatusError
		if err := admit(op); !errors.As(err, &se) || se.Status().Code != 404 {
			t.Errorf("%s after the definition's deletion: %v, want 404", op, err)
		}
	}
	if err := admit(apiserver.OpDelete); err != nil {
		t.Errorf("delete after the definition's deletion: %v", err)
	}
	e.must(201, "POST", crdPath, crdJSON) // another uid
	if err := admit(apiserver.OpCreate); err == nil {
		t.Error("create for the old definition admitted under the new one")
	}
}

func apiserverKey(name string) string {
	return apiserver.KeyFor(CRDResource(Options{}), "", name)
}

// TestRegistrySkipsUnservable: a stored definition the API server cannot
// serve (here in a group of built-in resources, written past validation)
// is skipped; the others are served, and were served all along.
func TestRegistrySkipsUnservable(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", crdPath, crdJSON)
	bad := strings.NewReplacer(`"widgets.example.com"`, `"widgets.apps"`, `"group":"example.com"`, `"group":"apps"`).Replace(crdJSON)
	var c CustomResourceDefinition
	if err := json.Unmarshal([]byte(bad), &c); err != nil {
		t.Fatal(err)
	}
	c.UID = "bad-uid"
	raw, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Update(context.Background(), func(tx store.Txn) error {
		return tx.Put(apiserverKey(c.Name), raw)
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.must(200, "GET", "/apis/example.com/v1/namespaces/default/widgets", "")
	e.must(404, "GET", "/apis/apps/v1/namespaces/default/widgets", "")
	cur, _ := e.reg.Current()
	if len(cur) != 1 || cur[0].Group != "example.com" {
		t.Errorf("Current = %v", cur)
	}
}

// TestRegistryCurrent: Current gives one entry per definition (its
// preferred version) and a channel closed when the set changes.
func TestRegistryCurrent(t *testing.T) {
	e := newEnv(t)
	cur, changed := e.reg.Current()
	if len(cur) != 0 {
		t.Fatalf("Current before any definition = %v", cur)
	}
	e.must(201, "POST", crdPath, crdJSON)
	select {
	case <-changed:
	default:
		t.Fatal("the change channel is open after a definition's create returned")
	}
	cur, changed = e.reg.Current()
	if len(cur) != 1 || cur[0].GroupVersion() != "example.com/v1" || cur[0].Resource != "widgets" {
		t.Fatalf("Current = %v", cur)
	}
	// A write that changes no served resource does not signal.
	e.mustCT(200, "PATCH", crdPath+"/widgets.example.com", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`)
	select {
	case <-changed:
		t.Error("a label change signalled a change of the set")
	default:
	}
	e.must(200, "DELETE", crdPath+"/widgets.example.com", "")
	select {
	case <-changed:
	default:
		t.Fatal("the change channel is open after a definition's delete returned")
	}
	if cur, _ := e.reg.Current(); len(cur) != 0 {
		t.Errorf("Current after the delete = %v", cur)
	}
}

func TestCustomObjectSelectableFields(t *testing.T) {
	e := newEnv(t)
	def := strings.Replace(crdJSON, `"subresources":{"status":{}}}`, `"subresources":{"status":{}},
	 "selectableFields":[{"jsonPath":".spec.color"},{"jsonPath":".spec.size"},{"jsonPath":".status.ready"}]}`, 1)
	e.must(201, "POST", crdPath, def)
	const v1 = "/apis/example.com/v1/namespaces/default/widgets"
	e.must(201, "POST", v1, `{"metadata":{"name":"a"},"spec":{"color":"red","size":3}}`)
	e.must(201, "POST", v1, `{"metadata":{"name":"b"},"spec":{"color":"blue","size":4.5}}`)
	e.must(201, "POST", v1, `{"metadata":{"name":"c"}}`)
	e.must(200, "PUT", v1+"/c/status", `{"metadata":{"name":"c"},"status":{"ready":true}}`)
	for q, want := range map[string]string{
		"spec.color%3Dred":                 "a",
		"spec.color!%3Dred":                "b c",
		"spec.size%3D3":                    "a",
		"spec.size%3D4.5":                  "", // not an integer: not selectable
		"status.ready%3Dtrue":              "c",
		"spec.color%3D,metadata.name!%3Da": "c",
	} {
		var l widgetList
		e.must(200, "GET", v1+"?fieldSelector="+q, "").into(t, &l)
		var names []string
		for _, it := range l.Items {
			names = append(names, it.Metadata.Name)
		}
		if strings.Join(names, " ") != want {
			t.Errorf("fieldSelector %s: %v, want %q", q, names, want)
		}
	}
	// Not selectable in the version that does not list it.
	e.must(400, "GET", "/apis/example.com/v1beta1/namespaces/default/widgets?fieldSelector=spec.color%3Dred", "")
	e.must(400, "GET", v1+"?fieldSelector=spec.other%3Dx", "")
}

func TestCustomObjectScale(t *testing.T) {
	e := newEnv(t)
	def := strings.Replace(crdJSON, `"subresources":{"status":{}}}`,
		`"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"}}}`, 1)
	e.must(201, "POST", crdPath, def)
	var dl discoveryList
	e.must(200, "GET", "/apis/example.com/v1", "").into(t, &dl)
	var names []string
	for _, r := range dl.Resources {
		names = append(names, r.Name+":"+r.Kind)
	}
	if strings.Join(names, " ") != "widgets:Widget widgets/scale:Scale widgets/status:Widget" {
		t.Errorf("discovery = %v", names)
	}
	const v1 = "/apis/example.com/v1/namespaces/default/widgets"
	e.must(201, "POST", v1, `{"metadata":{"name":"a"},"spec":{"replicas":2,"color":"red"}}`)
	e.must(200, "PUT", v1+"/a/status", `{"metadata":{"name":"a"},"status":{"replicas":1,"selector":"app=a"}}`)
	type scale struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec struct {
			Replicas int32 `json:"replicas"`
		} `json:"spec"`
		Status struct {
			Replicas int32  `json:"replicas"`
			Selector string `json:"selector"`
		} `json:"status"`
	}
	var sc scale
	e.must(200, "GET", v1+"/a/scale", "").into(t, &sc)
	if sc.Kind != "Scale" || sc.APIVersion != "autoscaling/v1" || sc.Metadata.Name != "a" || sc.Spec.Replicas != 2 || sc.Status.Replicas != 1 || sc.Status.Selector != "app=a" {
		t.Fatalf("scale = %+v", sc)
	}
	e.must(200, "PUT", v1+"/a/scale", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"a"},"spec":{"replicas":5}}`).into(t, &sc)
	if sc.Spec.Replicas != 5 {
		t.Errorf("after PUT scale: %+v", sc)
	}
	e.mustCT(200, "PATCH", v1+"/a/scale", "application/merge-patch+json", `{"spec":{"replicas":7}}`).into(t, &sc)
	var w widget
	e.must(200, "GET", v1+"/a", "").into(t, &w)
	if w.Spec["replicas"] != float64(7) || w.Spec["color"] != "red" || w.Metadata.Generation != 3 || w.Status["replicas"] != float64(1) {
		t.Errorf("object after scaling: %+v gen %d", w, w.Metadata.Generation)
	}
	e.must(422, "PUT", v1+"/a/scale", `{"metadata":{"name":"a"},"spec":{"replicas":-1}}`)
	// The version without the scale subresource does not serve it.
	e.must(404, "GET", "/apis/example.com/v1beta1/namespaces/default/widgets/a/scale", "")
}
