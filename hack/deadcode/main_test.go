package main

import (
	"slices"
	"strings"
	"testing"
)

// TestParseDump: the marked symbols are found with a shortest chain from
// the entry, and names carrying attributes are read without them.
func TestParseDump(t *testing.T) {
	dump := strings.Join([]string{
		"_ -> main.main",
		"main.main -> pkg.A",
		"main.main -> pkg.B <UsedInIface>",
		"pkg.A -> pkg.C",
		"pkg.C -> text/template.(*state).evalField",
		"pkg.B <UsedInIface> -> text/template.(*state).evalField",
		"text/template.(*state).evalField <ReflectMethod> -> reflect.Value.MethodByName",
		"text/template.(*state).evalField <ReflectMethod> -> go:string.\"x\"",
		"not an edge line",
	}, "\n")
	g, marked := parseDump(strings.NewReader(dump))
	if !slices.Equal(marked, []string{"text/template.(*state).evalField"}) {
		t.Fatalf("marked %q", marked)
	}
	path := g.pathTo(marked[0])
	want := []string{"_", "main.main", "pkg.B", "text/template.(*state).evalField"}
	if !slices.Equal(path, want) {
		t.Fatalf("path %q, want %q", path, want)
	}
	if _, marked := parseDump(strings.NewReader("_ -> main.main\nmain.main -> fmt.Println\n")); len(marked) != 0 {
		t.Fatalf("marked %q in a dump without ReflectMethod", marked)
	}
}
