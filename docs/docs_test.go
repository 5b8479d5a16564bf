package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's top directory, seen from this package's.
const repoRoot = ".."

// self is this file, which has to name the patterns it looks for.
const self = "docs/docs_test.go"

// outsidePointers match references to documents a clone does not have:
// the design notes, API contract, platform measurements and style guide
// that lived beside the repository, its "seed" texts, and issue numbers
// of a tracker that is not part of it. The .md names are matched
// case-sensitively, so that docs/api.md and docs/platform.md do not match.
var outsidePointers = []*regexp.Regexp{
	regexp.MustCompile(`PLATFORM\.md`),
	regexp.MustCompile(`DESIGN\.md`),
	regexp.MustCompile(`API\.md`),
	regexp.MustCompile(`STYLE\.md`),
	regexp.MustCompile(`\.\./shared`),
	regexp.MustCompile(`(?i)issue [0-9]`),
	regexp.MustCompile(`(?i)the\s+seeds`),
}

// TestNoPointersOutsideTheRepository fails, listing file:line, for every
// line of the repository's files that points at a document outside it.
func TestNoPointersOutsideTheRepository(t *testing.T) {
	files := repoFiles(t)
	if len(files) < 10 {
		t.Fatalf("found only %d files under %s: is this the repository?", len(files), repoRoot)
	}
	var bad []string
	for _, f := range files {
		if f == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree, not yet in the index
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary (docs/dashboard-service.png, ...)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, re := range outsidePointers {
				if m := re.FindString(line); m != "" {
					bad = append(bad, fmt.Sprintf("%s:%d: %q: %s", f, i+1, m, strings.TrimSpace(line)))
					break
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d lines point at documents a clone does not have; point at docs/ (file and section) or state the fact:\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}

// repoFiles lists the repository's files (slash-separated, relative to
// repoRoot): those git tracks plus untracked ones it does not ignore, or,
// without git, every file outside .git.
func repoFiles(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("git", "-C", repoRoot, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		if out, err := cmd.Output(); err == nil {
			var files []string
			seen := map[string]bool{}
			for _, f := range strings.Split(string(out), "\x00") {
				if f != "" && !seen[f] {
					seen[f] = true
					files = append(files, f)
				}
			}
			return files
		}
		// Not a git checkout (an unpacked archive): walk it.
	}
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRelativeLinksResolve checks every relative link and image in
// README.md and docs/*.md: the file must exist and, for a #section of a
// Markdown file, the heading must too (GitHub's anchors).
func TestRelativeLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
	if len(pages) < 2 {
		t.Fatalf("no docs/*.md under %s", repoRoot)
	}
	anchors := map[string]map[string]bool{} // cleaned path -> anchors
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := anchors[p]; ok {
			return a, nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(b))
		anchors[p] = a
		return a, nil
	}
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, page)
		for _, l := range markdownLinks(string(b)) {
			target := l.target
			if u, err := url.Parse(target); err == nil && u.Scheme != "" {
				continue // http:, https:, mailto:
			}
			if strings.HasPrefix(target, "//") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			file, err := url.PathUnescape(file)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, target, err)
				continue
			}
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			checked++
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s:%d: link %q: no such file", rel, l.line, target)
				continue
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, err := anchorsOf(filepath.Clean(dest))
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, target, err)
				continue
			}
			if !a[strings.ToLower(frag)] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s (it has: %s)",
					rel, l.line, target, file, frag, strings.Join(slices.Sorted(maps.Keys(a)), " "))
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no relative link to check")
	}
}

type link struct {
	target string
	line   int
}

var (
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	inlineCodeRE = regexp.MustCompile("`+[^`]*`+")
	headingRE    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// markdownLinks returns the inline links and images of a Markdown text,
// outside fenced code blocks and code spans.
func markdownLinks(text string) []link {
	var links []link
	forEachProseLine(text, func(n int, line string) {
		line = inlineCodeRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			links = append(links, link{target: m[1], line: n})
		}
	})
	return links
}

// headingAnchors returns the anchors GitHub gives a Markdown text's ATX
// headings: lower case, spaces to "-", punctuation dropped, and "-1",
// "-2", ... for repeats.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	count := map[string]int{}
	forEachProseLine(text, func(_ int, line string) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			return
		}
		s := slug(m[2])
		if n := count[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		count[s]++
	})
	return anchors
}

var mdLinkTextRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

func slug(heading string) string {
	heading = mdLinkTextRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// forEachProseLine calls f with each line (numbered from 1) that is not
// inside a fenced code block.
func forEachProseLine(text string, f func(n int, line string)) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" {
			if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
				fence = trimmed[:3]
				continue
			}
			f(n, line)
			continue
		}
		if strings.HasPrefix(trimmed, fence) {
			fence = ""
		}
	}
}

// TestSlug pins the anchor rules the link check relies on.
func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"The flow Skiff reproduces", "the-flow-skiff-reproduces"},
		{"`skiff logs` and `skiff trace`", "skiff-logs-and-skiff-trace"},
		{"A packet's path", "a-packets-path"},
		{"A real kernel with ip_vs, under qemu", "a-real-kernel-with-ip_vs-under-qemu"},
		{"From `kubectl apply` to a packet reaching a pod", "from-kubectl-apply-to-a-packet-reaching-a-pod"},
		{"Pods on a bridge, and a VIP", "pods-on-a-bridge-and-a-vip"},
		{"[docs](x.md) and more", "docs-and-more"},
	} {
		if got := slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}
