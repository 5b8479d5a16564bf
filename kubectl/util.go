package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// decodeMap decodes a JSON object keeping numbers exact.
func decodeMap(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// joinMap renders a string map as k<kv>v joined by sep, sorted by key.
func joinMap(m map[string]string, kv, sep string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+kv+m[k])
	}
	return strings.Join(parts, sep)
}

// toJSON renders v as kubectl -o json does: keys sorted (v is a map),
// four-space indent, a final newline.
func toJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// toYAML renders v as kubectl -o yaml does (sigs.k8s.io/yaml: keys sorted,
// two-space indent).
func toYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(data)
}

// str reads a nested string field of a decoded object.
func str(m map[string]any, path ...string) string {
	v := nested(m, path...)
	s, _ := v.(string)
	return s
}

// nested reads a nested field of a decoded object; nil when absent.
func nested(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// setNested sets a nested field, creating objects on the way.
func setNested(m map[string]any, v any, path ...string) {
	cur := m
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
}

// plural picks kubectl's singular or plural wording.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
