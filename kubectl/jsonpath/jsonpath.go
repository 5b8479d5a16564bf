package jsonpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every Parse error.
var ErrSyntax = errors.New("jsonpath: syntax error")

// Template is a parsed template, safe for concurrent use.
type Template struct {
	nodes []node
}

// node is literal text, an expression or a range block.
type node struct {
	text  string // literal output when expr and body are nil
	expr  *path
	body  []node // range body; expr is what it ranges over
	isRng bool
}

// path is a sequence of steps, or a string literal.
type path struct {
	literal *string
	steps   []step
}

type stepKind int

const (
	stepField     stepKind = iota // names (one, or a union)
	stepWildcard                  // [*] or .*
	stepIndex                     // [i]
	stepSlice                     // [a:b:c]
	stepRecursive                 // ..name or ..*
	stepFilter                    // [?(...)]
)

type step struct {
	kind   stepKind
	names  []string
	index  int
	start  *int
	end    *int
	stride int
	filter *filter
}

// filter is `lhs op rhs`, or a bare lhs (existence) when op is "".
type filter struct {
	lhs path
	op  string
	rhs *path
}

func syntaxErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...))
}

// Parse parses a template.
func Parse(text string) (*Template, error) {
	nodes, _, err := parseNodes(text, false)
	if err != nil {
		return nil, err
	}
	return &Template{nodes: nodes}, nil
}

// parseNodes reads nodes until the end of text or, inside a range, until
// its {end}; it returns the text after that {end}.
func parseNodes(text string, inRange bool) ([]node, string, error) {
	var nodes []node
	for text != "" {
		open := strings.IndexByte(text, '{')
		if open < 0 {
			nodes = append(nodes, node{text: text})
			break
		}
		if open > 0 {
			nodes = append(nodes, node{text: text[:open]})
		}
		closeAt, err := matchBrace(text, open)
		if err != nil {
			return nil, "", err
		}
		inner := strings.TrimSpace(text[open+1 : closeAt])
		text = text[closeAt+1:]
		switch {
		case inner == "end":
			if !inRange {
				return nil, "", syntaxErr("{end} without {range}")
			}
			return nodes, text, nil
		case strings.HasPrefix(inner, "range ") || strings.HasPrefix(inner, "range\t"):
			p, err := parsePath(strings.TrimSpace(inner[len("range"):]))
			if err != nil {
				return nil, "", err
			}
			body, rest, err := parseNodes(text, true)
			if err != nil {
				return nil, "", err
			}
			nodes = append(nodes, node{expr: &p, body: body, isRng: true})
			text = rest
		default:
			p, err := parsePath(inner)
			if err != nil {
				return nil, "", err
			}
			nodes = append(nodes, node{expr: &p})
		}
	}
	if inRange {
		return nil, "", syntaxErr("{range} without {end}")
	}
	return nodes, "", nil
}

// matchBrace returns the index of the '}' closing the '{' at open,
// skipping quoted strings.
func matchBrace(text string, open int) (int, error) {
	var quote byte
	for i := open + 1; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '}':
			return i, nil
		}
	}
	return 0, syntaxErr("unclosed action in %q", text[open:])
}

