package fields

import (
	"reflect"
	"testing"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		want       string // canonical String()
		wantFields []string
	}{
		{"empty", "", "", []string{}},
		{"only commas", ",,", "", []string{}},
		{"equals", "metadata.name=web", "metadata.name=web", []string{"metadata.name"}},
		{"double equals written as equals", "metadata.name==web", "metadata.name=web", []string{"metadata.name"}},
		{"not equals", "spec.nodeName!=n1", "spec.nodeName!=n1", []string{"spec.nodeName"}},
		{"empty value", "spec.nodeName=", "spec.nodeName=", []string{"spec.nodeName"}},
		{"sorted", "status.phase=Running,metadata.namespace=default", "metadata.namespace=default,status.phase=Running", []string{"metadata.namespace", "status.phase"}},
		{"empty terms skipped", "a=1,,b=2,", "a=1,b=2", []string{"a", "b"}},
		{"fields deduplicated", "a=1,a!=2", "a!=2,a=1", []string{"a"}},
		{"escaped comma", `a=x\,y`, `a=x\,y`, []string{"a"}},
		{"escaped equals", `a=x\=y`, `a=x\=y`, []string{"a"}},
		{"escaped backslash", `a=x\\y`, `a=x\\y`, []string{"a"}},
		{"escaped comma does not split", `a=\,,b=c`, `a=\,,b=c`, []string{"a", "b"}},
		{"whitespace kept", "a = b", "a = b", []string{"a "}},
		{"first operator wins", "a!b=c", "a!b=c", []string{"a!b"}},
		{"empty field name", "=x", "=x", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := sel.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			if got := sel.Fields(); !reflect.DeepEqual(got, tt.wantFields) {
				t.Fatalf("Fields() = %q, want %q", got, tt.wantFields)
			}
			if got, want := sel.Empty(), tt.want == ""; got != want {
				t.Fatalf("Empty() = %v, want %v", got, want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"no operator", "a", "invalid selector: 'a'; can't understand 'a'"},
		{"no operator in second term", "a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"},
		{"bang only", "a!b", "invalid selector: 'a!b'; can't understand 'a!b'"},
		{"unescaped equals", "a=b=c", "invalid field selector: unescaped character in value: '='"},
		{"triple equals", "a===b", "invalid field selector: unescaped character in value: '='"},
		{"bad escape", `a=\x`, `invalid field selector: invalid escape sequence: \x`},
		{"bad escape multibyte", `a=\ä`, `invalid field selector: invalid escape sequence: \ä`},
		{"trailing backslash", `a=b\`, `invalid field selector: invalid escape sequence: \`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, sel)
			}
			if err.Error() != tt.want {
				t.Fatalf("error\n got: %s\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	sets := map[string]map[string]string{
		"none":    nil,
		"web-n1":  {"metadata.name": "web", "spec.nodeName": "n1"},
		"web-n2":  {"metadata.name": "web", "spec.nodeName": "n2"},
		"api-off": {"metadata.name": "api", "spec.nodeName": ""},
		"comma":   {"metadata.name": "a,b=c\\"},
	}
	tests := []struct {
		selector string
		want     []string
	}{
		{"", []string{"none", "web-n1", "web-n2", "api-off", "comma"}},
		{"metadata.name=web", []string{"web-n1", "web-n2"}},
		{"metadata.name==web", []string{"web-n1", "web-n2"}},
		{"metadata.name!=web", []string{"none", "api-off", "comma"}},
		{"spec.nodeName=", []string{"none", "api-off", "comma"}},
		{"spec.nodeName!=", []string{"web-n1", "web-n2"}},
		{"metadata.name=web,spec.nodeName!=n1", []string{"web-n2"}},
		{`metadata.name=a\,b\=c\\`, []string{"comma"}},
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
					t.Errorf("Matches(%s) = %v, want %v", name, got, want[name])
				}
			}
		})
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name       string
		sel        Selector
		want       string
		matches    map[string]string
		misses     map[string]string
		exactField string
		exact      string
		hasExact   bool
	}{
		{"everything", Everything(), "", nil, nil, "a", "", false},
		{"one term equal", OneTermEqualSelector("metadata.name", "x,y"), `metadata.name=x\,y`,
			map[string]string{"metadata.name": "x,y"}, map[string]string{"metadata.name": "x"}, "metadata.name", "x,y", true},
		{"one term not equal", OneTermNotEqualSelector("spec.nodeName", ""), "spec.nodeName!=",
			map[string]string{"spec.nodeName": "n1"}, map[string]string{}, "spec.nodeName", "", false},
		{"from set", SelectorFromSet(map[string]string{"b": "2", "a": "1"}), "a=1,b=2",
			map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}, "b", "2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if tt.matches != nil && !tt.sel.Matches(tt.matches) {
				t.Errorf("does not match %v", tt.matches)
			}
			if tt.misses != nil && tt.sel.Matches(tt.misses) {
				t.Errorf("matches %v", tt.misses)
			}
			v, ok := ExactMatch(tt.sel, tt.exactField)
			if v != tt.exact || ok != tt.hasExact {
				t.Errorf("ExactMatch(%q) = %q, %v; want %q, %v", tt.exactField, v, ok, tt.exact, tt.hasExact)
			}
			if tt.name == "everything" && !tt.sel.Matches(map[string]string{"x": "y"}) {
				t.Errorf("Everything does not match")
			}
		})
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	tests := []struct{ name, raw, escaped string }{
		{"plain", "abc", "abc"},
		{"empty", "", ""},
		{"all specials", `\,=`, `\\\,\=`},
		{"invalid utf8 kept", "a\xff,b", "a\xff\\,b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EscapeValue(tt.raw); got != tt.escaped {
				t.Fatalf("EscapeValue(%q) = %q, want %q", tt.raw, got, tt.escaped)
			}
			got, err := UnescapeValue(tt.escaped)
			if err != nil || got != tt.raw {
				t.Fatalf("UnescapeValue(%q) = %q, %v; want %q", tt.escaped, got, err, tt.raw)
			}
		})
	}
}
