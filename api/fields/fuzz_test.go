package fields

import (
	"reflect"
	"testing"
)

// FuzzParseFields checks that Parse never panics and that the canonical
// form of every accepted selector parses back to an equal selector.
func FuzzParseFields(f *testing.F) {
	for _, s := range []string{
		"", "a=b", "a==b", "a!=b", "a=b,c!=d", `a=\,\=\\`, `a\=b`, `a\,b=c`,
		"a!==b", "a===b", "=", "!=", ",", `a=\`, "a = b", "x!b==c,d",
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
		if !reflect.DeepEqual(nonNil(re), nonNil(sel)) {
			t.Fatalf("Parse(%q) = %#v, re-parse of %q = %#v", s, sel, canon, re)
		}
		if got := re.String(); got != canon {
			t.Fatalf("String not stable: %q then %q", canon, got)
		}
		sel.Matches(map[string]string{s: s})
		sel.Fields()
	})
}

func nonNil(s Selector) Selector {
	if sel, ok := s.(selector); ok && len(sel) == 0 {
		return selector{}
	}
	return s
}
