package apiextensions

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/printers"
	"github.com/skiff-dev/skiff/kubectl/jsonpath"
)

// nameDescription is the Name column's description upstream takes from
// ObjectMeta's field docs.
const nameDescription = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"

// tableOf is the Table of a version with additionalPrinterColumns, as
// upstream's custom resource table convertor builds it: Name, then each
// column (no Age unless one is listed). A cell is the column's JSONPath's
// first value: a string column prints it, integer, number and boolean
// keep it typed when it has that type, a date is the age of an RFC 3339
// timestamp; no value (or one of another type) is an empty cell. Nil
// without columns: the default Table (Name, Age).
func tableOf(cols []CustomResourceColumnDefinition) *api.TablePrinter {
	if len(cols) == 0 {
		return nil
	}
	t := &api.TablePrinter{Columns: []api.TableColumn{{Name: "Name", Type: "string", Format: "name", Description: nameDescription}}}
	for _, c := range cols {
		t.Columns = append(t.Columns, api.TableColumn{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
	}
	t.Cells = func(obj api.Object, now time.Time) []any {
		cells := make([]any, 0, len(t.Columns))
		cells = append(cells, obj.GetObjectMeta().Name)
		data, err := asJSONValue(obj)
		for _, c := range cols {
			if err != nil {
				cells = append(cells, nil)
				continue
			}
			vals, err := jsonpath.Eval(c.JSONPath, data)
			if err != nil || len(vals) == 0 || vals[0] == nil {
				cells = append(cells, nil)
				continue
			}
			cells = append(cells, cell(c.Type, vals[0], now))
		}
		return cells
	}
	return t
}

func asJSONValue(obj api.Object) (any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err = d.Decode(&v)
	return v, err
}

func cell(typ string, v any, now time.Time) any {
	switch typ {
	case "string":
		switch s := v.(type) {
		case string:
			return s
		case json.Number:
			return s.String()
		case bool:
			return strconv.FormatBool(s)
		default:
			b, _ := json.Marshal(s)
			return string(b)
		}
	case "integer":
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i
			}
		}
	case "number":
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil && !strings.ContainsAny(n.String(), ".eE") {
				return i
			}
			if f, err := n.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				return printers.Age(t, now)
			}
		}
	}
	return nil
}
