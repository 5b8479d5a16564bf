package apiserver

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The OpenAPI v2 document in protobuf: the wire form of gnostic's
// openapi_v2.Document (github.com/google/gnostic-models, OpenAPIv2.proto),
// which client-go's OpenAPISchema asks for (and only for) and kubectl up to
// 1.26 needs for `apply` validation and `explain`. It is encoded from the
// JSON document by hand for the constructs the generator emits — Skiff takes
// no protobuf dependency for it. Field numbers are OpenAPIv2.proto's.

type pbuf []byte

func (b *pbuf) key(num, wire int) { *b = binary.AppendUvarint(*b, uint64(num)<<3|uint64(wire)) }

func (b *pbuf) bytes(num int, v []byte) {
	b.key(num, 2)
	*b = binary.AppendUvarint(*b, uint64(len(v)))
	*b = append(*b, v...)
}

func (b *pbuf) str(num int, v string) {
	if v != "" {
		b.bytes(num, []byte(v))
	}
}

func (b *pbuf) boolean(num int, v bool) {
	if v {
		b.key(num, 0)
		*b = append(*b, 1)
	}
}

func (b *pbuf) msg(num int, m pbuf) { b.bytes(num, m) }

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pbExtensions encodes the x-* keys of m as NamedAny{name, Any{yaml}}; the
// value is its JSON text, which is YAML.
func pbExtensions(b *pbuf, num int, m map[string]any) error {
	for _, k := range sortedAnyKeys(m) {
		if !strings.HasPrefix(k, "x-") {
			continue
		}
		v, err := json.Marshal(m[k])
		if err != nil {
			return err
		}
		var anyMsg, named pbuf
		anyMsg.str(2, string(v)+"\n")
		named.str(1, k)
		named.msg(2, anyMsg)
		b.msg(num, named)
	}
	return nil
}

func pbSchema(m map[string]any) (pbuf, error) {
	var b pbuf
	b.str(1, str(m, "$ref"))
	b.str(2, str(m, "format"))
	b.str(4, str(m, "description"))
	for _, r := range toStringList(m["required"]) {
		b.bytes(19, []byte(r))
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		s, err := pbSchema(ap)
		if err != nil {
			return nil, err
		}
		var item pbuf
		item.msg(1, s)
		b.msg(21, item)
	}
	if t := str(m, "type"); t != "" {
		var item pbuf
		item.str(1, t)
		b.msg(22, item)
	}
	if it, ok := m["items"].(map[string]any); ok {
		s, err := pbSchema(it)
		if err != nil {
			return nil, err
		}
		var item pbuf
		item.msg(1, s)
		b.msg(23, item)
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, a := range all {
			s, err := pbSchema(a.(map[string]any))
			if err != nil {
				return nil, err
			}
			b.msg(24, s)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		var p pbuf
		for _, name := range sortedAnyKeys(props) {
			s, err := pbSchema(props[name].(map[string]any))
			if err != nil {
				return nil, err
			}
			var named pbuf
			named.str(1, name)
			named.msg(2, s)
			p.msg(1, named)
		}
		b.msg(25, p)
	}
	return b, pbExtensions(&b, 31, m)
}

func toStringList(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = l
	}
	return out
}

func pbParameter(m map[string]any) (pbuf, error) {
	var param pbuf
	required, _ := m["required"].(bool)
	unique, _ := m["uniqueItems"].(bool)
	switch in := str(m, "in"); in {
	case "body":
		s, err := pbSchema(m["schema"].(map[string]any))
		if err != nil {
			return nil, err
		}
		var body pbuf
		body.str(2, str(m, "name"))
		body.str(3, in)
		body.boolean(4, required)
		body.msg(5, s)
		param.msg(1, body)
	case "query", "path":
		var sub, nonBody pbuf
		sub.boolean(1, required)
		sub.str(2, in)
		sub.str(4, str(m, "name"))
		if in == "query" {
			sub.str(6, str(m, "type"))
			sub.boolean(20, unique)
			nonBody.msg(3, sub)
		} else {
			sub.str(5, str(m, "type"))
			sub.boolean(19, unique)
			nonBody.msg(4, sub)
		}
		param.msg(2, nonBody)
	default:
		return nil, fmt.Errorf("apiserver: openapi protobuf: parameter in %q", in)
	}
	var item pbuf
	item.msg(1, param)
	return item, nil
}

func pbOperation(m map[string]any) (pbuf, error) {
	var b pbuf
	b.str(5, str(m, "operationId"))
	for _, p := range toStringList(m["produces"]) {
		b.bytes(6, []byte(p))
	}
	for _, c := range toStringList(m["consumes"]) {
		b.bytes(7, []byte(c))
	}
	if params, ok := m["parameters"].([]any); ok {
		for _, p := range params {
			item, err := pbParameter(p.(map[string]any))
			if err != nil {
				return nil, err
			}
			b.msg(8, item)
		}
	}
	if resps, ok := m["responses"].(map[string]any); ok {
		var rs pbuf
		for _, code := range sortedAnyKeys(resps) {
			r := resps[code].(map[string]any)
			var resp pbuf
			resp.str(1, str(r, "description"))
			if s, ok := r["schema"].(map[string]any); ok {
				sch, err := pbSchema(s)
				if err != nil {
					return nil, err
				}
				var item pbuf
				item.msg(1, sch)
				resp.msg(2, item)
			}
			var value, named pbuf
			value.msg(1, resp)
			named.str(1, code)
			named.msg(2, value)
			rs.msg(1, named)
		}
		b.msg(9, rs)
	}
	return b, pbExtensions(&b, 13, m)
}

// openAPIV2Protobuf encodes the generated v2 JSON document as protobuf.
func openAPIV2Protobuf(doc []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("apiserver: openapi protobuf: %w", err)
	}
	var b pbuf
	b.str(1, str(m, "swagger"))
	if info, ok := m["info"].(map[string]any); ok {
		var i pbuf
		i.str(1, str(info, "title"))
		i.str(2, str(info, "version"))
		b.msg(2, i)
	}
	var paths pbuf
	ps, _ := m["paths"].(map[string]any)
	for _, p := range sortedAnyKeys(ps) {
		item := ps[p].(map[string]any)
		var pi pbuf
		for _, verb := range []struct {
			name string
			num  int
		}{{"get", 2}, {"put", 3}, {"post", 4}, {"delete", 5}, {"patch", 8}} {
			op, ok := item[verb.name].(map[string]any)
			if !ok {
				continue
			}
			o, err := pbOperation(op)
			if err != nil {
				return nil, err
			}
			pi.msg(verb.num, o)
		}
		var named pbuf
		named.str(1, p)
		named.msg(2, pi)
		paths.msg(2, named)
	}
	b.msg(8, paths)
	var defs pbuf
	ds, _ := m["definitions"].(map[string]any)
	for _, name := range sortedAnyKeys(ds) {
		s, err := pbSchema(ds[name].(map[string]any))
		if err != nil {
			return nil, err
		}
		var named pbuf
		named.str(1, name)
		named.msg(2, s)
		defs.msg(1, named)
	}
	b.msg(9, defs)
	return b, nil
}
