package kubectl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/skiff-dev/skiff/kubectl/jsonpath"
)

// outputKind is what -o asks for.
type outputKind int

const (
	outTable outputKind = iota // default and wide
	outJSON
	outYAML
	outName
	outJSONPath
	outCustomColumns
)

// outputFormat is a parsed -o value.
type outputFormat struct {
	kind    outputKind
	wide    bool
	tmpl    *jsonpath.Template
	columns []customColumn
}

// customColumn is one HEADER:.json.path of -o custom-columns.
type customColumn struct {
	header string
	path   string
}

const allowedFormats = "custom-columns, json, jsonpath, name, wide, yaml"

// parseOutput reads -o.
func parseOutput(s string) (outputFormat, error) {
	name, arg, _ := strings.Cut(s, "=")
	switch name {
	case "":
		return outputFormat{kind: outTable}, nil
	case "wide":
		return outputFormat{kind: outTable, wide: true}, nil
	case "json":
		return outputFormat{kind: outJSON}, nil
	case "yaml":
		return outputFormat{kind: outYAML}, nil
	case "name":
		return outputFormat{kind: outName}, nil
	case "jsonpath":
		if arg == "" {
			return outputFormat{}, usageError("template format specified but no template given")
		}
		t, err := jsonpath.Parse(arg)
		if err != nil {
			return outputFormat{}, usageError("error parsing jsonpath %s, %v", arg, err)
		}
		return outputFormat{kind: outJSONPath, tmpl: t}, nil
	case "custom-columns":
		if arg == "" {
			return outputFormat{}, usageError("custom-columns format specified but no custom columns given")
		}
		var cols []customColumn
		for _, part := range strings.Split(arg, ",") {
			h, p, ok := strings.Cut(part, ":")
			if !ok || h == "" || p == "" {
				return outputFormat{}, usageError("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
			}
			if _, err := jsonpath.Eval(p, map[string]any{}); err != nil {
				return outputFormat{}, usageError("error parsing jsonpath %s, %v", p, err)
			}
			cols = append(cols, customColumn{header: h, path: p})
		}
		return outputFormat{kind: outCustomColumns, columns: cols}, nil
	}
	return outputFormat{}, usageError("unable to match a printer suitable for the output format %q, allowed formats are: %s", s, allowedFormats)
}

// printObject writes one object (or a List) in a non-table format.
func printObject(w io.Writer, f outputFormat, obj map[string]any, ref string) error {
	switch f.kind {
	case outJSON:
		data, err := toJSON(obj)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case outYAML:
		data, err := toYAML(obj)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case outName:
		_, err := fmt.Fprintln(w, ref)
		return err
	case outJSONPath:
		// the template sees plain JSON values, as kubectl's does
		return f.tmpl.Execute(w, obj)
	}
	return fmt.Errorf("unsupported output format")
}

// listObject wraps objects as kubectl's List.
func listObject(items []map[string]any) map[string]any {
	list := make([]any, len(items))
	for i, it := range items {
		list[i] = it
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"items":      list,
		"metadata":   map[string]any{"resourceVersion": ""},
	}
}

// customColumnRows renders objects as -o custom-columns.
func customColumnRows(cols []customColumn, objs []map[string]any, noHeaders bool) [][]string {
	var rows [][]string
	if !noHeaders {
		var h []string
		for _, c := range cols {
			h = append(h, c.header)
		}
		rows = append(rows, h)
	}
	for _, o := range objs {
		var r []string
		for _, c := range cols {
			vals, _ := jsonpath.Eval(c.path, o)
			var parts []string
			for _, v := range vals {
				parts = append(parts, cellText(v))
			}
			text := strings.Join(parts, ",")
			if len(vals) == 0 {
				text = "<none>"
			}
			r = append(r, text)
		}
		rows = append(rows, r)
	}
	return rows
}

// rawItems splits a list answer into its items and resourceVersion.
func rawItems(data []byte) ([]json.RawMessage, string, error) {
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, "", fmt.Errorf("decode list: %w", err)
	}
	return list.Items, list.Metadata.ResourceVersion, nil
}