// parsePath parses one expression: a string literal or a path.
func parsePath(s string) (path, error) {
	if s == "" {
		return path{}, syntaxErr("empty expression")
	}
	if s[0] == '"' || s[0] == '\'' {
		lit, rest, err := parseQuoted(s)
		if err != nil {
			return path{}, err
		}
		if strings.TrimSpace(rest) != "" {
			return path{}, syntaxErr("unexpected %q after string literal", rest)
		}
		return path{literal: &lit}, nil
	}
	if s[0] == '$' || s[0] == '@' {
		s = s[1:]
	}
	var steps []step
	for s != "" {
		switch {
		case strings.HasPrefix(s, ".."):
			s = s[2:]
			if strings.HasPrefix(s, "[") {
				// ..[*] is the same as ..*
				st, rest, err := parseBracket(s)
				if err != nil {
					return path{}, err
				}
				if st.kind == stepWildcard {
					steps = append(steps, step{kind: stepRecursive})
				} else {
					steps = append(steps, step{kind: stepRecursive}, st)
				}
				s = rest
				continue
			}
			name, rest := readName(s)
			if name == "" {
				return path{}, syntaxErr("missing name after '..'")
			}
			if name == "*" {
				steps = append(steps, step{kind: stepRecursive})
			} else {
				steps = append(steps, step{kind: stepRecursive, names: []string{name}})
			}
			s = rest
		case s[0] == '.':
			s = s[1:]
			if s == "" {
				// "{.}" is the current object.
				continue
			}
			if s[0] == '[' {
				continue
			}
			name, rest := readName(s)
			if name == "" {
				return path{}, syntaxErr("missing name after '.' in %q", s)
			}
			if name == "*" {
				steps = append(steps, step{kind: stepWildcard})
			} else {
				steps = append(steps, step{kind: stepField, names: []string{name}})
			}
			s = rest
		case s[0] == '[':
			st, rest, err := parseBracket(s)
			if err != nil {
				return path{}, err
			}
			steps = append(steps, st)
			s = rest
		default:
			// A bare name at the start ("metadata.name") is a field, as
			// kubectl accepts it.
			name, rest := readName(s)
			if name == "" {
				return path{}, syntaxErr("unexpected %q", s)
			}
			steps = append(steps, step{kind: stepField, names: []string{name}})
			s = rest
		}
	}
	return path{steps: steps}, nil
}

// readName reads a field name up to an unescaped '.' or '[' (or a space,
// which ends a filter operand); `\.` is a literal dot.
func readName(s string) (string, string) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			b.WriteByte(s[i+1])
			i += 2
			continue
		}
		if c == '.' || c == '[' || c == ' ' || c == ')' || c == '=' || c == '!' || c == '<' || c == '>' {
			break
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), s[i:]
}

// parseBracket parses one [...] step at the start of s.
func parseBracket(s string) (step, string, error) {
	// find the matching ']' outside quotes and parentheses
	depth, end := 0, -1
	var quote byte
	for i := 1; i < len(s) && end < 0; i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ']' && depth == 0:
			end = i
		}
	}
	if end < 0 {
		return step{}, "", syntaxErr("unterminated '[' in %q", s)
	}
	inner := strings.TrimSpace(s[1:end])
	rest := s[end+1:]
	switch {
	case inner == "*":
		return step{kind: stepWildcard}, rest, nil
	case strings.HasPrefix(inner, "?("):
		if !strings.HasSuffix(inner, ")") {
			return step{}, "", syntaxErr("unterminated filter %q", inner)
		}
		f, err := parseFilter(strings.TrimSpace(inner[2 : len(inner)-1]))
		if err != nil {
			return step{}, "", err
		}
		return step{kind: stepFilter, filter: f}, rest, nil
	case inner != "" && (inner[0] == '\'' || inner[0] == '"'):
		var names []string
		for {
			lit, more, err := parseQuoted(inner)
			if err != nil {
				return step{}, "", err
			}
			names = append(names, lit)
			more = strings.TrimSpace(more)
			if more == "" {
				break
			}
			if more[0] != ',' {
				return step{}, "", syntaxErr("unexpected %q in [%s]", more, inner)
			}
			inner = strings.TrimSpace(more[1:])
		}
		return step{kind: stepField, names: names}, rest, nil
	case strings.Contains(inner, ":"):
		parts := strings.Split(inner, ":")
		if len(parts) > 3 {
			return step{}, "", syntaxErr("bad slice [%s]", inner)
		}
		st := step{kind: stepSlice, stride: 1}
		for i, p := range parts {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			n, err := strconv.Atoi(p)
			if err != nil {
				return step{}, "", syntaxErr("bad slice [%s]", inner)
			}
			switch i {
			case 0:
				st.start = &n
			case 1:
				st.end = &n
			case 2:
				if n == 0 {
					return step{}, "", syntaxErr("slice step 0 in [%s]", inner)
				}
				st.stride = n
			}
		}
		return st, rest, nil
	default:
		n, err := strconv.Atoi(inner)
		if err != nil {
			return step{}, "", syntaxErr("bad index [%s]", inner)
		}
		return step{kind: stepIndex, index: n}, rest, nil
	}
}

