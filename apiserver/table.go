package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/printers"
)

// Server-side printing. A GET list, get or watch whose Accept header asks for
// `application/json;as=Table;v=v1;g=meta.k8s.io` is answered with a
// meta.k8s.io Table of the resource's kubectl columns (package printers);
// one asking `as=PartialObjectMetadata[List]` with the objects' metadata
// only. The resource handlers are not aware of it: outputConverter wraps the
// ResponseWriter and converts the JSON they write (a list, an object, or
// watch events line by line) on the way out. Errors pass through unchanged.

// outputForm is the shape an Accept header asks a GET to answer in.
type outputForm int

const (
	formObject  outputForm = iota // the object or list itself
	formTable                     // meta.k8s.io Table
	formPartial                   // meta.k8s.io PartialObjectMetadata(List)
)

// output is a negotiated output form and the meta.k8s.io version it is in.
type output struct {
	form    outputForm
	version string // v1 or v1beta1
}

type acceptClause struct {
	mediaType string
	params    map[string]string
	q         float64
	order     int
}

// negotiateOutput picks the first acceptable clause of an Accept header
// (by q, then order) for a get (list=false) or a list or watch (list=true).
// Clauses Skiff cannot produce (protobuf, YAML, unknown `as=`) are skipped;
// when none is left, a header that asked for a transformation (`as=`) gets
// 406 and any other gets plain JSON, so that loose clients keep working.
func negotiateOutput(accept string, list bool) (output, error) {
	if strings.TrimSpace(accept) == "" {
		return output{}, nil
	}
	var clauses []acceptClause
	for i, part := range strings.Split(accept, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		clauses = append(clauses, acceptClause{mediaType: mt, params: params, q: q, order: i})
	}
	sort.SliceStable(clauses, func(i, j int) bool { return clauses[i].q > clauses[j].q })
	askedAs := false
	for _, c := range clauses {
		if c.q <= 0 {
			continue
		}
		as := c.params["as"]
		if as != "" {
			askedAs = true
		}
		switch c.mediaType {
		case "application/json", "application/*", "*/*":
		default:
			continue
		}
		if as == "" {
			return output{form: formObject}, nil
		}
		g, v := c.params["g"], c.params["v"]
		if g != "meta.k8s.io" || (v != "v1" && v != "v1beta1") {
			continue
		}
		switch {
		case as == "Table":
			return output{form: formTable, version: v}, nil
		case as == "PartialObjectMetadata" && !list, as == "PartialObjectMetadataList" && list:
			return output{form: formPartial, version: v}, nil
		}
	}
	if askedAs {
		return output{}, newStatusError(http.StatusNotAcceptable, api.StatusReasonNotAcceptable,
			"only the following media types are accepted: application/json, application/json;as=Table;v=v1;g=meta.k8s.io", nil)
	}
	return output{form: formObject}, nil
}

// includeObject is the includeObject query parameter of a Table request.
type includeObject string

const (
	includeNone     includeObject = "None"
	includeMetadata includeObject = "Metadata"
	includeFull     includeObject = "Object"
)

// outputConverter negotiates the output of a GET list, get or watch and, for
// a Table or PartialObjectMetadata, swaps h.w for a converting writer. It
// returns the function to call once the handler is done (nil-safe: a no-op
// when nothing is converted) and false when it has answered the request
// itself (406, 400).
func (s *Server) outputConverter(h *handler, verb string) (func(), bool) {
	noop := func() {}
	if h.sub != "" || (verb != "list" && verb != "watch" && verb != "get") {
		return noop, true
	}
	out, err := negotiateOutput(h.req.Header.Get("Accept"), verb != "get")
	if err != nil {
		writeErr(h.w, err)
		return noop, false
	}
	if out.form == formObject {
		return noop, true
	}
	inc := includeMetadata
	if v := h.req.URL.Query().Get("includeObject"); v != "" {
		inc = includeObject(v)
		if inc != includeNone && inc != includeMetadata && inc != includeFull {
			writeError(h.w, NewBadRequest(fmt.Sprintf("includeObject: Unsupported value: %q: supported values: \"None\", \"Metadata\", \"Object\"", v)))
			return noop, false
		}
	}
	cw := &convertWriter{
		w:       h.w,
		conv:    &converter{r: h.r, out: out, include: inc, now: s.now(), printer: printerOf(h.r.info)},
		verb:    verb,
		columns: true,
	}
	h.w = cw
	return cw.finish, true
}

