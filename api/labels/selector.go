package labels

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// Selector matches label sets.
type Selector interface {
	// Matches reports whether the labels satisfy every requirement.
	Matches(labels map[string]string) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// String renders the selector in canonical form.
	String() string
}

// operator is a parsed requirement's operator. The values are Kubernetes'
// selection.Operator strings.
type operator string

const (
	opEquals       operator = "="
	opDoubleEquals operator = "=="
	opNotEquals    operator = "!="
	opIn           operator = "in"
	opNotIn        operator = "notin"
	opExists       operator = "exists"
	opDoesNotExist operator = "!"
	opGreaterThan  operator = "gt"
	opLessThan     operator = "lt"
)

// binaryOperators is the list printed when an operator is missing, in
// Kubernetes' order.
var binaryOperators = []string{
	string(opIn), string(opNotIn), string(opEquals), string(opDoubleEquals),
	string(opNotEquals), string(opGreaterThan), string(opLessThan),
}

// requirement is one term of a selector. values is sorted and free of
// duplicates.
type requirement struct {
	key    string
	op     operator
	values []string
}

// newRequirement validates and builds a requirement, as Kubernetes'
// labels.NewRequirement does; path prefixes the error field names. vals is
// copied.
func newRequirement(key string, op operator, vals []string, path *field.Path) (requirement, field.ErrorList) {
	var errs field.ErrorList
	if msgs := IsQualifiedName(key); len(msgs) != 0 {
		errs = append(errs, field.Invalid(path.Child("key"), key, strings.Join(msgs, "; ")))
	}
	vals = normalizeValues(vals)
	valuePath := path.Child("values")
	switch op {
	case opIn, opNotIn:
		if len(vals) == 0 {
			errs = append(errs, field.Invalid(valuePath, vals, "for 'in', 'notin' operators, values set can't be empty"))
		}
	case opEquals, opDoubleEquals, opNotEquals:
		if len(vals) != 1 {
			errs = append(errs, field.Invalid(valuePath, vals, "exact-match compatibility requires one single value"))
		}
	case opExists, opDoesNotExist:
		if len(vals) != 0 {
			errs = append(errs, field.Invalid(valuePath, vals, "values set must be empty for exists and does not exist"))
		}
	case opGreaterThan, opLessThan:
		if len(vals) != 1 {
			errs = append(errs, field.Invalid(valuePath, vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
		}
		for i, v := range vals {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				errs = append(errs, field.Invalid(valuePath.Index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), string(op), []string{
			string(opIn), string(opNotIn), string(opEquals), string(opDoubleEquals), string(opNotEquals),
			string(opExists), string(opDoesNotExist), string(opGreaterThan), string(opLessThan),
		}))
	}
	for i, v := range vals {
		if msgs := IsValidLabelValue(v); len(msgs) != 0 {
			errs = append(errs, field.Invalid(valuePath.Index(i).Key(key), v, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) != 0 {
		return requirement{}, errs
	}
	return requirement{key: key, op: op, values: vals}, nil
}

// normalizeValues returns a sorted, de-duplicated copy of vals (nil for
// none).
func normalizeValues(vals []string) []string {
	if len(vals) == 0 {
		return nil
	}
	out := slices.Clone(vals)
	slices.Sort(out)
	return slices.Compact(out)
}

func (r requirement) hasValue(v string) bool {
	_, ok := slices.BinarySearch(r.values, v)
	return ok
}

// matches reports whether ls satisfies r, with Kubernetes' semantics:
// "!=" and notin match a set without the key.
func (r requirement) matches(ls map[string]string) bool {
	v, has := ls[r.key]
	switch r.op {
	case opIn, opEquals, opDoubleEquals:
		return has && r.hasValue(v)
	case opNotIn, opNotEquals:
		return !has || !r.hasValue(v)
	case opExists:
		return has
	case opDoesNotExist:
		return !has
	case opGreaterThan, opLessThan:
		if !has || len(r.values) != 1 {
			return false
		}
		got, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.op == opGreaterThan {
			return got > want
		}
		return got < want
	}
	return false
}

func (r requirement) writeTo(b *strings.Builder) {
	if r.op == opDoesNotExist {
		b.WriteByte('!')
	}
	b.WriteString(r.key)
	switch r.op {
	case opExists, opDoesNotExist:
		return
	case opEquals:
		b.WriteString("=")
	case opDoubleEquals:
		b.WriteString("==")
	case opNotEquals:
		b.WriteString("!=")
	case opIn:
		b.WriteString(" in ")
	case opNotIn:
		b.WriteString(" notin ")
	case opGreaterThan:
		b.WriteString(">")
	case opLessThan:
		b.WriteString("<")
	}
	set := r.op == opIn || r.op == opNotIn
	if set {
		b.WriteByte('(')
	}
	b.WriteString(strings.Join(r.values, ","))
	if set {
		b.WriteByte(')')
	}
}

// selector is a conjunction of requirements sorted (stably) by key. The
// zero-length selector selects everything.
type selector []requirement

func (s selector) Matches(ls map[string]string) bool {
	for _, r := range s {
		if !r.matches(ls) {
			return false
		}
	}
	return true
}

func (s selector) Empty() bool { return len(s) == 0 }

func (s selector) String() string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		r.writeTo(&b)
	}
	return b.String()
}

// sortByKey orders requirements by key, keeping the input order of
// requirements on the same key so that String is stable under re-parsing.
func sortByKey(s selector) {
	slices.SortStableFunc(s, func(a, b requirement) int { return strings.Compare(a.key, b.key) })
}

// nothing selects no label set.
type nothing struct{}

func (nothing) Matches(map[string]string) bool { return false }
func (nothing) Empty() bool                    { return false }
func (nothing) String() string                 { return "" }

// Parse parses a selector string such as "app=web,tier in (a,b),!canary".
// The empty string selects everything.
func Parse(s string) (Selector, error) {
	p := parser{toks: lex(s)}
	reqs, err := p.parse()
	if err != nil {
		return nil, err
	}
	sortByKey(reqs)
	return reqs, nil
}

// Everything selects all label sets.
func Everything() Selector { return selector{} }

// Nothing selects no label set. Kubernetes uses it for a nil LabelSelector.
func Nothing() Selector { return nothing{} }

// SelectorFromSet returns the equality selector for a map (k1=v1,k2=v2).
// An empty or nil map selects everything. The set is not validated (as in
// Kubernetes); the selector still matches exactly the label sets that carry
// every pair.
func SelectorFromSet(set map[string]string) Selector {
	s := make(selector, 0, len(set))
	for k, v := range set {
		s = append(s, requirement{key: k, op: opEquals, values: []string{v}})
	}
	sortByKey(s)
	return s
}

// ValidatedSelectorFromSet is SelectorFromSet that first checks every key
// and value, returning Kubernetes-worded errors for the invalid ones.
func ValidatedSelectorFromSet(set map[string]string) (Selector, error) {
	s := make(selector, 0, len(set))
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(set)) {
		r, rerrs := newRequirement(k, opEquals, []string{set[k]}, nil)
		if len(rerrs) != 0 {
			errs = append(errs, rerrs...)
			continue
		}
		s = append(s, r)
	}
	if len(errs) != 0 {
		return nil, errs
	}
	return s, nil
}

// Requirement is one match expression of a LabelSelector, in the shape of
// Kubernetes' metav1.LabelSelectorRequirement: Operator is one of OpIn,
// OpNotIn, OpExists, OpDoesNotExist.
type Requirement struct {
	Key      string
	Operator string
	Values   []string
}

// The operators of a LabelSelectorRequirement.
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
)

// FromLabelSelector converts a LabelSelector (matchLabels and
// matchExpressions) to a Selector, as Kubernetes'
// metav1.LabelSelectorAsSelector does: no labels and no expressions select
// everything (the caller maps a nil LabelSelector to Nothing). Every key,
// operator and value is validated; the error lists each problem.
func FromLabelSelector(matchLabels map[string]string, exprs []Requirement) (Selector, error) {
	if len(matchLabels)+len(exprs) == 0 {
		return Everything(), nil
	}
	s := make(selector, 0, len(matchLabels)+len(exprs))
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(matchLabels)) {
		r, rerrs := newRequirement(k, opEquals, []string{matchLabels[k]}, nil)
		if len(rerrs) != 0 {
			errs = append(errs, rerrs...)
			continue
		}
		s = append(s, r)
	}
	for _, e := range exprs {
		var op operator
		switch e.Operator {
		case OpIn:
			op = opIn
		case OpNotIn:
			op = opNotIn
		case OpExists:
			op = opExists
		case OpDoesNotExist:
			op = opDoesNotExist
		default:
			return nil, fmt.Errorf("%q is not a valid label selector operator", e.Operator)
		}
		r, rerrs := newRequirement(e.Key, op, e.Values, nil)
		if len(rerrs) != 0 {
			errs = append(errs, rerrs...)
			continue
		}
		s = append(s, r)
	}
	if len(errs) != 0 {
		return nil, errs
	}
	sortByKey(s)
	return s, nil
}
