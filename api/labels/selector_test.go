package labels

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // canonical String()
	}{
		{"empty", "", ""},
		{"only whitespace", " \t\r\n", ""},
		{"equals", "app=web", "app=web"},
		{"double equals kept", "app==web", "app==web"},
		{"not equals", "app!=web", "app!=web"},
		{"empty value", "app=", "app="},
		{"empty value before comma", "app=,tier=db", "app=,tier=db"},
		{"exists", "app", "app"},
		{"does not exist", "!app", "!app"},
		{"does not exist spaced", "! app", "!app"},
		{"in", "tier in (db,web)", "tier in (db,web)"},
		{"in values sorted and deduplicated", "tier in (web,db,web)", "tier in (db,web)"},
		{"notin", "tier notin (web)", "tier notin (web)"},
		{"in without spaces", "tier in(a,b)", "tier in (a,b)"},
		{"in empty list is empty value", "tier in ()", "tier in ()"},
		{"in leading empty", "tier in (,a)", "tier in (,a)"},
		{"in trailing empty", "tier in (a,)", "tier in (,a)"},
		{"in double comma", "tier in (a,,b)", "tier in (,a,b)"},
		{"in only comma", "tier in (,)", "tier in ()"},
		{"keyword as key", "in=notin", "in=notin"},
		{"keyword as value", "a in (in,notin)", "a in (in,notin)"},
		{"greater than", "replicas>3", "replicas>3"},
		{"less than", "replicas<3", "replicas<3"},
		{"sorted by key", "z=1,a=2,m", "a=2,m,z=1"},
		{"same key keeps order", "b,a=2,a", "a=2,a,b"},
		{"whitespace everywhere", "  a = b ,  c  in ( x , y ) , ! d ", "a=b,c in (x,y),!d"},
		{"tabs and newlines", "a\t=\tb,\nc", "a=b,c"},
		{"prefixed key", "example.com/app=web", "example.com/app=web"},
		{"kubernetes key", "app.kubernetes.io/name=skiff", "app.kubernetes.io/name=skiff"},
		{"value charset", "a=A-b_c.9", "a=A-b_c.9"},
		{"max name", "a" + strings.Repeat("b", 62) + "=x", "a" + strings.Repeat("b", 62) + "=x"},
		{"max value", "a=" + strings.Repeat("v", 63), "a=" + strings.Repeat("v", 63)},
		{"mixed", "!canary,app=web,tier in (a,b)", "app=web,!canary,tier in (a,b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := sel.String(); got != tt.want {
				t.Fatalf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
			if got, want := sel.Empty(), tt.want == ""; got != want {
				t.Fatalf("Empty() = %v, want %v", got, want)
			}
		})
	}
}

func TestParseSortsStably(t *testing.T) {
	// "b,a=2,a": keys sort to a, a, b; the two a's keep their input order.
	sel, err := Parse("b,a=2,a")
	if err != nil {
		t.Fatal(err)
	}
	want := selector{
		{key: "a", op: opEquals, values: []string{"2"}},
		{key: "a", op: opExists},
		{key: "b", op: opExists},
	}
	if !reflect.DeepEqual(sel, want) {
		t.Fatalf("got %#v, want %#v", sel, want)
	}
}

