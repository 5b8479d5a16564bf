package labels

import (
	"reflect"
	"testing"
)

// FuzzParseLabels checks that Parse never panics and that the canonical
// form of every accepted selector parses back to an equal selector whose
// String is unchanged.
func FuzzParseLabels(f *testing.F) {
	for _, s := range []string{
		"", "a", "!a", "a=b", "a==b", "a!=b", "a in (b,c)", "a notin (b)",
		"a in ()", "a in (,b,)", "x>1", "y<2", "k8s.io/app=web,!canary",
		" a = b , c in ( d ) ", "a,,b", "!!a", "a===b", "a in ((b))", "a\x00",
		"in in (in)", "notin notin (notin)", "a=b=c", "example.com/=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := Parse(s)
		if err != nil {
			if sel != nil {
				t.Fatalf("Parse(%q) returned a selector and error %v", s, err)
			}
			return
		}
		canon := sel.String()
		re, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", s, canon, err)
		}
		if !reflect.DeepEqual(normalize(re), normalize(sel)) {
			t.Fatalf("Parse(%q) = %#v, re-parse of %q = %#v", s, sel, canon, re)
		}
		if got := re.String(); got != canon {
			t.Fatalf("String not stable: %q then %q", canon, got)
		}
		if sel.Empty() != (canon == "") {
			t.Fatalf("Empty() = %v for %q", sel.Empty(), canon)
		}
		// Matching must not panic on an arbitrary set built from the input.
		sel.Matches(map[string]string{s: s, "a": s})
	})
}