// parseQuoted reads a '...' or "..." literal at the start of s; double
// quotes take Go escapes (\n, \t, \").
func parseQuoted(s string) (string, string, error) {
	q := s[0]
	for i := 1; i < len(s); i++ {
		if s[i] == '\\' && q == '"' {
			i++
			continue
		}
		if s[i] == q {
			raw := s[:i+1]
			if q == '\'' {
				return raw[1 : len(raw)-1], s[i+1:], nil
			}
			v, err := strconv.Unquote(raw)
			if err != nil {
				return "", "", syntaxErr("bad string %s", raw)
			}
			return v, s[i+1:], nil
		}
	}
	return "", "", syntaxErr("unterminated string %s", s)
}

var operators = []string{"==", "!=", "<=", ">=", "<", ">"}

// parseFilter parses the inside of [?( ... )].
func parseFilter(s string) (*filter, error) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		if c == '"' || c == '\'' {
			quote = c
			continue
		}
		if c == '\\' {
			i++
			continue
		}
		for _, op := range operators {
			if strings.HasPrefix(s[i:], op) {
				lhs, err := parsePath(strings.TrimSpace(s[:i]))
				if err != nil {
					return nil, err
				}
				rs := strings.TrimSpace(s[i+len(op):])
				rhs, err := parseOperand(rs)
				if err != nil {
					return nil, err
				}
				return &filter{lhs: lhs, op: op, rhs: &rhs}, nil
			}
		}
	}
	lhs, err := parsePath(s)
	if err != nil {
		return nil, err
	}
	return &filter{lhs: lhs}, nil
}

// parseOperand is the right side of a filter: a path, a string, a number
// or true/false/null (kept as a literal of their JSON text).
func parseOperand(s string) (path, error) {
	if s == "" {
		return path{}, syntaxErr("missing operand")
	}
	switch {
	case s[0] == '@' || s[0] == '$' || s[0] == '"' || s[0] == '\'':
		return parsePath(s)
	}
	lit := s
	return path{literal: &lit, steps: []step{{kind: stepIndex, index: -1 << 31}}}, nil
}

// isRawLiteral marks an unquoted operand (number, true, false, null).
func (p path) isRawLiteral() bool {
	return p.literal != nil && len(p.steps) == 1 && p.steps[0].index == -1<<31
}

// Execute writes the template's output for data (decoded JSON: maps,
// slices, strings, json.Number or float64, bools, nil) to w.
func (t *Template) Execute(w io.Writer, data any) error {
	var b strings.Builder
	execNodes(&b, t.nodes, data, data)
	_, err := io.WriteString(w, b.String())
	return err
}

func execNodes(b *strings.Builder, nodes []node, root, cur any) {
	for _, n := range nodes {
		switch {
		case n.isRng:
			for _, v := range eval(*n.expr, root, cur) {
				execNodes(b, n.body, root, v)
			}
		case n.expr != nil:
			vals := eval(*n.expr, root, cur)
			for i, v := range vals {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(format(v))
			}
		default:
			b.WriteString(n.text)
		}
	}
}

// Eval returns the values one expression (without braces) yields for
// data; --sort-by and custom columns use it.
func Eval(expr string, data any) ([]any, error) {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "{") && strings.HasSuffix(expr, "}") {
		expr = expr[1 : len(expr)-1]
	}
	p, err := parsePath(expr)
	if err != nil {
		return nil, err
	}
	return eval(p, data, data), nil
}

// eval applies a path to cur ($ restarts at root: paths are relative to
// the current range element, as in kubectl).
func eval(p path, root, cur any) []any {
	if p.literal != nil {
		return []any{*p.literal}
	}
	vals := []any{cur}
	for _, st := range p.steps {
		var next []any
		for _, v := range vals {
			next = applyStep(st, root, v, next)
		}
		vals = next
	}
	return vals
}