// printerOf is the Table printer of a resource: its own (ResourceInfo.Table)
// or package printers'.
func printerOf(info *api.ResourceInfo) *printers.Printer {
	if info.Table != nil {
		return printers.FromTable(info.Table)
	}
	return printers.For(info.Group, info.Resource)
}

// converter turns stored JSON objects into Tables or partial metadata.
type converter struct {
	r       *resource
	out     output
	include includeObject
	now     time.Time
	printer *printers.Printer
}

func (c *converter) metaAPIVersion() string { return "meta.k8s.io/" + c.out.version }

type partialObjectMetadata struct {
	Kind       string          `json:"kind"`
	APIVersion string          `json:"apiVersion"`
	Metadata   *api.ObjectMeta `json:"metadata"`
}

func (c *converter) partial(obj api.Object) partialObjectMetadata {
	return partialObjectMetadata{Kind: "PartialObjectMetadata", APIVersion: c.metaAPIVersion(), Metadata: obj.GetObjectMeta()}
}

// row is the Table row of one stored object.
func (c *converter) row(raw []byte) (printers.Row, error) {
	obj, err := c.r.decode(raw)
	if err != nil {
		return printers.Row{}, err
	}
	row := c.printer.Row(obj, c.now)
	switch c.include {
	case includeFull:
		row.Object = json.RawMessage(raw)
	case includeMetadata:
		b, err := json.Marshal(c.partial(obj))
		if err != nil {
			return printers.Row{}, err
		}
		row.Object = b
	}
	return row, nil
}

// table builds a Table of raw objects; columns only when withColumns (a
// watch sends them with its first event only, as Kubernetes does).
func (c *converter) table(meta api.ListMeta, items []json.RawMessage, withColumns bool) ([]byte, error) {
	t := printers.Table{Kind: "Table", APIVersion: c.metaAPIVersion(), Metadata: meta, Rows: make([]printers.Row, 0, len(items))}
	if withColumns {
		t.ColumnDefinitions = c.printer.Columns
	}
	for _, raw := range items {
		row, err := c.row(raw)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return json.Marshal(t)
}

// partialList is a PartialObjectMetadataList of raw objects.
func (c *converter) partialList(meta api.ListMeta, items []json.RawMessage) ([]byte, error) {
	l := struct {
		Kind       string                  `json:"kind"`
		APIVersion string                  `json:"apiVersion"`
		Metadata   api.ListMeta            `json:"metadata"`
		Items      []partialObjectMetadata `json:"items"`
	}{Kind: "PartialObjectMetadataList", APIVersion: c.metaAPIVersion(), Metadata: meta, Items: make([]partialObjectMetadata, 0, len(items))}
	for _, raw := range items {
		obj, err := c.r.decode(raw)
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, c.partial(obj))
	}
	return json.Marshal(l)
}

