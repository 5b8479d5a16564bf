package patch

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Strategic merge patch directives.
const (
	directiveKey          = "$patch"
	directiveReplace      = "replace"
	directiveDelete       = "delete"
	retainKeysKey         = "$retainKeys"
	setElementOrderPrefix = "$setElementOrder/"
	deleteFromListPrefix  = "$deleteFromPrimitiveList/"
)

// schemaPath locates a value twice: by schema (list indexes written `[]`,
// looked up in the merge-key table) and for people (`spec.containers[2]`).
type schemaPath struct {
	schema, display string
}

func (p schemaPath) field(name string) schemaPath {
	if p.schema == "" {
		return schemaPath{schema: name, display: name}
	}
	return schemaPath{schema: p.schema + "." + name, display: p.display + "." + name}
}

func (p schemaPath) index(i int) schemaPath {
	return schemaPath{schema: p.schema + "[]", display: p.display + "[" + strconv.Itoa(i) + "]"}
}

func (p schemaPath) String() string {
	if p.display == "" {
		return "<root>"
	}
	return p.display
}

// invalid returns an ErrInvalidPatch naming the path.
func invalid(p schemaPath, format string, args ...any) error {
	return fmt.Errorf("patch: %w: %s: %s", ErrInvalidPatch, p, fmt.Sprintf(format, args...))
}

// strategicMerger applies strategic merge patches with one merge-key table.
type strategicMerger struct {
	keys map[string]listStrategy
}

// strategicMerge applies a strategic merge patch to original (which it
// modifies) and returns the result.
func strategicMerge(original, patch map[string]any, keys map[string]listStrategy) (map[string]any, error) {
	m := strategicMerger{keys: keys}
	out, remove, err := m.mergeMap(original, patch, schemaPath{})
	if err != nil {
		return nil, err
	}
	if remove {
		return map[string]any{}, nil
	}
	return out, nil
}

// mergeMap merges patch into orig (nil when the original has no such map)
// and returns the result, or remove=true when the patch says `$patch:
// delete`. It modifies orig.
func (m strategicMerger) mergeMap(orig, patch map[string]any, p schemaPath) (map[string]any, bool, error) {
	if d, ok := patch[directiveKey]; ok {
		switch d {
		case directiveReplace:
			rest := make(map[string]any, len(patch))
			for k, v := range patch {
				if k != directiveKey {
					rest[k] = v
				}
			}
			// Replacing is merging into nothing: this drops nulls and
			// resolves directives nested inside the replacement.
			out, _, err := m.mergeMap(nil, rest, p)
			return out, false, err
		case directiveDelete:
			return nil, true, nil
		default:
			return nil, false, invalid(p, "unknown %s directive %s", directiveKey, describe(d))
		}
	}
	if orig == nil {
		orig = make(map[string]any, len(patch))
	}

	// Sort out directives from fields; visit fields in a fixed order so that
	// errors are deterministic.
	var (
		fields     []string
		order      = map[string]any{}
		deletes    = map[string]any{}
		retain     []string
		haveRetain bool
	)
	for k, v := range patch {
		switch {
		case k == retainKeysKey:
			list, ok := v.([]any)
			if !ok {
				return nil, false, invalid(p, "%s must be a list of field names, got %s", retainKeysKey, kindOf(v))
			}
			haveRetain = true
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil, false, invalid(p, "%s must be a list of field names, found %s", retainKeysKey, kindOf(e))
				}
				retain = append(retain, s)
			}
		case strings.HasPrefix(k, setElementOrderPrefix):
			f := strings.TrimPrefix(k, setElementOrderPrefix)
			if f == "" {
				return nil, false, invalid(p, "%s names no field", k)
			}
			order[f] = v
			fields = append(fields, f)
		case strings.HasPrefix(k, deleteFromListPrefix):
			f := strings.TrimPrefix(k, deleteFromListPrefix)
			if f == "" {
				return nil, false, invalid(p, "%s names no field", k)
			}
			deletes[f] = v
			fields = append(fields, f)
		case strings.HasPrefix(k, "$"):
			return nil, false, invalid(p, "unknown directive %q", k)
		default:
			fields = append(fields, k)
		}
	}
	sort.Strings(fields)
	fields = slices.Compact(fields)

	if haveRetain {
		for _, f := range fields {
			if v, ok := patch[f]; ok && v != nil && !slices.Contains(retain, f) {
				return nil, false, invalid(p.field(f), "field is set by the patch but not listed in %s", retainKeysKey)
			}
		}
	}

	for _, f := range fields {
		fp := p.field(f)
		if del, ok := deletes[f]; ok {
			if err := m.deleteFromPrimitiveList(orig, f, del, fp); err != nil {
				return nil, false, err
			}
		}
		if v, ok := patch[f]; ok {
			if v == nil {
				delete(orig, f)
			} else {
				cur, present := orig[f]
				out, remove, err := m.mergeValue(cur, present, v, fp)
				if err != nil {
					return nil, false, err
				}
				if remove {
					delete(orig, f)
				} else {
					orig[f] = out
				}
			}
		}
		if o, ok := order[f]; ok {
			if err := m.setElementOrder(orig, f, o, fp); err != nil {
				return nil, false, err
			}
		}
	}

	if haveRetain {
		for k := range orig {
			if !slices.Contains(retain, k) {
				delete(orig, k)
			}
		}
	}
	return orig, false, nil
}