const (
	nameRegexMsg  = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	valueRegexMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
	ops           = "in, notin, =, ==, !=, gt, lt"
)

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // exact error text
	}{
		{"leading comma", ",a", "found ',', expected: !, identifier, or 'end of string'"},
		{"only comma", ",", "found ',', expected: !, identifier, or 'end of string'"},
		{"trailing comma", "a=b,", "found '', expected: identifier after ','"},
		{"double comma", "a,,b", "found ',', expected: identifier after ','"},
		{"missing operator", "a b", "unable to parse requirement: found 'b', expected: " + ops},
		{"paren after key", "a (b)", "unable to parse requirement: found '(', expected: " + ops},
		{"bang bang", "!!a", "unable to parse requirement: found '!', expected: identifier"},
		{"bang alone", "!", "unable to parse requirement: found '', expected: identifier"},
		{"bang with value", "!a=b", "found '=', expected: ',' or 'end of string'"},
		{"triple equals", "a===b", "unable to parse requirement: found '=', expected: identifier"},
		{"two values", "a=b c", "found 'c', expected: ',' or 'end of string'"},
		{"value then equals", "a=b=c", "found '=', expected: ',' or 'end of string'"},
		{"in without paren", "a in b", "unable to parse requirement: found 'b' expected: '('"},
		{"in without list", "a in", "unable to parse requirement: found '' expected: '('"},
		{"in unclosed", "a in (b", "unable to parse requirement: found '', expected: ',' or ')'"},
		{"in unclosed after comma", "a in (b,", "unable to parse requirement: found '', expected: ',', or identifier"},
		{"in space separated", "a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"},
		{"in operator inside", "a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
		{"notin nested paren", "a notin ((b))", "unable to parse requirement: found '(', expected: ',', ')' or identifier"},
		{"bad key charset", "a@b=c", `unable to parse requirement: <nil>: Invalid value: "a@b": ` + nameRegexMsg},
		{"key starts with dash", "-a", `unable to parse requirement: <nil>: Invalid value: "-a": ` + nameRegexMsg},
		{"key too long", strings.Repeat("k", 64), `unable to parse requirement: <nil>: Invalid value: "` + strings.Repeat("k", 64) + `": name part must be no more than 63 characters`},
		{"empty prefix", "/a", `unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty`},
		{"empty name", "example.com/", `unable to parse requirement: <nil>: Invalid value: "example.com/": name part must be non-empty; ` + nameRegexMsg},
		{"uppercase prefix", "Example.com/a", `unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"two slashes", "a/b/c", `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		{"nul byte in key", "a\x00b", `unable to parse requirement: <nil>: Invalid value: "a\x00b": ` + nameRegexMsg},
		{"bad value", "a=b@c", `unable to parse requirement: values[0][a]: Invalid value: "b@c": ` + valueRegexMsg},
		{"value too long", "a=" + strings.Repeat("v", 64), `unable to parse requirement: values[0][a]: Invalid value: "` + strings.Repeat("v", 64) + `": must be no more than 63 characters`},
		{"bad values in list", "a in (-x,y,z_)", `unable to parse requirement: [values[0][a]: Invalid value: "-x": ` + valueRegexMsg + `, values[2][a]: Invalid value: "z_": ` + valueRegexMsg + `]`},
		{"gt not integer", "a>b", `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`},
		{"gt missing value", "a>", `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error %q", tt.in, sel, tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("Parse(%q) error\n got: %s\nwant: %s", tt.in, err, tt.want)
			}
			if sel != nil {
				t.Fatalf("Parse(%q) returned a selector with its error", tt.in)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	sets := map[string]map[string]string{
		"none":       nil,
		"web":        {"app": "web"},
		"web-db":     {"app": "web", "tier": "db"},
		"api-canary": {"app": "api", "canary": ""},
		"replicas-5": {"replicas": "5"},
		"replicas-x": {"replicas": "x"},
	}
	tests := []struct {
		selector string
		want     []string // names of the sets it matches
	}{
		{"", []string{"none", "web", "web-db", "api-canary", "replicas-5", "replicas-x"}},
		{"app=web", []string{"web", "web-db"}},
		{"app==web", []string{"web", "web-db"}},
		{"app!=web", []string{"none", "api-canary", "replicas-5", "replicas-x"}},
		{"app in (web,api)", []string{"web", "web-db", "api-canary"}},
		{"app notin (web)", []string{"none", "api-canary", "replicas-5", "replicas-x"}},
		{"app", []string{"web", "web-db", "api-canary"}},
		{"!app", []string{"none", "replicas-5", "replicas-x"}},
		{"canary", []string{"api-canary"}},
		{"canary=", []string{"api-canary"}},
		{"canary!=", []string{"none", "web", "web-db", "replicas-5", "replicas-x"}},
		{"app in ()", nil},
		{"app=web,tier=db", []string{"web-db"}},
		{"app=web,!tier", []string{"web"}},
		{"app,tier notin (db)", []string{"web", "api-canary"}},
		{"replicas>4", []string{"replicas-5"}},
		{"replicas>5", nil},
		{"replicas<6", []string{"replicas-5"}},
		{"replicas<5", nil},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			sel, err := Parse(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, n := range tt.want {
				want[n] = true
			}
			for name, set := range sets {
				if got := sel.Matches(set); got != want[name] {
					t.Errorf("Parse(%q).Matches(%s %v) = %v, want %v", tt.selector, name, set, got, want[name])
				}
			}
		})
	}
}

func TestEverythingNothing(t *testing.T) {
	tests := []struct {
		name      string
		sel       Selector
		wantMatch bool
		wantEmpty bool
	}{
		{"everything", Everything(), true, true},
		{"nothing", Nothing(), false, false},
		{"empty set", SelectorFromSet(nil), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ls := range []map[string]string{nil, {}, {"a": "b"}} {
				if got := tt.sel.Matches(ls); got != tt.wantMatch {
					t.Errorf("Matches(%v) = %v, want %v", ls, got, tt.wantMatch)
				}
			}
			if got := tt.sel.Empty(); got != tt.wantEmpty {
				t.Errorf("Empty() = %v, want %v", got, tt.wantEmpty)
			}
			if got := tt.sel.String(); got != "" {
				t.Errorf("String() = %q, want empty", got)
			}
		})
	}
}

func TestSelectorFromSet(t *testing.T) {
	tests := []struct {
		name    string
		set     map[string]string
		want    string
		matches map[string]string
		misses  map[string]string
	}{
		{"one", map[string]string{"app": "web"}, "app=web", map[string]string{"app": "web", "x": "y"}, map[string]string{"app": "api"}},
		{"sorted", map[string]string{"z": "1", "a": "2"}, "a=2,z=1", map[string]string{"a": "2", "z": "1"}, map[string]string{"a": "2"}},
		{"empty value", map[string]string{"a": ""}, "a=", map[string]string{"a": ""}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, sel := range []Selector{SelectorFromSet(tt.set), mustValidated(t, tt.set)} {
				if got := sel.String(); got != tt.want {
					t.Errorf("String() = %q, want %q", got, tt.want)
				}
				if !sel.Matches(tt.matches) {
					t.Errorf("does not match %v", tt.matches)
				}
				if sel.Matches(tt.misses) {
					t.Errorf("matches %v", tt.misses)
				}
			}
		})
	}
}

func mustValidated(t *testing.T, set map[string]string) Selector {
	t.Helper()
	sel, err := ValidatedSelectorFromSet(set)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func TestValidatedSelectorFromSetRejects(t *testing.T) {
	_, err := ValidatedSelectorFromSet(map[string]string{"a b": "c", "ok": "d@"})
	want := `[key: Invalid value: "a b": ` + nameRegexMsg + `, values[0][ok]: Invalid value: "d@": ` + valueRegexMsg + `]`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}

func TestFromLabelSelector(t *testing.T) {
	tests := []struct {
		name        string
		matchLabels map[string]string
		exprs       []Requirement
		want        string
		wantErr     string
	}{
		{name: "empty selects everything", want: ""},
		{name: "labels", matchLabels: map[string]string{"app": "web", "tier": "fe"}, want: "app=web,tier=fe"},
		{name: "expressions", exprs: []Requirement{
			{Key: "tier", Operator: OpIn, Values: []string{"fe", "be"}},
			{Key: "env", Operator: OpNotIn, Values: []string{"prod"}},
			{Key: "canary", Operator: OpDoesNotExist},
			{Key: "app", Operator: OpExists},
		}, want: "app,!canary,env notin (prod),tier in (be,fe)"},
		{name: "both", matchLabels: map[string]string{"app": "web"}, exprs: []Requirement{
			{Key: "app", Operator: OpIn, Values: []string{"web", "api"}},
		}, want: "app=web,app in (api,web)"},
		{name: "unknown operator", exprs: []Requirement{{Key: "a", Operator: "Equals"}},
			wantErr: `"Equals" is not a valid label selector operator`},
		{name: "in without values", exprs: []Requirement{{Key: "a", Operator: OpIn}},
			wantErr: `values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty`},
		{name: "exists with values", exprs: []Requirement{{Key: "a", Operator: OpExists, Values: []string{"x"}}},
			wantErr: `values: Invalid value: ["x"]: values set must be empty for exists and does not exist`},
		{name: "bad key", exprs: []Requirement{{Key: "a/b/c", Operator: OpExists}},
			wantErr: `key: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		{name: "bad label value", matchLabels: map[string]string{"a": "-"},
			wantErr: `values[0][a]: Invalid value: "-": ` + valueRegexMsg},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := FromLabelSelector(tt.matchLabels, tt.exprs)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error\n got: %v\nwant: %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			// The canonical form parses back to the same selector.
			re, err := Parse(sel.String())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalize(re), normalize(sel)) {
				t.Fatalf("re-parse: got %#v, want %#v", re, sel)
			}
		})
	}
}

