package fields

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Selector matches a field set.
type Selector interface {
	Matches(fields map[string]string) bool
	Empty() bool
	String() string
	// Fields lists the field names the selector uses, so a server can reject
	// unsupported ones with a clear error.
	Fields() []string
}

// term is one field comparison: field == value, or field != value when not
// is set.
type term struct {
	field string
	value string
	not   bool
}

func (t term) matches(fs map[string]string) bool {
	return (fs[t.field] == t.value) != t.not
}

func (t term) String() string {
	op := "="
	if t.not {
		op = "!="
	}
	return t.field + op + EscapeValue(t.value)
}

// selector is a conjunction of terms in canonical order (sorted by their
// String). The empty selector selects everything.
type selector []term

func (s selector) Matches(fs map[string]string) bool {
	for _, t := range s {
		if !t.matches(fs) {
			return false
		}
	}
	return true
}

func (s selector) Empty() bool { return len(s) == 0 }

func (s selector) String() string {
	parts := make([]string, len(s))
	for i, t := range s {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

func (s selector) Fields() []string {
	names := make([]string, 0, len(s))
	for _, t := range s {
		names = append(names, t.field)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func canonical(s selector) selector {
	slices.SortStableFunc(s, func(a, b term) int { return strings.Compare(a.String(), b.String()) })
	return s
}

// Operators, longest first among those sharing a prefix: "==" must be tried
// before "=" so that "a==b" does not leave "=b" as the value.
var termOperators = []string{"!=", "==", "="}

// Parse parses "a=b,c!=d" (also "=="). The empty string selects everything.
func Parse(s string) (Selector, error) {
	var sel selector
	for _, part := range splitTerms(s) {
		if part == "" {
			continue
		}
		lhs, op, rhs, ok := splitTerm(part)
		if !ok {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
		value, err := UnescapeValue(rhs)
		if err != nil {
			return nil, err
		}
		sel = append(sel, term{field: lhs, value: value, not: op == "!="})
	}
	return canonical(sel), nil
}

// splitTerms splits at commas not escaped by a backslash; the escapes stay
// in the terms.
func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start := 0
	escaped := false
	for i := 0; i < len(s); i++ {
		switch {
		case escaped:
			escaped = false
		case s[i] == '\\':
			escaped = true
		case s[i] == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitTerm splits a term at the first operator; the value is returned raw
// (still escaped).
func splitTerm(t string) (lhs, op, rhs string, ok bool) {
	for i := range len(t) {
		for _, op := range termOperators {
			if strings.HasPrefix(t[i:], op) {
				return t[:i], op, t[i+len(op):], true
			}
		}
	}
	return "", "", "", false
}

// Everything selects every field set.
func Everything() Selector { return selector{} }

// OneTermEqualSelector selects field sets whose field k equals v.
func OneTermEqualSelector(k, v string) Selector { return selector{{field: k, value: v}} }

// OneTermNotEqualSelector selects field sets whose field k differs from v.
func OneTermNotEqualSelector(k, v string) Selector {
	return selector{{field: k, value: v, not: true}}
}

// SelectorFromSet selects field sets holding every pair of set. An empty or
// nil set selects everything.
func SelectorFromSet(set map[string]string) Selector {
	sel := make(selector, 0, len(set))
	for k, v := range set {
		sel = append(sel, term{field: k, value: v})
	}
	return canonical(sel)
}

// ExactMatch reports the value that sel requires field to equal, when sel
// has such a term ("field=value" or "field==value"), so a server can turn
// metadata.name=x into a point lookup.
func ExactMatch(sel Selector, field string) (string, bool) {
	s, ok := sel.(selector)
	if !ok {
		return "", false
	}
	for _, t := range s {
		if t.field == field && !t.not {
			return t.value, true
		}
	}
	return "", false
}

// EscapeValue escapes a literal value for use in a field selector: "\" as
// "\\", "," as "\," and "=" as "\=".
func EscapeValue(s string) string {
	if !strings.ContainsAny(s, `\,=`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', ',', '=':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// UnescapeValue reverses EscapeValue. It rejects any other escape, a
// trailing lone backslash, and an unescaped comma or equals sign.
func UnescapeValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	escaped := false
	// Byte-wise: every special character is ASCII, and other bytes
	// (including invalid UTF-8) pass through unchanged.
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escaped {
			switch c {
			case '\\', ',', '=':
				b.WriteByte(c)
			default:
				r, _ := utf8.DecodeRuneInString(s[i:])
				return "", fmt.Errorf("invalid field selector: invalid escape sequence: %s", `\`+string(r))
			}
			escaped = false
			continue
		}
		switch c {
		case '\\':
			escaped = true
		case ',', '=':
			return "", fmt.Errorf("invalid field selector: unescaped character in value: '%c'", c)
		default:
			b.WriteByte(c)
		}
	}
	if escaped {
		return "", fmt.Errorf("invalid field selector: invalid escape sequence: %s", `\`)
	}
	return b.String(), nil
}
