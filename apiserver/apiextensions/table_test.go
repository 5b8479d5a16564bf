package apiextensions

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

type table struct {
	Kind    string `json:"kind"`
	Columns []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Format   string `json:"format"`
		Priority int32  `json:"priority"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells []any `json:"cells"`
	} `json:"rows"`
}

func (e *testEnv) table(path string) table {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Accept", tableAccept)
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		e.t.Fatalf("GET %s as Table: %d %s", path, res.StatusCode, b)
	}
	var t table
	if err := json.Unmarshal(b, &t); err != nil || t.Kind != "Table" {
		e.t.Fatalf("not a Table: %v %s", err, b)
	}
	return t
}

func TestCustomObjectTable(t *testing.T) {
	e := newEnv(t)
	withColumns := strings.Replace(crdJSON, `"subresources":{"status":{}}}`, `"subresources":{"status":{}},
	 "additionalPrinterColumns":[
	  {"name":"Size","type":"integer","jsonPath":".spec.size"},
	  {"name":"Color","type":"string","jsonPath":".spec.color","description":"the color"},
	  {"name":"Ready","type":"boolean","jsonPath":".status.ready","priority":1},
	  {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]}`, 1)
	e.must(201, "POST", crdPath, withColumns)
	e.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"a"},"spec":{"size":3,"color":"red"}}`)
	e.must(200, "PUT", "/apis/example.com/v1/namespaces/default/widgets/a/status", `{"metadata":{"name":"a"},"status":{"ready":true}}`)
	e.must(201, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"b"},"spec":{"size":"big"}}`)

	tb := e.table("/apis/example.com/v1/namespaces/default/widgets")
	var names []string
	for _, c := range tb.Columns {
		names = append(names, c.Name+":"+c.Type)
	}
	if strings.Join(names, " ") != "Name:string Size:integer Color:string Ready:boolean Age:date" || tb.Columns[3].Priority != 1 || tb.Columns[0].Format != "name" {
		t.Fatalf("columns = %+v", tb.Columns)
	}
	if len(tb.Rows) != 2 {
		t.Fatalf("rows = %+v", tb.Rows)
	}
	a, b := tb.Rows[0].Cells, tb.Rows[1].Cells
	if a[0] != "a" || a[1] != float64(3) || a[2] != "red" || a[3] != true || a[4] == nil || a[4] == "" {
		t.Errorf("row a = %v", a)
	}
	// A value of another type than the column's, and a missing one, are empty.
	if b[0] != "b" || b[1] != nil || b[2] != nil || b[3] != nil {
		t.Errorf("row b = %v", b)
	}
	// A version without columns has the default Table; so has a get.
	tb = e.table("/apis/example.com/v1beta1/namespaces/default/widgets/a")
	if len(tb.Columns) != 2 || tb.Columns[0].Name != "Name" || tb.Columns[1].Name != "Age" || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "a" {
		t.Errorf("default table = %+v", tb)
	}
}

func TestCRDTable(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", crdPath, crdJSON)
	tb := e.table(crdPath)
	if len(tb.Columns) != 2 || tb.Columns[1].Name != "Created At" || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "widgets.example.com" {
		t.Fatalf("table = %+v", tb)
	}
	if s, _ := tb.Rows[0].Cells[1].(string); !strings.HasSuffix(s, "Z") || len(s) != len("2006-01-02T15:04:05Z") {
		t.Errorf("Created At = %v", tb.Rows[0].Cells[1])
	}
}
