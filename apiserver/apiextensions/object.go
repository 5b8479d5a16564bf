package apiextensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/skiff-dev/skiff/api"
)

// Object is one custom object whose resource has no status subresource:
// apiVersion, kind and metadata typed, every other top-level field in
// Content as decoded JSON (numbers kept as json.Number). Its JSON form
// always starts with apiVersion, then kind and metadata, then the other
// fields in key order: the API server rewrites apiVersion as the first
// field to serve the object in another version.
type Object struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	// Content is every other top-level field. The API server bumps
	// metadata.generation when it changes (the field is what it compares).
	Content map[string]any `json:"content,omitempty"`
}

// ObjectWithStatus is a custom object whose resource has the status
// subresource: status is apart from Content, so the main resource keeps
// the stored status and /status keeps the rest, and a status change does
// not bump generation.
type ObjectWithStatus struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Content        map[string]any `json:"content,omitempty"`
	Status         any            `json:"status,omitempty"`
}

// List is a list of custom objects of one type (Object or
// ObjectWithStatus).
type List[T any, PT interface {
	*T
	api.Object
}] struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []T `json:"items"`
}

// GetItems implements api.ListObject.
func (l *List[T, PT]) GetItems() []api.Object {
	out := make([]api.Object, len(l.Items))
	for i := range l.Items {
		out[i] = PT(&l.Items[i])
	}
	return out
}

// SetItems implements api.ListObject.
func (l *List[T, PT]) SetItems(items []api.Object) error {
	l.Items = make([]T, 0, len(items))
	for _, o := range items {
		p, ok := o.(PT)
		if !ok {
			return errWrongType(o)
		}
		l.Items = append(l.Items, *p)
	}
	return nil
}

func errWrongType(o api.Object) error {
	return fmt.Errorf("apiextensions: unexpected object type %T", o)
}

// MarshalJSON implements json.Marshaler.
func (o *Object) MarshalJSON() ([]byte, error) {
	return marshalObject(&o.TypeMeta, &o.ObjectMeta, o.Content, nil, false)
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *Object) UnmarshalJSON(b []byte) error {
	o.Content = nil
	_, _, err := unmarshalObject(b, &o.TypeMeta, &o.ObjectMeta, &o.Content, false)
	return err
}

// MarshalJSON implements json.Marshaler.
func (o *ObjectWithStatus) MarshalJSON() ([]byte, error) {
	return marshalObject(&o.TypeMeta, &o.ObjectMeta, o.Content, o.Status, true)
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *ObjectWithStatus) UnmarshalJSON(b []byte) error {
	o.Content, o.Status = nil, nil
	st, _, err := unmarshalObject(b, &o.TypeMeta, &o.ObjectMeta, &o.Content, true)
	o.Status = st
	return err
}

func marshalObject(tm *api.TypeMeta, meta *api.ObjectMeta, content map[string]any, status any, withStatus bool) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"apiVersion":`)
	if err := writeJSON(&buf, tm.APIVersion); err != nil {
		return nil, err
	}
	buf.WriteString(`,"kind":`)
	if err := writeJSON(&buf, tm.Kind); err != nil {
		return nil, err
	}
	buf.WriteString(`,"metadata":`)
	if err := writeJSON(&buf, meta); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(content)+1)
	for k := range content {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		case "status":
			if withStatus {
				continue
			}
		}
		keys = append(keys, k)
	}
	if withStatus && status != nil {
		keys = append(keys, "status")
	}
	sort.Strings(keys)
	for _, k := range keys {
		buf.WriteByte(',')
		if err := writeJSON(&buf, k); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		v := content[k]
		if withStatus && k == "status" {
			v = status
		}
		if err := writeJSON(&buf, v); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

// unmarshalObject decodes b, a JSON object, into the typed parts and
// content; with withStatus, the status field is returned apart.
func unmarshalObject(b []byte, tm *api.TypeMeta, meta *api.ObjectMeta, content *map[string]any, withStatus bool) (any, bool, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var top map[string]json.RawMessage
	if err := d.Decode(&top); err != nil {
		return nil, false, err
	}
	if top == nil {
		return nil, false, errors.New("a custom object must be a JSON object")
	}
	*tm = api.TypeMeta{}
	*meta = api.ObjectMeta{}
	var status any
	hasStatus := false
	for k, raw := range top {
		switch k {
		case "apiVersion":
			if err := json.Unmarshal(raw, &tm.APIVersion); err != nil {
				return nil, false, fmt.Errorf("apiVersion: %w", err)
			}
		case "kind":
			if err := json.Unmarshal(raw, &tm.Kind); err != nil {
				return nil, false, fmt.Errorf("kind: %w", err)
			}
		case "metadata":
			if string(raw) == "null" {
				continue
			}
			if err := json.Unmarshal(raw, meta); err != nil {
				return nil, false, fmt.Errorf("metadata: %w", err)
			}
		default:
			v, err := decodeValue(raw)
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", k, err)
			}
			if withStatus && k == "status" {
				status, hasStatus = v, true
				continue
			}
			if *content == nil {
				*content = make(map[string]any, len(top))
			}
			(*content)[k] = v
		}
	}
	return status, hasStatus, nil
}

func decodeValue(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
