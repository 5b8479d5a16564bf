package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/printers"
)

const (
	acceptTable   = "application/json;as=Table;v=v1;g=meta.k8s.io"
	acceptKubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)

func TestNegotiateOutput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		accept  string
		list    bool
		want    output
		wantErr bool
	}{
		{name: "no header", want: output{form: formObject}},
		{name: "plain json", accept: "application/json", want: output{form: formObject}},
		{name: "anything", accept: "*/*", want: output{form: formObject}},
		{name: "kubectl get", accept: acceptKubectl, list: true, want: output{form: formTable, version: "v1"}},
		{name: "table v1beta1 only", accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: output{form: formTable, version: "v1beta1"}},
		{name: "protobuf first then table", accept: "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io", want: output{form: formTable, version: "v1"}},
		{name: "q values order", accept: "application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io", want: output{form: formTable, version: "v1"}},
		{name: "q zero is refused", accept: "application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json", want: output{form: formObject}},
		{name: "unknown table version falls back", accept: "application/json;as=Table;v=v9;g=meta.k8s.io,application/json", want: output{form: formObject}},
		{name: "unknown table version alone", accept: "application/json;as=Table;v=v9;g=meta.k8s.io", wantErr: true},
		{name: "unknown as", accept: "application/json;as=Widget;v=v1;g=meta.k8s.io", wantErr: true},
		{name: "protobuf only is answered in json", accept: "application/vnd.kubernetes.protobuf", want: output{form: formObject}},
		{name: "partial metadata get", accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", want: output{form: formPartial, version: "v1"}},
		{name: "partial metadata list", accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", list: true, want: output{form: formPartial, version: "v1"}},
		{name: "partial list on a get", accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := negotiateOutput(tc.accept, tc.list)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				if se := AsStatusError(err); se.Code() != http.StatusNotAcceptable {
					t.Errorf("code %d, want 406", se.Code())
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// realResources serves the real resource table.
func realResources(c *Config) { c.Resources = api.Resources() }

const servicesPath = "/api/v1/namespaces/default/services"

func createService(t *testing.T, e *testEnv, name, ip string) {
	t.Helper()
	e.must(201, "POST", servicesPath, map[string]any{
		"metadata": map[string]any{"name": name, "labels": map[string]string{"app": name}},
		"spec": map[string]any{
			"type": "ClusterIP", "clusterIP": ip, "clusterIPs": []string{ip},
			"selector": map[string]string{"app": name},
			"ports":    []any{map[string]any{"port": 80, "protocol": "TCP", "targetPort": 8080}},
		},
	})
}

func decodeTable(t *testing.T, r resp) printers.Table {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var tb printers.Table
	r.into(t, &tb)
	if tb.Kind != "Table" || tb.APIVersion != "meta.k8s.io/v1" {
		t.Fatalf("not a Table: %s", r.body)
	}
	return tb
}

func TestTableList(t *testing.T) {
	e := newEnv(t, realResources)
	createService(t, e, "web", "10.96.0.10")
	createService(t, e, "db", "10.96.0.11")

	tb := decodeTable(t, e.must(200, "GET", servicesPath, nil, "Accept: "+acceptKubectl))
	var headers []string
	for _, c := range tb.ColumnDefinitions {
		headers = append(headers, c.Header())
	}
	if want := []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"}; !reflect.DeepEqual(headers, want) {
		t.Errorf("headers %q, want %q", headers, want)
	}
	if tb.Metadata.ResourceVersion == "" {
		t.Error("table has no resourceVersion")
	}
	if len(tb.Rows) != 2 {
		t.Fatalf("%d rows", len(tb.Rows))
	}
	want := []any{"db", "ClusterIP", "10.96.0.11", "<none>", "80/TCP", "0s", "app=db"}
	if !reflect.DeepEqual(tb.Rows[0].Cells, want) {
		t.Errorf("row 0 %#v, want %#v", tb.Rows[0].Cells, want)
	}
	var pom struct {
		Kind, APIVersion string
		Metadata         api.ObjectMeta
	}
	if err := json.Unmarshal(tb.Rows[1].Object, &pom); err != nil {
		t.Fatal(err)
	}
	if pom.Kind != "PartialObjectMetadata" || pom.APIVersion != "meta.k8s.io/v1" || pom.Metadata.Name != "web" ||
		pom.Metadata.Namespace != "default" || pom.Metadata.Labels["app"] != "web" {
		t.Errorf("row object %s", tb.Rows[1].Object)
	}

	for _, tc := range []struct {
		include  string
		wantKind string
	}{{"Object", "Service"}, {"None", ""}, {"Metadata", "PartialObjectMetadata"}} {
		t.Run("includeObject="+tc.include, func(t *testing.T) {
			tb := decodeTable(t, e.must(200, "GET", servicesPath+"?includeObject="+tc.include, nil, "Accept: "+acceptTable))
			if tc.wantKind == "" {
				if tb.Rows[0].Object != nil {
					t.Errorf("object %s, want none", tb.Rows[0].Object)
				}
				return
			}
			var tm api.TypeMeta
			if err := json.Unmarshal(tb.Rows[0].Object, &tm); err != nil || tm.Kind != tc.wantKind {
				t.Errorf("object %s, want kind %s", tb.Rows[0].Object, tc.wantKind)
			}
		})
	}
	if r := e.do("GET", servicesPath+"?includeObject=All", nil, "Accept: "+acceptTable); r.code != 400 {
		t.Errorf("includeObject=All: code %d", r.code)
	}

	// Selectors and paging still apply.
	tb = decodeTable(t, e.must(200, "GET", servicesPath+"?labelSelector=app%3Dweb", nil, "Accept: "+acceptTable))
	if len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "web" {
		t.Errorf("selected rows %+v", tb.Rows)
	}
	tb = decodeTable(t, e.must(200, "GET", servicesPath+"?limit=1", nil, "Accept: "+acceptTable))
	if len(tb.Rows) != 1 || tb.Metadata.Continue == "" {
		t.Errorf("paged table: %d rows, continue %q", len(tb.Rows), tb.Metadata.Continue)
	}

	// All namespaces, and a plain JSON list for other Accept headers.
	tb = decodeTable(t, e.must(200, "GET", "/api/v1/services", nil, "Accept: "+acceptTable))
	if len(tb.Rows) != 2 {
		t.Errorf("%d rows across namespaces", len(tb.Rows))
	}
	var list struct{ Kind string }
	e.must(200, "GET", servicesPath, nil, "Accept: application/json").into(t, &list)
	if list.Kind != "ServiceList" {
		t.Errorf("plain list kind %q", list.Kind)
	}
}

func TestTableGetAndErrors(t *testing.T) {
	e := newEnv(t, realResources)
	createService(t, e, "web", "10.96.0.10")

	tb := decodeTable(t, e.must(200, "GET", servicesPath+"/web", nil, "Accept: "+acceptKubectl))
	if len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "web" || len(tb.ColumnDefinitions) != 7 || tb.Metadata.ResourceVersion == "" {
		t.Errorf("table %+v", tb)
	}
	if cl := e.must(200, "GET", servicesPath+"/web", nil, "Accept: "+acceptTable).header.Get("Content-Length"); cl == "" {
		t.Error("no Content-Length")
	}

	r := e.do("GET", servicesPath+"/nope", nil, "Accept: "+acceptKubectl)
	if r.code != 404 {
		t.Fatalf("code %d: %s", r.code, r.body)
	}
	if st := r.status(t); st.Reason != api.StatusReasonNotFound {
		t.Errorf("status %+v", st)
	}

	r = e.do("GET", servicesPath, nil, "Accept: application/json;as=Table;v=v2;g=meta.k8s.io")
	if r.code != 406 || r.status(t).Reason != api.StatusReasonNotAcceptable {
		t.Errorf("unsupported table version: code %d: %s", r.code, r.body)
	}

	var pom struct {
		Kind     string
		Metadata api.ObjectMeta
	}
	e.must(200, "GET", servicesPath+"/web", nil, "Accept: application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io").into(t, &pom)
	if pom.Kind != "PartialObjectMetadata" || pom.Metadata.Name != "web" {
		t.Errorf("partial %+v", pom)
	}
	var pl struct {
		Kind  string
		Items []struct{ Kind string }
	}
	e.must(200, "GET", servicesPath, nil, "Accept: application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io").into(t, &pl)
	if pl.Kind != "PartialObjectMetadataList" || len(pl.Items) != 1 || pl.Items[0].Kind != "PartialObjectMetadata" {
		t.Errorf("partial list %+v", pl)
	}
}

func TestTableWatch(t *testing.T) {
	e := newEnv(t, realResources)
	createService(t, e, "web", "10.96.0.10")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+servicesPath+"?watch=true", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Accept", acceptKubectl)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("code %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	next := func() (string, printers.Table) {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("watch ended: %v", sc.Err())
		}
		var ev struct {
			Type   string
			Object printers.Table
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %s: %v", sc.Bytes(), err)
		}
		if ev.Object.Kind != "Table" {
			t.Fatalf("event object is not a Table: %s", sc.Bytes())
		}
		return ev.Type, ev.Object
	}

	typ, tb := next()
	if typ != "ADDED" || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "web" || len(tb.ColumnDefinitions) != 7 {
		t.Fatalf("first event %s %+v", typ, tb)
	}
	e.must(200, "PATCH", servicesPath+"/web", `{"metadata":{"labels":{"x":"y"}}}`, "Content-Type: application/merge-patch+json")
	typ, tb = next()
	if typ != "MODIFIED" || len(tb.Rows) != 1 || tb.ColumnDefinitions != nil {
		t.Errorf("second event %s %+v (columns only come with the first)", typ, tb)
	}
	if tb.Metadata.ResourceVersion == "" {
		t.Error("event table without resourceVersion")
	}
	e.must(200, "DELETE", servicesPath+"/web", nil)
	typ, tb = next()
	if typ != "DELETED" || tb.Rows[0].Cells[0] != "web" {
		t.Errorf("third event %s %+v", typ, tb)
	}
}