func applyStep(st step, root, v any, out []any) []any {
	switch st.kind {
	case stepField:
		m, ok := v.(map[string]any)
		if !ok {
			return out
		}
		for _, name := range st.names {
			if x, ok := m[name]; ok {
				out = append(out, x)
			}
		}
	case stepWildcard:
		switch x := v.(type) {
		case []any:
			out = append(out, x...)
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				out = append(out, x[k])
			}
		}
	case stepIndex:
		l, ok := v.([]any)
		if !ok {
			return out
		}
		i := st.index
		if i < 0 {
			i += len(l)
		}
		if i >= 0 && i < len(l) {
			out = append(out, l[i])
		}
	case stepSlice:
		l, ok := v.([]any)
		if !ok {
			return out
		}
		n := len(l)
		clamp := func(p *int, def int) int {
			if p == nil {
				return def
			}
			i := *p
			if i < 0 {
				i += n
			}
			return min(max(i, 0), n)
		}
		if st.stride > 0 {
			for i := clamp(st.start, 0); i < clamp(st.end, n); i += st.stride {
				out = append(out, l[i])
			}
		} else {
			start := n - 1
			if st.start != nil {
				start = min(clamp(st.start, 0), n-1)
			}
			end := -1
			if st.end != nil {
				end = clamp(st.end, 0)
			}
			for i := start; i > end; i += st.stride {
				out = append(out, l[i])
			}
		}
	case stepRecursive:
		out = recurse(v, st.names, out)
	case stepFilter:
		l, ok := v.([]any)
		if !ok {
			return out
		}
		for _, e := range l {
			if st.filter.matches(root, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// recurse collects, depth first, the values of names (every value when
// names is empty) at v and below.
func recurse(v any, names []string, out []any) []any {
	switch x := v.(type) {
	case map[string]any:
		if len(names) == 0 {
			out = append(out, x)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if slices.Contains(names, k) {
				out = append(out, x[k])
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = recurse(x[k], names, out)
		}
	case []any:
		if len(names) == 0 {
			out = append(out, x)
		}
		for _, e := range x {
			out = recurse(e, names, out)
		}
	}
	return out
}

func (f *filter) matches(root, e any) bool {
	left := eval(f.lhs, root, e)
	if f.op == "" {
		for _, l := range left {
			if l != nil && l != false {
				return true
			}
		}
		return false
	}
	var right []any
	if f.rhs.isRawLiteral() {
		var v any
		dec := json.NewDecoder(strings.NewReader(*f.rhs.literal))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			v = *f.rhs.literal
		}
		right = []any{v}
	} else {
		right = eval(*f.rhs, root, e)
	}
	for _, l := range left {
		for _, r := range right {
			if compare(l, f.op, r) {
				return true
			}
		}
	}
	return false
}

// compare compares two scalars: numbers numerically, otherwise by their
// printed form (only == and != for non-numbers).
func compare(l any, op string, r any) bool {
	ln, lok := number(l)
	rn, rok := number(r)
	if lok && rok {
		c := ln.Cmp(rn)
		switch op {
		case "==":
			return c == 0
		case "!=":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		case ">=":
			return c >= 0
		}
		return false
	}
	ls, rs := format(l), format(r)
	switch op {
	case "==":
		return ls == rs
	case "!=":
		return ls != rs
	case "<":
		return ls < rs
	case "<=":
		return ls <= rs
	case ">":
		return ls > rs
	case ">=":
		return ls >= rs
	}
	return false
}

func number(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case json.Number:
		f, ok := new(big.Float).SetString(string(x))
		return f, ok
	case float64:
		return big.NewFloat(x), true
	case int:
		return new(big.Float).SetInt64(int64(x)), true
	case int64:
		return new(big.Float).SetInt64(x), true
	}
	return nil, false
}

// format prints one value as kubectl's jsonpath printer does.
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any, []any:
		data, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(data)
	}
	return fmt.Sprint(v)
}
