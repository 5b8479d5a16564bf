package apiserver

import (
	"fmt"
	"strings"

	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/api/labels"
)

// TODO(merge): delete this file's fallback once api/labels and api/fields
// are implemented; parseLabelSelector/parseFieldSelector then just call
// labels.Parse/fields.Parse. The fallback only understands k=v, k==v, k!=v,
// k and !k, and is used only while the real parsers report "not implemented".

func parseLabelSelector(s string) (labels.Selector, error) {
	sel, err := labels.Parse(s)
	if err != nil && err.Error() == "labels: not implemented" {
		return parseEquality(s, true)
	}
	return sel, err
}

func parseFieldSelector(s string) (fields.Selector, error) {
	sel, err := fields.Parse(s)
	if err != nil && err.Error() == "fields: not implemented" {
		return parseEquality(s, false)
	}
	return sel, err
}

type eqReq struct {
	key, value string
	op         string // "=", "!=", "exists", "!"
}

type eqSelector []eqReq

func parseEquality(s string, allowExists bool) (eqSelector, error) {
	var sel eqSelector
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		switch {
		case strings.Contains(part, "!="):
			k, v, _ := strings.Cut(part, "!=")
			sel = append(sel, eqReq{strings.TrimSpace(k), strings.TrimSpace(v), "!="})
		case strings.Contains(part, "=="):
			k, v, _ := strings.Cut(part, "==")
			sel = append(sel, eqReq{strings.TrimSpace(k), strings.TrimSpace(v), "="})
		case strings.Contains(part, "="):
			k, v, _ := strings.Cut(part, "=")
			sel = append(sel, eqReq{strings.TrimSpace(k), strings.TrimSpace(v), "="})
		case allowExists && strings.HasPrefix(part, "!"):
			sel = append(sel, eqReq{key: strings.TrimSpace(part[1:]), op: "!"})
		case allowExists && !strings.ContainsAny(part, " ()"):
			sel = append(sel, eqReq{key: part, op: "exists"})
		default:
			return nil, fmt.Errorf("unsupported selector %q", part)
		}
	}
	return sel, nil
}

func (s eqSelector) Matches(m map[string]string) bool {
	for _, r := range s {
		v, ok := m[r.key]
		switch r.op {
		case "=":
			if !ok || v != r.value {
				return false
			}
		case "!=":
			if ok && v == r.value {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!":
			if ok {
				return false
			}
		}
	}
	return true
}

func (s eqSelector) Empty() bool { return len(s) == 0 }

func (s eqSelector) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		switch r.op {
		case "exists":
			parts[i] = r.key
		case "!":
			parts[i] = "!" + r.key
		default:
			parts[i] = r.key + r.op + r.value
		}
	}
	return strings.Join(parts, ",")
}

func (s eqSelector) Fields() []string {
	out := make([]string, len(s))
	for i, r := range s {
		out[i] = r.key
	}
	return out
}