// mergeValue merges one non-null patch value into the original value cur
// (present reports whether there was one).
func (m strategicMerger) mergeValue(cur any, present bool, patch any, p schemaPath) (any, bool, error) {
	switch pv := patch.(type) {
	case map[string]any:
		om, _ := cur.(map[string]any) // a non-object original is replaced
		out, remove, err := m.mergeMap(om, pv, p)
		if err != nil {
			return nil, false, err
		}
		if remove && !present {
			return nil, true, nil
		}
		return out, remove, nil
	case []any:
		ol, _ := cur.([]any)
		out, err := m.mergeList(ol, pv, p)
		return out, false, err
	default:
		return patch, false, nil
	}
}

// mergeList merges the patch list into orig by the strategy the merge-key
// table gives for p.
func (m strategicMerger) mergeList(orig, patch []any, p schemaPath) ([]any, error) {
	st, ok := m.keys[p.schema]
	switch {
	case !ok:
		return m.replaceList(patch, p)
	case st.set:
		return m.mergeSet(orig, patch, p)
	default:
		return m.mergeByKey(orig, patch, st.mergeKey, p)
	}
}

// replaceList builds the value of an atomic list: the patch's elements,
// each merged into nothing so that nulls and directives inside them do not
// reach the stored object. An element that says `$patch: delete` is dropped.
func (m strategicMerger) replaceList(patch []any, p schemaPath) ([]any, error) {
	out := make([]any, 0, len(patch))
	for i, e := range patch {
		switch ev := e.(type) {
		case map[string]any:
			v, remove, err := m.mergeMap(nil, ev, p.index(i))
			if err != nil {
				return nil, err
			}
			if !remove {
				out = append(out, v)
			}
		case []any:
			v, err := m.replaceList(ev, p.index(i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		default:
			out = append(out, e)
		}
	}
	return out, nil
}

// mergeSet merges a list of primitives as a set, keeping the original's
// order and appending new values. A `{"$patch": "replace"}` element makes
// the patch's values replace the list.
func (m strategicMerger) mergeSet(orig, patch []any, p schemaPath) ([]any, error) {
	var values []any
	replace := false
	for i, e := range patch {
		if em, ok := e.(map[string]any); ok {
			if d, ok := em[directiveKey]; ok && d == directiveReplace && len(em) == 1 {
				replace = true
				continue
			}
			return nil, invalid(p.index(i), "list is merged as a set of primitive values, found an object")
		}
		if _, ok := e.([]any); ok {
			return nil, invalid(p.index(i), "list is merged as a set of primitive values, found a list")
		}
		values = append(values, e)
	}
	base := orig
	if replace {
		base = nil
	}
	out := make([]any, 0, len(base)+len(values))
	seen := make(map[string]bool, len(base)+len(values))
	for _, v := range slices.Concat(base, values) {
		k, ok := primitiveKey(v)
		if ok && seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, v)
	}
	return out, nil
}

// mergeByKey merges a list of objects element by element, matching elements
// on mergeKey: a patch element merges into the original element with the
// same key, or is appended. `{"<key>": v, "$patch": "delete"}` deletes the
// elements with key v; an element with `$patch: replace` makes the patch's
// other elements replace the whole list.
//
// It takes time linear in the lengths of both lists: the elements are
// indexed by key once. A patch element matches the first element with its
// key, which may be one an earlier element of the same patch appended. A
// merge never changes an element's key (the patch element holds it, and
// `$retainKeys` may not drop a field the patch sets), so the index stays
// right as elements merge.
func (m strategicMerger) mergeByKey(orig, patch []any, mergeKey string, p schemaPath) ([]any, error) {
	type entry struct {
		i   int
		obj map[string]any
		key string
	}
	var (
		regular []entry
		deleted map[string]bool
	)
	replace := false
	for i, e := range patch {
		ep := p.index(i)
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, invalid(ep, "list is merged by key %q, found %s instead of an object", mergeKey, kindOf(e))
		}
		if d, ok := obj[directiveKey]; ok {
			switch d {
			case directiveReplace:
				replace = true
			case directiveDelete:
				kv, ok := obj[mergeKey]
				if !ok {
					return nil, invalid(ep, "%s: %s needs the merge key %q", directiveKey, directiveDelete, mergeKey)
				}
				key, ok := primitiveKey(kv)
				if !ok {
					return nil, invalid(ep.field(mergeKey), "merge key must be a string, number or boolean, got %s", kindOf(kv))
				}
				if deleted == nil {
					deleted = make(map[string]bool)
				}
				deleted[key] = true
			default:
				return nil, invalid(ep, "unknown %s directive %s", directiveKey, describe(d))
			}
			continue
		}
		kv, ok := obj[mergeKey]
		if !ok {
			return nil, invalid(ep, "missing the merge key %q", mergeKey)
		}
		key, ok := primitiveKey(kv)
		if !ok {
			return nil, invalid(ep.field(mergeKey), "merge key must be a string, number or boolean, got %s", kindOf(kv))
		}
		regular = append(regular, entry{i: i, obj: obj, key: key})
	}

	if replace {
		out := make([]any, 0, len(regular))
		for _, r := range regular {
			v, _, err := m.mergeMap(nil, r.obj, p.index(r.i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}

	// The original's elements minus the deleted ones, and where the first
	// element of each key is.
	out := make([]any, 0, len(orig)+len(regular))
	at := make(map[string]int, len(orig)+len(regular))
	for _, o := range orig {
		k, ok := elementKey(o, mergeKey)
		if ok && deleted[k] {
			continue
		}
		if _, seen := at[k]; ok && !seen {
			at[k] = len(out)
		}
		out = append(out, o)
	}
	for _, r := range regular {
		i, found := at[r.key]
		var cur map[string]any
		if found {
			cur = out[i].(map[string]any) // elementKey matched only objects
		}
		v, _, err := m.mergeMap(cur, r.obj, p.index(r.i))
		if err != nil {
			return nil, err
		}
		if found {
			out[i] = v
		} else {
			at[r.key] = len(out)
			out = append(out, v)
		}
	}
	return out, nil
}

// deleteFromPrimitiveList handles `$deleteFromPrimitiveList/<field>`: it
// removes the listed values from the original's primitive list, if there
// is one.
func (m strategicMerger) deleteFromPrimitiveList(orig map[string]any, field string, del any, p schemaPath) error {
	values, ok := del.([]any)
	if !ok {
		return invalid(p, "%s%s must be a list, got %s", deleteFromListPrefix, field, kindOf(del))
	}
	drop := make(map[string]bool, len(values))
	for _, v := range values {
		k, ok := primitiveKey(v)
		if !ok {
			return invalid(p, "%s%s must list primitive values, found %s", deleteFromListPrefix, field, kindOf(v))
		}
		drop[k] = true
	}
	list, ok := orig[field].([]any)
	if !ok {
		// Absent, or not a list (which the patch may be replacing):
		// nothing to delete from.
		return nil
	}
	orig[field] = slices.DeleteFunc(slices.Clone(list), func(e any) bool {
		k, ok := primitiveKey(e)
		return ok && drop[k]
	})
	return nil
}

// setElementOrder handles `$setElementOrder/<field>`: the elements it names
// (by merge key for lists of objects, by value for primitive lists) are
// put in its order, within the positions they already occupy; elements it
// does not name stay where they are. It is accepted and ignored for atomic
// lists, which the patch replaces anyway.
func (m strategicMerger) setElementOrder(orig map[string]any, field string, order any, p schemaPath) error {
	want, ok := order.([]any)
	if !ok {
		return invalid(p, "%s%s must be a list, got %s", setElementOrderPrefix, field, kindOf(order))
	}
	st, ok := m.keys[p.schema]
	if !ok {
		return nil
	}
	identity := func(e any) (string, bool) {
		if st.set {
			return primitiveKey(e)
		}
		return elementKey(e, st.mergeKey)
	}
	rank := make(map[string]int, len(want))
	for i, w := range want {
		k, ok := identity(w)
		if !ok {
			if st.set {
				return invalid(p, "%s%s must list primitive values", setElementOrderPrefix, field)
			}
			return invalid(p, "%s%s must list objects with the merge key %q", setElementOrderPrefix, field, st.mergeKey)
		}
		if _, dup := rank[k]; !dup {
			rank[k] = i
		}
	}
	list, ok := orig[field].([]any)
	if !ok {
		return nil
	}
	type namedElement struct {
		e    any
		rank int
	}
	var slots []int
	var named []namedElement
	for i, e := range list {
		if k, ok := identity(e); ok {
			if r, ok := rank[k]; ok {
				slots = append(slots, i)
				named = append(named, namedElement{e: e, rank: r})
			}
		}
	}
	sort.SliceStable(named, func(a, b int) bool { return named[a].rank < named[b].rank })
	out := slices.Clone(list)
	for j, slot := range slots {
		out[slot] = named[j].e
	}
	orig[field] = out
	return nil
}

// elementKey returns the canonical merge-key value of a list element, if it
// is an object holding a primitive value for mergeKey.
func elementKey(e any, mergeKey string) (string, bool) {
	obj, ok := e.(map[string]any)
	if !ok {
		return "", false
	}
	v, ok := obj[mergeKey]
	if !ok {
		return "", false
	}
	return primitiveKey(v)
}

// primitiveKey returns a canonical string for a JSON primitive, so that
// equal values compare equal whatever their spelling (80 and 80.0).
func primitiveKey(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case string:
		return "s:" + x, true
	case bool:
		return "b:" + strconv.FormatBool(x), true
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return "n:" + strconv.FormatInt(i, 10), true
			}
			return "n:" + strconv.FormatFloat(f, 'g', -1, 64), true
		}
		return "n:" + string(x), true
	}
	return "", false
}

// describe renders a directive value for an error message.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return kindOf(v)
}
