package kubectl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/api"
)

// manifest is one object read from -f.
type manifest struct {
	source string // file name, or "STDIN"
	obj    map[string]any
}

// fileOptions are the -f/-R flags of apply, create and delete.
type fileOptions struct {
	filenames []string
	recursive bool
}

func (f *fileOptions) addFlags(cmd *cobra.Command, what string) {
	cmd.Flags().StringSliceVarP(&f.filenames, "filename", "f", nil, "file, directory or - (stdin) of manifests "+what)
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "R", false, "process the directories of -f recursively")
}

// manifestExts are the file names a directory contributes, as kubectl's.
var manifestExts = []string{".json", ".yaml", ".yml"}

// read reads every manifest: files in order, directories sorted by name,
// "-" from in; multi-document YAML, JSON objects and JSON/YAML Lists.
func (f *fileOptions) read(in io.Reader) ([]manifest, error) {
	var out []manifest
	for _, name := range f.filenames {
		if name == "-" {
			data, err := io.ReadAll(in)
			if err != nil {
				return nil, fmt.Errorf("read stdin: %w", err)
			}
			ms, err := parseManifests("STDIN", data)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("the path %q does not exist", name)
			}
			return nil, err
		}
		var files []string
		if st.IsDir() {
			files, err = manifestFiles(name, f.recursive)
			if err != nil {
				return nil, err
			}
		} else {
			files = []string{name}
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			ms, err := parseManifests(file, data)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
	}
	return out, nil
}

// manifestFiles lists a directory's manifest files, sorted.
func manifestFiles(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(manifestExts, strings.ToLower(filepath.Ext(p))) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// parseManifests splits a file into objects.
func parseManifests(source string, data []byte) ([]manifest, error) {
	trimmed := bytes.TrimSpace(data)
	var docs [][]byte
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("error parsing %s: %w", source, err)
			}
			if len(raw) > 0 && raw[0] == '[' {
				var items []json.RawMessage
				if err := json.Unmarshal(raw, &items); err != nil {
					return nil, fmt.Errorf("error parsing %s: %w", source, err)
				}
				for _, it := range items {
					docs = append(docs, it)
				}
				continue
			}
			docs = append(docs, raw)
		}
	} else {
		for _, doc := range splitYAML(data) {
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("error parsing %s: %w", source, err)
			}
			docs = append(docs, j)
		}
	}
	var out []manifest
	for _, d := range docs {
		if t := bytes.TrimSpace(d); len(t) == 0 || string(t) == "null" {
			continue
		}
		m, err := decodeMap(d)
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: %w", source, err)
		}
		if kind, _ := m["kind"].(string); strings.HasSuffix(kind, "List") && m["items"] != nil {
			items, _ := m["items"].([]any)
			for _, it := range items {
				im, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("error parsing %s: a List item is not an object", source)
				}
				out = append(out, manifest{source: source, obj: im})
			}
			continue
		}
		out = append(out, manifest{source: source, obj: m})
	}
	return out, nil
}

// splitYAML splits a YAML stream at its "---" document markers.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.SplitN(line[3:], "#", 2)[0]) == "" {
			docs = append(docs, slices.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	docs = append(docs, cur.Bytes())
	return docs
}

// placed is a manifest resolved against the API: its resource, namespace
// and name.
type placed struct {
	manifest
	info *api.ResourceInfo
	ns   string
	name string
}

// place resolves a manifest's resource and namespace.
func (s *session) place(m manifest) (placed, error) {
	apiVersion, _ := m.obj["apiVersion"].(string)
	kind, _ := m.obj["kind"].(string)
	var missing []string
	if apiVersion == "" {
		missing = append(missing, "apiVersion not set")
	}
	if kind == "" {
		missing = append(missing, "kind not set")
	}
	if len(missing) > 0 {
		return placed{}, fmt.Errorf("error validating %q: error validating data: [%s]", m.source, strings.Join(missing, ", "))
	}
	name := str(m.obj, "metadata", "name")
	objNS := str(m.obj, "metadata", "namespace")
	info := api.LookupKind(s.resources, apiVersion, kind)
	if info == nil {
		return placed{}, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: no matches for kind %q in version %q\nensure CRDs are installed first",
			name, objNS, m.source, kind, apiVersion)
	}
	p := placed{manifest: m, info: info, name: name}
	if info.Namespaced {
		switch {
		case objNS == "":
			p.ns = s.ns
		case s.explicitNS && objNS != s.ns:
			//lint:ignore ST1005 kubectl's exact text
			return placed{}, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", objNS, s.ns, objNS)
		default:
			p.ns = objNS
		}
	}
	return p, nil
}
