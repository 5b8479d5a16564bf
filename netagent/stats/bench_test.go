package stats

import (
	"os"
	"testing"
)

// BenchmarkProcSnapshot is one read of this machine's /proc, what a
// scrape of a process-runtime node costs once a second at most
// (runtime/process caches it), and Tree over it for this process.
func BenchmarkProcSnapshot(b *testing.B) {
	for b.Loop() {
		s, err := Proc{}.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Tree(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
}