// convertList converts a list envelope.
func (c *converter) convertList(body []byte) ([]byte, error) {
	var env struct {
		Metadata api.ListMeta      `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("apiserver: converting a list: %w", err)
	}
	if c.out.form == formPartial {
		return c.partialList(env.Metadata, env.Items)
	}
	return c.table(env.Metadata, env.Items, true)
}

// convertObject converts a single object.
func (c *converter) convertObject(body []byte) ([]byte, error) {
	if c.out.form == formPartial {
		obj, err := c.r.decode(body)
		if err != nil {
			return nil, err
		}
		return json.Marshal(c.partial(obj))
	}
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(body, &m)
	return c.table(api.ListMeta{ResourceVersion: m.Metadata.ResourceVersion}, []json.RawMessage{body}, true)
}

// convertEvent converts one watch event line; ERROR events pass unchanged.
func (c *converter) convertEvent(line []byte, withColumns bool) ([]byte, error) {
	var ev api.WatchEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, fmt.Errorf("apiserver: converting a watch event: %w", err)
	}
	var obj []byte
	var err error
	switch {
	case ev.Type == api.WatchError:
		return line, nil
	case ev.Type == api.WatchBookmark:
		var m struct {
			Metadata api.ListMeta `json:"metadata"`
		}
		_ = json.Unmarshal(ev.Object, &m)
		if c.out.form == formPartial {
			obj, err = json.Marshal(partialObjectMetadata{Kind: "PartialObjectMetadata", APIVersion: c.metaAPIVersion(),
				Metadata: &api.ObjectMeta{ResourceVersion: m.Metadata.ResourceVersion}})
		} else {
			obj, err = c.table(api.ListMeta{ResourceVersion: m.Metadata.ResourceVersion}, nil, false)
		}
	case c.out.form == formPartial:
		obj, err = c.convertObject(ev.Object)
	default:
		var m struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(ev.Object, &m)
		obj, err = c.table(api.ListMeta{ResourceVersion: m.Metadata.ResourceVersion}, []json.RawMessage{ev.Object}, withColumns)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(api.WatchEvent{Type: ev.Type, Object: obj})
}

// convertWriter is the ResponseWriter a converted request's handler writes
// to. A list or get is buffered and converted in finish; a watch is
// converted line by line as it streams. A response other than 200 passes
// through untouched.
type convertWriter struct {
	w       http.ResponseWriter
	conv    *converter
	verb    string
	code    int
	buf     bytes.Buffer
	columns bool // the next watch event carries the column definitions
	failed  bool
}

func (cw *convertWriter) Header() http.Header { return cw.w.Header() }

func (cw *convertWriter) streaming() bool { return cw.verb == "watch" && cw.code == http.StatusOK }

func (cw *convertWriter) WriteHeader(code int) {
	if cw.code != 0 {
		return
	}
	cw.code = code
	if cw.verb == "watch" {
		if code == http.StatusOK {
			cw.w.Header().Del("Content-Length")
		}
		cw.w.WriteHeader(code)
	}
}

func (cw *convertWriter) Write(p []byte) (int, error) {
	if cw.code == 0 {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.verb == "watch" && cw.code != http.StatusOK {
		return cw.w.Write(p)
	}
	cw.buf.Write(p)
	if !cw.streaming() {
		return len(p), nil
	}
	for {
		i := bytes.IndexByte(cw.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := cw.buf.Next(i + 1)
		if cw.failed {
			continue
		}
		out, err := cw.conv.convertEvent(bytes.TrimSpace(line), cw.columns)
		if err != nil {
			// A stored object that cannot be printed ends the watch with
			// an ERROR event; the client re-lists.
			cw.failed = true
			b, _ := json.Marshal(AsStatusError(err).status)
			out, _ = json.Marshal(api.WatchEvent{Type: api.WatchError, Object: b})
		}
		cw.columns = false
		out = append(out, '\n')
		if _, err := cw.w.Write(out); err != nil {
			return 0, err
		}
	}
}

// Flush passes a watch's flushes through.
func (cw *convertWriter) Flush() {
	if f, ok := cw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish converts and sends a buffered list or get.
func (cw *convertWriter) finish() {
	if cw.verb == "watch" {
		return
	}
	if cw.code == 0 {
		cw.code = http.StatusOK
	}
	body := cw.buf.Bytes()
	if cw.code != http.StatusOK {
		cw.w.WriteHeader(cw.code)
		_, _ = cw.w.Write(body)
		return
	}
	var out []byte
	var err error
	if cw.verb == "list" {
		out, err = cw.conv.convertList(body)
	} else {
		out, err = cw.conv.convertObject(body)
	}
	if err != nil {
		writeErr(cw.w, err)
		return
	}
	writeRaw(cw.w, http.StatusOK, out)
}
