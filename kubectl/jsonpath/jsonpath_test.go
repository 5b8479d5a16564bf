package jsonpath

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const doc = `{
  "kind": "List",
  "items": [
    {"metadata": {"name": "web", "labels": {"app": "web", "kubernetes.io/service-name": "front"}},
     "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}], "clusterIP": "10.96.0.10"},
     "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}},
    {"metadata": {"name": "db", "labels": {"app": "db"}},
     "spec": {"ports": [{"port": 5432}], "clusterIP": "None", "big": 9007199254740993},
     "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
  ]
}`

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestExecute(t *testing.T) {
	data := decode(t, doc)
	for _, tc := range []struct {
		name, tmpl, want string
	}{
		{"field", `{.kind}`, "List"},
		{"dollar root", `{$.kind}`, "List"},
		{"all names", `{.items[*].metadata.name}`, "web db"},
		{"index", `{.items[0].metadata.name}`, "web"},
		{"negative index", `{.items[-1].metadata.name}`, "db"},
		{"out of range index", `{.items[5].metadata.name}`, ""},
		{"slice", `{.items[0:1].metadata.name}`, "web"},
		{"slice open end", `{.items[1:].metadata.name}`, "db"},
		{"reverse slice", `{.items[::-1].metadata.name}`, "db web"},
		{"escaped dot key", `{.items[0].metadata.labels.kubernetes\.io/service-name}`, "front"},
		{"quoted key", `{.items[0].metadata.labels['kubernetes.io/service-name']}`, "front"},
		{"double quoted key", `{.items[0].metadata.labels["app"]}`, "web"},
		{"union of keys", `{.items[0].metadata.labels['app','kubernetes.io/service-name']}`, "web front"},
		{"filter string", `{.items[0].status.conditions[?(@.type=="Ready")].status}`, "True"},
		{"filter spaces and single quotes", `{.items[*].status.conditions[?(@.type == 'Ready')].status}`, "True False"},
		{"filter not equal", `{.items[?(@.spec.clusterIP!="None")].metadata.name}`, "web"},
		{"filter number", `{.items[*].spec.ports[?(@.port>100)].port}`, "443 5432"},
		{"filter exists", `{.items[*].spec.ports[?(@.name)].name}`, "http https"},
		{"recursive", `{..port}`, "80 443 5432"},
		{"recursive in bracket form", `{.items[1]..clusterIP}`, "None"},
		{"range", `{range .items[*]}{.metadata.name}{"\t"}{.spec.clusterIP}{"\n"}{end}`, "web\t10.96.0.10\ndb\tNone\n"},
		{"nested range", `{range .items[*]}{.metadata.name}:{range .spec.ports[*]}{.port},{end};{end}`, "web:80,443,;db:5432,;"},
		{"literal text", `name={.items[0].metadata.name}!`, "name=web!"},
		{"single quoted literal", `{'a b'}`, "a b"},
		{"object prints json", `{.items[1].metadata.labels}`, `{"app":"db"}`},
		{"list prints json", `{.items[1].spec.ports}`, `[{"port":5432}]`},
		{"big number exact", `{.items[1].spec.big}`, "9007199254740993"},
		{"missing key is empty", `{.items[0].nope.deeper}`, ""},
		{"wildcard on map", `{.items[1].metadata.labels.*}`, "db"},
		{"bare path without dot", `{kind}`, "List"},
		{"current object", `{range .items[0].spec.ports[*]}{@.port} {end}`, "80 443 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.tmpl)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.tmpl, err)
			}
			var b strings.Builder
			if err := tmpl.Execute(&b, data); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("Execute(%q) = %q, want %q", tc.tmpl, b.String(), tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, tmpl string }{
		{"unclosed brace", `{.a`},
		{"end without range", `{.a}{end}`},
		{"range without end", `{range .items[*]}{.a}`},
		{"unterminated bracket", `{.items[0}`},
		{"bad index", `{.items[x]}`},
		{"unterminated string", `{"abc}`},
		{"bad filter", `{.items[?(@.a==)]}`},
		{"zero step", `{.items[::0]}`},
		{"empty", `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.tmpl)
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) = %v, want ErrSyntax", tc.tmpl, err)
			}
		})
	}
}

func TestEval(t *testing.T) {
	data := decode(t, doc)
	vals, err := Eval("{.items[*].metadata.name}", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 2 || vals[0] != "web" || vals[1] != "db" {
		t.Fatalf("Eval = %v", vals)
	}
	vals, err = Eval(".metadata.name", decode(t, `{"metadata":{"name":"x"}}`))
	if err != nil || len(vals) != 1 || vals[0] != "x" {
		t.Fatalf("Eval without braces = %v, %v", vals, err)
	}
}
