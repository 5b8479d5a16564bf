package process

import (
	"os"
	"testing"
)

// TestLookPathSelf: the command `skiff` is this binary, not a PATH lookup.
func TestLookPathSelf(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := lookPath(SelfCommand)
	if err != nil || got != self {
		t.Fatalf("lookPath(%q) = %q, %v; want %q", SelfCommand, got, err, self)
	}
	if _, err := lookPath("surely-not-a-command"); err == nil {
		t.Fatal("an unknown command was found")
	}
}
