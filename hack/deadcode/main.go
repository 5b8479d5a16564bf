// Command deadcode fails when the skiff binary can reach a call that
// turns off the Go linker's dead-method elimination.
//
// The linker drops the exported methods no code can call, unless the
// program can reach reflect.Value.Method or MethodByName with a name it
// cannot see (text/template and html/template executing, for one): then
// every exported method of every reachable type stays. For skiff that was
// 7.5 MB more binary and ~3 MB more memory in every skiff process (the
// agent, each process-runtime pod), mostly pages of code and tables the
// kernel maps around what package initialisers touch.
//
// Usage (from the module root; make vet runs it for both builds):
//
//	go run ./hack/deadcode [-tags grpcnotrace] [package]
//
// It builds the package (default ./cmd/skiff) with -ldflags=-dumpdep,
// and for each symbol the linker marked <ReflectMethod> prints one chain
// of references from the program's entry that reaches it.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	tags := flag.String("tags", "", "build tags, comma-separated")
	flag.Parse()
	pkg := "./cmd/skiff"
	if flag.NArg() > 0 {
		pkg = flag.Arg(0)
	}
	if err := run(pkg, *tags, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "deadcode:", err)
		os.Exit(1)
	}
}

func run(pkg, tags string, out io.Writer) error {
	cmd := exec.Command("go", "build", "-tags", tags, "-ldflags=-dumpdep", "-o", os.DevNull, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var dump bytes.Buffer // -dumpdep writes the graph to stderr, with any build error
	cmd.Stderr = &dump
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, lastLines(dump.String(), 20))
	}
	g, marked := parseDump(&dump)
	if len(marked) == 0 {
		fmt.Fprintf(out, "deadcode: %s (tags %q): no reachable reflect method call; dead methods are eliminated\n", pkg, tags)
		return nil
	}
	for _, sym := range marked {
		fmt.Fprintf(out, "%s reaches a reflect method call (<ReflectMethod>):\n  %s\n", pkg, strings.Join(g.pathTo(sym), "\n  -> "))
	}
	return fmt.Errorf("%s (tags %q): %d symbols turn off dead-method elimination (see above)", pkg, tags, len(marked))
}

// graph is the linker's reference graph, edges reversed.
type graph struct {
	refBy map[string][]string
}

// parseDump reads -dumpdep's "a -> b" lines (each name may end in
// " <Attribute>"): the graph and the symbols marked ReflectMethod.
func parseDump(r io.Reader) (*graph, []string) {
	g := &graph{refBy: map[string][]string{}}
	seen := map[string]bool{}
	var marked []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		fromName, attrs, _ := strings.Cut(from, " <")
		toName, _, _ := strings.Cut(to, " <")
		if strings.Contains(attrs, "ReflectMethod") && !seen[fromName] {
			seen[fromName] = true
			marked = append(marked, fromName)
		}
		g.refBy[toName] = append(g.refBy[toName], fromName)
	}
	return g, marked
}

// pathTo is a shortest chain of references from a root to sym.
func (g *graph) pathTo(sym string) []string {
	next := map[string]string{sym: ""}
	queue := []string{sym}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if len(g.refBy[n]) == 0 {
			var path []string
			for s := n; s != ""; s = next[s] {
				path = append(path, s)
			}
			return path
		}
		for _, p := range g.refBy[n] {
			if _, ok := next[p]; !ok {
				next[p] = n
				queue = append(queue, p)
			}
		}
	}
	return []string{sym}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
