package kubectl

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/printers"
)

// The client-side printers give the columns kubectl shows when the server
// answers a plain list instead of a Table (and for watch events that are
// not Tables). For the resources Skiff serves they are api/printers'
// columns and cells, the very ones the server puts in its Tables (which
// follow Kubernetes' pkg/printers/internalversion), computed on the object
// after the resource's defaulting, as the server stores it; any other
// resource gets NAME and AGE.

// clientPrinter makes one row for an object.
type clientPrinter struct {
	columns []TableColumn
	row     func(raw []byte, now time.Time) ([]string, error)
}

// metadataOnly is an object of a resource without a Go type here: only its
// metadata is read.
type metadataOnly struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

// servedInfo is the api table's entry for info's resource (by plural name,
// as the client printers were always chosen), nil for one Skiff does not
// serve.
func servedInfo(info *api.ResourceInfo) *api.ResourceInfo {
	if info.New != nil {
		return info
	}
	for _, r := range api.Resources() {
		if r.Resource == info.Resource {
			return r
		}
	}
	return nil
}

// printerFor is the client-side printer of a resource.
func printerFor(info *api.ResourceInfo) clientPrinter {
	served := servedInfo(info)
	p := printers.Default()
	if served != nil {
		p = printers.For(served.Group, served.Resource)
	}
	columns := make([]TableColumn, len(p.Columns))
	for i, c := range p.Columns {
		columns[i] = TableColumn{Name: c.Header(), Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority}
	}
	return clientPrinter{
		columns: columns,
		row: func(raw []byte, now time.Time) ([]string, error) {
			var obj api.Object = &metadataOnly{}
			if served != nil {
				obj = served.New()
			}
			if err := json.Unmarshal(raw, obj); err != nil {
				return nil, err
			}
			if served != nil && served.Default != nil {
				served.Default(obj)
			}
			cells := p.Row(obj, now).Cells
			text := make([]string, len(cells))
			for i, c := range cells {
				text[i] = cellText(c)
			}
			return text, nil
		},
	}
}

// clientRows prints objects with the client-side printer of info.
func clientRows(info *api.ResourceInfo, items []json.RawMessage, now time.Time) (rowSet, error) {
	p := printerFor(info)
	rs := rowSet{columns: p.columns}
	for _, raw := range items {
		cells, err := p.row(raw, now)
		if err != nil {
			return rowSet{}, fmt.Errorf("decode %s: %w", info.Kind, err)
		}
		var obj struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &obj)
		m, _ := decodeMap(raw)
		rs.rows = append(rs.rows, printRow{cells: cells, meta: obj.Metadata, object: m})
	}
	return rs, nil
}

// listWithMore is kubectl's formatListWithMore.
func listWithMore(list []string, more bool, count, limit int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-limit)
	}
	return ret
}

// eventTime is when an event last happened.
func eventTime(e *api.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
