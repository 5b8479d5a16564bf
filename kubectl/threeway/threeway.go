package threeway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/skiff-dev/skiff/apiserver/patch"
)

// listStrategy is how the server's strategic merge treats a list.
type listStrategy struct {
	mergeKey string
	set      bool
}

// mergeKeys is apiserver/patch's table (the server's), so the client-side
// patch merges lists exactly as the server will.
var mergeKeys = buildMergeKeys()

func buildMergeKeys() map[string]listStrategy {
	t := map[string]listStrategy{}
	for p, s := range patch.ListStrategies() {
		t[p] = listStrategy{mergeKey: s.MergeKey, set: s.Set}
	}
	return t
}

// Directives of a strategic merge patch.
const (
	directivePatch          = "$patch"
	directiveDelete         = "delete"
	deleteFromPrimitiveList = "$deleteFromPrimitiveList/"
)

// Decode decodes a JSON object keeping numbers as json.Number.
func Decode(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("threeway: decode: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("threeway: decode: not a JSON object")
	}
	return m, nil
}

// StripNulls returns a copy of v without the null values of its objects
// (list elements that are null are kept).
func StripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			out[k] = StripNulls(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = StripNulls(e)
		}
		return out
	}
	return v
}

type options struct {
	ignoreDeletions bool
	ignoreChanges   bool // changes and additions
}

// ThreeWay computes the apply patch from the last applied configuration
// original (nil when there is none), the new configuration modified and
// the live object current.
func ThreeWay(original, modified, current map[string]any) map[string]any {
	delta := diffMaps(current, modified, "", options{ignoreDeletions: true})
	if original == nil {
		return delta
	}
	deletions := diffMaps(original, modified, "", options{ignoreChanges: true})
	return mergePatches(deletions, delta, "")
}

// TwoWay computes the patch that turns original into modified, deletions
// included.
func TwoWay(original, modified map[string]any) map[string]any {
	return diffMaps(original, modified, "", options{})
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// diffMaps is the patch from `from` to `to` at schema path p.
func diffMaps(from, to map[string]any, p string, o options) map[string]any {
	patch := map[string]any{}
	for k, tv := range to {
		fv, ok := from[k]
		cp := join(p, k)
		if !ok {
			if !o.ignoreChanges {
				patch[k] = tv
			}
			continue
		}
		switch t := tv.(type) {
		case map[string]any:
			if f, ok := fv.(map[string]any); ok {
				if sub := diffMaps(f, t, cp, o); len(sub) > 0 {
					patch[k] = sub
				}
				continue
			}
		case []any:
			if f, ok := fv.([]any); ok {
				diffLists(patch, k, f, t, cp, o)
				continue
			}
		}
		if !o.ignoreChanges && !reflect.DeepEqual(fv, tv) {
			patch[k] = tv
		}
	}
	if !o.ignoreDeletions {
		for k := range from {
			if _, ok := to[k]; !ok {
				patch[k] = nil
			}
		}
	}
	return patch
}

// keyed reports whether every element of the lists is an object holding
// key.
func keyed(key string, lists ...[]any) bool {
	for _, l := range lists {
		for _, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := m[key]; !ok {
				return false
			}
		}
	}
	return true
}

// keyOf renders a merge key value for comparison.
func keyOf(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// diffLists adds to patch the entries for list field k (schema path p).
func diffLists(patch map[string]any, k string, from, to []any, p string, o options) {
	st := mergeKeys[p]
	switch {
	case st.mergeKey != "" && keyed(st.mergeKey, from, to):
		key := st.mergeKey
		byKey := make(map[string]map[string]any, len(from))
		for _, e := range from {
			m := e.(map[string]any)
			byKey[keyOf(m[key])] = m
		}
		var out []any
		inTo := make(map[string]bool, len(to))
		for _, e := range to {
			m := e.(map[string]any)
			kv := keyOf(m[key])
			inTo[kv] = true
			f, ok := byKey[kv]
			if !ok {
				if !o.ignoreChanges {
					out = append(out, m)
				}
				continue
			}
			if sub := diffMaps(f, m, p+"[]", o); len(sub) > 0 {
				sub[key] = m[key]
				out = append(out, sub)
			}
		}
		if !o.ignoreDeletions {
			for _, e := range from {
				m := e.(map[string]any)
				if !inTo[keyOf(m[key])] {
					out = append(out, map[string]any{key: m[key], directivePatch: directiveDelete})
				}
			}
		}
		if len(out) > 0 {
			patch[k] = out
		}
	case st.set:
		has := func(l []any, v any) bool {
			return slices.ContainsFunc(l, func(e any) bool { return reflect.DeepEqual(e, v) })
		}
		var adds, dels []any
		if !o.ignoreChanges {
			for _, v := range to {
				if !has(from, v) {
					adds = append(adds, v)
				}
			}
		}
		if !o.ignoreDeletions {
			for _, v := range from {
				if !has(to, v) {
					dels = append(dels, v)
				}
			}
		}
		if len(adds) > 0 {
			patch[k] = adds
		}
		if len(dels) > 0 {
			patch[deleteFromPrimitiveList+k] = dels
		}
	default:
		if !o.ignoreChanges && !reflect.DeepEqual(from, to) {
			patch[k] = to
		}
	}
}

// mergePatches combines two patches for the same object; b wins where
// both set a value, objects merge, keyed lists merge by key.
func mergePatches(a, b map[string]any, p string) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, bv := range b {
		av, ok := out[k]
		if !ok {
			out[k] = bv
			continue
		}
		cp := join(p, k)
		am, aIsMap := av.(map[string]any)
		bm, bIsMap := bv.(map[string]any)
		if aIsMap && bIsMap {
			out[k] = mergePatches(am, bm, cp)
			continue
		}
		al, aIsList := av.([]any)
		bl, bIsList := bv.([]any)
		if st := mergeKeys[cp]; aIsList && bIsList && st.mergeKey != "" && keyed(st.mergeKey, al, bl) {
			merged := slices.Clone(al)
			for _, e := range bl {
				m := e.(map[string]any)
				i := slices.IndexFunc(merged, func(x any) bool {
					return keyOf(x.(map[string]any)[st.mergeKey]) == keyOf(m[st.mergeKey])
				})
				if i < 0 {
					merged = append(merged, m)
					continue
				}
				merged[i] = mergePatches(merged[i].(map[string]any), m, cp+"[]")
			}
			out[k] = merged
			continue
		}
		out[k] = bv
	}
	return out
}