func TestFromLabelSelectorDoesNotAlias(t *testing.T) {
	vals := []string{"b", "a"}
	sel, err := FromLabelSelector(nil, []Requirement{{Key: "k", Operator: OpIn, Values: vals}})
	if err != nil {
		t.Fatal(err)
	}
	vals[0] = "zzz"
	if !sel.Matches(map[string]string{"k": "b"}) {
		t.Fatal("selector changed when the caller's values slice changed")
	}
	if vals[1] != "a" {
		t.Fatal("FromLabelSelector reordered the caller's values")
	}
}

// normalize makes nil and empty value slices compare equal.
func normalize(s Selector) Selector {
	sel, ok := s.(selector)
	if !ok {
		return s
	}
	out := make(selector, len(sel))
	for i, r := range sel {
		if len(r.values) == 0 {
			r.values = nil
		}
		out[i] = r
	}
	return out
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name    string
		check   func(string) []string
		in      string
		wantErr bool
	}{
		{"key simple", IsQualifiedName, "app", false},
		{"key one char", IsQualifiedName, "a", false},
		{"key dots", IsQualifiedName, "a.b-c_d", false},
		{"key prefix", IsQualifiedName, "k8s.io/a", false},
		{"key prefix too long", IsQualifiedName, strings.Repeat("a", 254) + "/b", true},
		{"key prefix max", IsQualifiedName, strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61) + "/b", false},
		{"key prefix trailing dot", IsQualifiedName, "k8s./a", true},
		{"key prefix underscore", IsQualifiedName, "k_s/a", true},
		{"key empty", IsQualifiedName, "", true},
		{"key trailing dot", IsQualifiedName, "a.", true},
		{"key unicode", IsQualifiedName, "ä", true},
		{"value empty", IsValidLabelValue, "", false},
		{"value simple", IsValidLabelValue, "v1.2_3-x", false},
		{"value slash", IsValidLabelValue, "a/b", true},
		{"value space", IsValidLabelValue, "a b", true},
		{"value too long", IsValidLabelValue, strings.Repeat("a", 64), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.check(tt.in); (len(got) != 0) != tt.wantErr {
				t.Fatalf("check(%q) = %q, wantErr %v", tt.in, got, tt.wantErr)
			}
		})
	}
}
