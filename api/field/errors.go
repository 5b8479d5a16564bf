// Package field holds field paths and field errors, worded as Kubernetes
// words them (`spec.ports[0].port: Invalid value: 0: must be between 1 and
// 65535`), so that validation can report every error with its path.
package field

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Path is a field path such as spec.ports[0].port.
type Path struct {
	name   string
	index  string
	parent *Path
}

// NewPath starts a path at a root field name, with optional children.
func NewPath(name string, more ...string) *Path {
	p := &Path{name: name}
	for _, m := range more {
		p = p.Child(m)
	}
	return p
}

// Child appends a field name.
func (p *Path) Child(name string, more ...string) *Path {
	c := &Path{name: name, parent: p}
	for _, m := range more {
		c = c.Child(m)
	}
	return c
}

// Index appends a list index.
func (p *Path) Index(i int) *Path { return &Path{index: strconv.Itoa(i), parent: p} }

// Key appends a map key.
func (p *Path) Key(k string) *Path { return &Path{index: k, parent: p} }

// String renders the path: spec.ports[0].port, metadata.labels[app].
func (p *Path) String() string {
	if p == nil {
		return "<nil>"
	}
	var elems []*Path
	for q := p; q != nil; q = q.parent {
		elems = append(elems, q)
	}
	var b strings.Builder
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		if e.index != "" {
			b.WriteString("[" + e.index + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.name)
	}
	return b.String()
}

// ErrorType is the kind of a field error; its value is the Kubernetes
// cause type (FieldValueInvalid and so on).
type ErrorType string

const (
	ErrorTypeNotFound     ErrorType = "FieldValueNotFound"
	ErrorTypeRequired     ErrorType = "FieldValueRequired"
	ErrorTypeDuplicate    ErrorType = "FieldValueDuplicate"
	ErrorTypeInvalid      ErrorType = "FieldValueInvalid"
	ErrorTypeNotSupported ErrorType = "FieldValueNotSupported"
	ErrorTypeForbidden    ErrorType = "FieldValueForbidden"
	ErrorTypeTooLong      ErrorType = "FieldValueTooLong"
	ErrorTypeTooMany      ErrorType = "FieldValueTooMany"
	ErrorTypeInternal     ErrorType = "InternalError"
)

// String is the human phrase Kubernetes prints for the type.
func (t ErrorType) String() string {
	switch t {
	case ErrorTypeNotFound:
		return "Not found"
	case ErrorTypeRequired:
		return "Required value"
	case ErrorTypeDuplicate:
		return "Duplicate value"
	case ErrorTypeInvalid:
		return "Invalid value"
	case ErrorTypeNotSupported:
		return "Unsupported value"
	case ErrorTypeForbidden:
		return "Forbidden"
	case ErrorTypeTooLong:
		return "Too long"
	case ErrorTypeTooMany:
		return "Too many"
	case ErrorTypeInternal:
		return "Internal error"
	}
	return string(t)
}

// Error is one field error.
type Error struct {
	Type     ErrorType
	Field    string
	BadValue any
	Detail   string
}

// Error renders `field: Type: value: detail`.
func (e *Error) Error() string { return e.Field + ": " + e.ErrorBody() }

// ErrorBody is the error without its field path (`Invalid value: 0: must
// be ...`), as Kubernetes puts it in a Status cause next to the field.
func (e *Error) ErrorBody() string {
	var b strings.Builder
	b.WriteString(e.Type.String())
	switch e.Type {
	case ErrorTypeRequired, ErrorTypeForbidden, ErrorTypeTooLong, ErrorTypeInternal:
	default:
		if e.BadValue != nil {
			b.WriteString(": " + renderValue(e.BadValue))
		}
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

func renderValue(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case int, int32, int64, uint16, uint32, bool, float64:
		return fmt.Sprint(t)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%#v", v)
}

// ErrorList is every error found in one validation.
type ErrorList []*Error

// Error joins the errors as Kubernetes does in an Invalid Status message.
func (l ErrorList) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func Invalid(p *Path, v any, detail string) *Error {
	return &Error{Type: ErrorTypeInvalid, Field: p.String(), BadValue: v, Detail: detail}
}
func Required(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeRequired, Field: p.String(), Detail: detail}
}
func Duplicate(p *Path, v any) *Error {
	return &Error{Type: ErrorTypeDuplicate, Field: p.String(), BadValue: v}
}
func NotFound(p *Path, v any) *Error {
	return &Error{Type: ErrorTypeNotFound, Field: p.String(), BadValue: v}
}
func Forbidden(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeForbidden, Field: p.String(), Detail: detail}
}
func TooLong(p *Path, v any, max int) *Error {
	return &Error{Type: ErrorTypeTooLong, Field: p.String(), BadValue: v, Detail: fmt.Sprintf("must have at most %d bytes", max)}
}
func TooMany(p *Path, actual, max int) *Error {
	return &Error{Type: ErrorTypeTooMany, Field: p.String(), BadValue: actual, Detail: fmt.Sprintf("must have at most %d items", max)}
}
func Internal(p *Path, err error) *Error {
	return &Error{Type: ErrorTypeInternal, Field: p.String(), Detail: err.Error()}
}

// NotSupported reports a value outside an enumerated set.
func NotSupported(p *Path, v any, valid []string) *Error {
	q := make([]string, len(valid))
	for i, s := range valid {
		q[i] = strconv.Quote(s)
	}
	return &Error{Type: ErrorTypeNotSupported, Field: p.String(), BadValue: v, Detail: "supported values: " + strings.Join(q, ", ")}
}
