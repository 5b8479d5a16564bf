package kubectl

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/printers"
)

// Column layout of kubectl's printers (cli-runtime's tabwriter): a column
// is as wide as its widest cell plus 3 spaces, and at least 6; the last
// column is not padded. Widths are remembered across writes, so the rows
// of `get -w` line up with the table above them.
const (
	columnPadding  = 3
	columnMinWidth = 6
)

// columnWriter writes rows of cells aligned in columns.
type columnWriter struct {
	out    io.Writer
	widths []int
}

// write prints rows, widening columns as needed.
func (w *columnWriter) write(rows [][]string) error {
	for _, r := range rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			width := max(utf8.RuneCountInString(c)+columnPadding, columnMinWidth)
			if i >= len(w.widths) {
				w.widths = append(w.widths, width)
			} else if width > w.widths[i] {
				w.widths[i] = width
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", w.widths[i]-utf8.RuneCountInString(c)))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w.out, b.String())
	return err
}

// humanDuration renders an age as kubectl does (duration.HumanDuration):
// 45s, 3m2s, 12m, 4h, 5h30m, 2d3h, 30d, 2y10d. The server's Table printers
// and the CLI's own fallback share one implementation.
func humanDuration(d time.Duration) string { return printers.HumanDuration(d) }

// age is the age of a timestamp at now, "<unknown>" for none.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return humanDuration(now.Sub(t))
}

// Table is the meta.k8s.io/v1 Table a server answers to
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
type Table struct {
	api.TypeMeta      `json:",inline"`
	Metadata          api.ListMeta  `json:"metadata"`
	ColumnDefinitions []TableColumn `json:"columnDefinitions"`
	Rows              []TableRow    `json:"rows"`
}

// TableColumn describes one column; Priority > 0 columns show only with
// -o wide.
type TableColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
}

// TableRow is one object's cells and, by default, its metadata
// (PartialObjectMetadata) or the whole object.
type TableRow struct {
	Cells  []any           `json:"cells"`
	Object json.RawMessage `json:"object,omitempty"`
}

// rowSet is what get prints for one resource type: columns and rows,
// from a server Table or from the client-side printers.
type rowSet struct {
	columns []TableColumn
	rows    []printRow
}

// printRow is one row: its cells and the object's identity and labels
// (for -A, --show-labels, -L, -o name), and the full object when known
// (for --sort-by).
type printRow struct {
	cells  []string
	meta   api.ObjectMeta
	object map[string]any
}

// cellText renders one Table cell.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return "<none>"
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// rowsFromTable converts a server Table.
func rowsFromTable(t *Table) rowSet {
	rs := rowSet{columns: t.ColumnDefinitions}
	for _, r := range t.Rows {
		pr := printRow{}
		for _, c := range r.Cells {
			pr.cells = append(pr.cells, cellText(c))
		}
		if len(r.Object) > 0 {
			var obj struct {
				Metadata api.ObjectMeta `json:"metadata"`
			}
			if json.Unmarshal(r.Object, &obj) == nil {
				pr.meta = obj.Metadata
			}
			if m, err := decodeMap(r.Object); err == nil {
				pr.object = m
			}
		}
		rs.rows = append(rs.rows, pr)
	}
	return rs
}

// printOptions shape a table.
type printOptions struct {
	wide          bool
	noHeaders     bool
	withNamespace bool
	withKind      *api.ResourceInfo // prefix names with "kind.group/"
	showLabels    bool
	labelColumns  []string
}

// lines renders a rowSet into header and rows of cells.
func (rs rowSet) lines(o printOptions) (header []string, rows [][]string) {
	var keep []int
	nameCol := -1
	for i, c := range rs.columns {
		if c.Priority > 0 && !o.wide {
			continue
		}
		if nameCol < 0 && (c.Format == "name" || strings.EqualFold(c.Name, "name")) {
			nameCol = i
		}
		keep = append(keep, i)
	}
	if o.withNamespace {
		header = append(header, "NAMESPACE")
	}
	for _, i := range keep {
		header = append(header, strings.ToUpper(rs.columns[i].Name))
	}
	for _, l := range o.labelColumns {
		header = append(header, strings.ToUpper(l))
	}
	if o.showLabels {
		header = append(header, "LABELS")
	}
	for _, r := range rs.rows {
		var cells []string
		if o.withNamespace {
			cells = append(cells, r.meta.Namespace)
		}
		for _, i := range keep {
			c := ""
			if i < len(r.cells) {
				c = r.cells[i]
			}
			if i == nameCol && o.withKind != nil {
				c = objectRef(o.withKind, c)
			}
			cells = append(cells, c)
		}
		for _, l := range o.labelColumns {
			cells = append(cells, r.meta.Labels[l])
		}
		if o.showLabels {
			cells = append(cells, labelsText(r.meta.Labels))
		}
		rows = append(rows, cells)
	}
	return header, rows
}

// labelsText is "a=1,b=2" (sorted) or "<none>".
func labelsText(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	return joinMap(m, "=", ",")
}
