package kubectl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/kubectl/jsonpath"
)

type getOptions struct {
	g                 *globals
	output            string
	selector          string
	fieldSelector     string
	allNamespaces     bool
	watch             bool
	watchOnly         bool
	outputWatchEvents bool
	noHeaders         bool
	showLabels        bool
	labelColumns      []string
	sortBy            string
	ignoreNotFound    bool
}

func newGetCommand(g *globals) *cobra.Command {
	o := &getOptions{g: g}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME... [flags]",
		Short: "Display one or many resources",
		Long: `Display one or many resources, as kubectl get does.

Resource types take their plural, singular or short names (svc, po, deploy,
sts, ns, no, ep, ev, cm, sa, endpointslices), optionally with their group
(deployments.apps). The server's Table columns are printed when it serves
them; otherwise the client prints kubectl's columns itself.`,
		Example: `  skiff get svc data-channel
  skiff get endpointslices -l kubernetes.io/service-name=data-channel
  skiff get pods -A -o wide
  skiff get deploy/web -o jsonpath='{.status.readyReplicas}'
  skiff get pods -w`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errNoResourceToGet
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "output format: json, yaml, wide, name, jsonpath=TEMPLATE, custom-columns=SPEC")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector (e.g. -l app=web,tier!=db)")
	f.StringVar(&o.fieldSelector, "field-selector", "", "field selector (e.g. --field-selector status.phase=Running)")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list across all namespaces")
	f.BoolVarP(&o.watch, "watch", "w", false, "after listing, watch for changes")
	f.BoolVar(&o.watchOnly, "watch-only", false, "watch for changes without listing first")
	f.BoolVar(&o.outputWatchEvents, "output-watch-events", false, "print the watch event type (ADDED, MODIFIED, DELETED) in an EVENT column")
	f.BoolVar(&o.noHeaders, "no-headers", false, "do not print headers")
	f.BoolVar(&o.showLabels, "show-labels", false, "print the labels in a last column")
	f.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "labels to print as columns")
	f.StringVar(&o.sortBy, "sort-by", "", "sort by a JSONPath expression (e.g. .metadata.creationTimestamp)")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "treat a missing named object as no error")
	return cmd
}

var errNoResourceToGet = &ExitError{Code: 1, Msg: "You must specify the type of resource to get. Use \"skiff api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified."}

// fetched is the answer for one target: rows (table output) or objects.
type fetched struct {
	t       target
	ns      string
	rows    rowSet
	objects []map[string]any
	rv      string
	errs    []error
}

func (o *getOptions) run(ctx context.Context, s *session, args []string) error {
	if len(args) == 0 {
		return errNoResourceToGet
	}
	f, err := parseOutput(o.output)
	if err != nil {
		return err
	}
	if o.sortBy != "" {
		if _, err := jsonpath.Eval(o.sortBy, map[string]any{}); err != nil {
			return usageError("invalid --sort-by %q: %v", o.sortBy, err)
		}
	}
	targets, err := s.parseTargets(args)
	if err != nil {
		return err
	}
	watching := o.watch || o.watchOnly
	if watching {
		n := 0
		for _, t := range targets {
			n += max(len(t.names), 1)
		}
		if n > 1 {
			return usageError("watch is only supported on individual resources and resource collections, but %d resources were found", n)
		}
	}
	if o.allNamespaces && anyNames(targets) {
		return usageError("a resource cannot be retrieved by name across all namespaces")
	}

	var results []*fetched
	for _, t := range targets {
		r := &fetched{t: t, ns: s.namespaceFor(t.info, o.allNamespaces)}
		if !o.watchOnly {
			if err := o.fetch(ctx, s, f, r); err != nil {
				return err
			}
		}
		results = append(results, r)
	}

	failed := false
	for _, r := range results {
		for _, e := range r.errs {
			if o.ignoreNotFound && client.IsNotFound(e) {
				continue
			}
			fmt.Fprintln(s.env.ErrOut, errorText(e))
			failed = true
		}
	}

	w := &columnWriter{out: s.env.Out}
	printed := false
	if !o.watchOnly {
		printed, err = o.print(s, f, results, w)
		if err != nil {
			return err
		}
		if !printed && !failed && !anyNames(targets) {
			fmt.Fprintln(s.env.ErrOut, noResourcesText(s, targets, o.allNamespaces))
		}
	}
	if watching && !failed {
		return o.watchLoop(ctx, s, f, results[0], w, printed)
	}
	if failed {
		return errPrinted
	}
	return nil
}

func anyNames(ts []target) bool {
	for _, t := range ts {
		if len(t.names) > 0 {
			return true
		}
	}
	return false
}

// noResourcesText is kubectl's message for an empty answer.
func noResourcesText(s *session, ts []target, all bool) string {
	namespaced := false
	for _, t := range ts {
		namespaced = namespaced || t.info.Namespaced
	}
	if all || !namespaced {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", s.ns)
}

// listQuery is the query of a list or watch.
func (o *getOptions) listQuery() url.Values {
	q := url.Values{}
	if o.selector != "" {
		q.Set("labelSelector", o.selector)
	}
	if o.fieldSelector != "" {
		q.Set("fieldSelector", o.fieldSelector)
	}
	return q
}

// fetch reads one target: Tables for table output, objects otherwise.
func (o *getOptions) fetch(ctx context.Context, s *session, f outputFormat, r *fetched) error {
	info := r.t.info
	tableOut := f.kind == outTable
	now := s.env.Now()
	accept := acceptJSON
	if tableOut {
		accept = acceptTable
	}
	add := func(data []byte) error {
		var probe struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &probe); err != nil {
			return fmt.Errorf("decode %s: %w", info.Resource, err)
		}
		switch {
		case probe.Kind == "Table":
			var t Table
			if err := json.Unmarshal(data, &t); err != nil {
				return fmt.Errorf("decode Table: %w", err)
			}
			rs := rowsFromTable(&t)
			r.rows.columns = rs.columns
			r.rows.rows = append(r.rows.rows, rs.rows...)
			r.rv = t.Metadata.ResourceVersion
			return nil
		case tableOut:
			items := []json.RawMessage{data}
			if probe.Items != nil || strings.HasSuffix(probe.Kind, "List") {
				var rv string
				var err error
				items, rv, err = rawItems(data)
				if err != nil {
					return err
				}
				r.rv = rv
			}
			rs, err := clientRows(info, items, now)
			if err != nil {
				return err
			}
			r.rows.columns = rs.columns
			r.rows.rows = append(r.rows.rows, rs.rows...)
			return nil
		}
		if probe.Items != nil || strings.HasSuffix(probe.Kind, "List") {
			items, rv, err := rawItems(data)
			if err != nil {
				return err
			}
			r.rv = rv
			for _, raw := range items {
				m, err := decodeMap(raw)
				if err != nil {
					return err
				}
				fillTypeMeta(m, info)
				r.objects = append(r.objects, m)
			}
			return nil
		}
		m, err := decodeMap(data)
		if err != nil {
			return err
		}
		fillTypeMeta(m, info)
		r.objects = append(r.objects, m)
		return nil
	}
	if len(r.t.names) == 0 {
		p, err := client.ResourcePath(info, r.ns, "")
		if err != nil {
			return err
		}
		q := o.listQuery()
		if o.sortBy != "" && tableOut {
			q.Set("includeObject", "Object")
		}
		data, err := s.raw.getJSON(ctx, p, q, accept)
		if err != nil {
			return err
		}
		return add(data)
	}
	for _, name := range r.t.names {
		p, err := client.ResourcePath(info, r.ns, name)
		if err != nil {
			return err
		}
		data, err := s.raw.getJSON(ctx, p, nil, accept)
		if err != nil {
			var ae *client.APIError
			if errors.As(err, &ae) {
				r.errs = append(r.errs, err)
				continue
			}
			return err
		}
		if err := add(data); err != nil {
			return err
		}
		if r.rv == "" {
			var m struct {
				Metadata api.ObjectMeta `json:"metadata"`
			}
			if json.Unmarshal(data, &m) == nil {
				r.rv = m.Metadata.ResourceVersion
			}
		}
	}
	return nil
}

// fillTypeMeta sets the apiVersion and kind list items lack.
func fillTypeMeta(m map[string]any, info *api.ResourceInfo) {
	if _, ok := m["apiVersion"]; !ok {
		m["apiVersion"] = info.GroupVersion()
	}
	if _, ok := m["kind"]; !ok {
		m["kind"] = info.Kind
	}
}

// sortRows orders rows by the --sort-by expression evaluated on their
// objects.
func sortRows(rows []printRow, expr string) {
	key := func(r printRow) any {
		if r.object == nil {
			return nil
		}
		vals, _ := jsonpath.Eval(expr, r.object)
		if len(vals) == 0 {
			return nil
		}
		return vals[0]
	}
	slices.SortStableFunc(rows, func(a, b printRow) int { return compareValues(key(a), key(b)) })
}

// compareValues orders JSON scalars: missing first, numbers numerically,
// the rest by their text.
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, _ := an.Float64()
		bf, _ := bn.Float64()
		switch {
		case af < bf:
			return -1
		case af > bf:
			return 1
		}
		return 0
	}
	return strings.Compare(cellText(a), cellText(b))
}

// print writes the fetched results; it reports whether anything was
// printed.
func (o *getOptions) print(s *session, f outputFormat, results []*fetched, w *columnWriter) (bool, error) {
	out := s.env.Out
	switch f.kind {
	case outTable:
		printed := false
		withKind := len(results) > 1
		for _, r := range results {
			if len(r.rows.rows) == 0 {
				continue
			}
			if o.sortBy != "" {
				sortRows(r.rows.rows, o.sortBy)
			}
			opts := o.printOptions(f, r, withKind)
			header, rows := r.rows.lines(opts)
			if o.outputWatchEvents && (o.watch || o.watchOnly) {
				header = append([]string{"EVENT"}, header...)
				for i := range rows {
					rows[i] = append([]string{"ADDED"}, rows[i]...)
				}
			}
			if printed {
				fmt.Fprintln(out)
				w = &columnWriter{out: out}
			}
			if !o.noHeaders {
				rows = append([][]string{header}, rows...)
			}
			if err := w.write(rows); err != nil {
				return printed, err
			}
			printed = true
		}
		return printed, nil
	case outCustomColumns:
		var objs []map[string]any
		for _, r := range results {
			objs = append(objs, r.objects...)
		}
		if len(objs) == 0 {
			return false, nil
		}
		return true, w.write(customColumnRows(f.columns, o.sorted(objs), o.noHeaders))
	}
	var objs []map[string]any
	var refs []string
	for _, r := range results {
		for _, m := range o.sorted(r.objects) {
			objs = append(objs, m)
			refs = append(refs, objectRef(r.t.info, str(m, "metadata", "name")))
		}
	}
	if len(objs) == 0 {
		return false, nil
	}
	if f.kind == outName {
		for _, ref := range refs {
			fmt.Fprintln(out, ref)
		}
		return true, nil
	}
	single := len(results) == 1 && len(results[0].t.names) == 1 && len(objs) == 1
	if single {
		return true, printObject(out, f, objs[0], refs[0])
	}
	return true, printObject(out, f, listObject(objs), "")
}

// sorted applies --sort-by to objects.
func (o *getOptions) sorted(objs []map[string]any) []map[string]any {
	if o.sortBy == "" {
		return objs
	}
	rows := make([]printRow, len(objs))
	for i, m := range objs {
		rows[i] = printRow{object: m}
	}
	sortRows(rows, o.sortBy)
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = r.object
	}
	return out
}

func (o *getOptions) printOptions(f outputFormat, r *fetched, withKind bool) printOptions {
	opts := printOptions{
		wide:          f.wide,
		noHeaders:     o.noHeaders,
		withNamespace: o.allNamespaces && r.t.info.Namespaced,
		showLabels:    o.showLabels,
		labelColumns:  o.labelColumns,
	}
	if withKind {
		opts.withKind = r.t.info
	}
	return opts
}

// watchEvent is one event of a watch stream, decoded lazily.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watchLoop prints the changes of one target until ctx ends, re-opening
// the watch from the last seen resourceVersion when the server ends it.
func (o *getOptions) watchLoop(ctx context.Context, s *session, f outputFormat, r *fetched, w *columnWriter, headerDone bool) error {
	info := r.t.info
	p, err := client.ResourcePath(info, r.ns, "")
	if err != nil {
		return err
	}
	accept := acceptJSON
	if f.kind == outTable {
		accept = acceptTable
	}
	columns := r.rows.columns
	if len(columns) == 0 {
		columns = printerFor(info).columns
	}
	rv := r.rv
	for {
		q := o.listQuery()
		if len(r.t.names) == 1 {
			sel := "metadata.name=" + r.t.names[0]
			if o.fieldSelector != "" {
				sel += "," + o.fieldSelector
			}
			q.Set("fieldSelector", sel)
		}
		q.Set("watch", "true")
		q.Set("allowWatchBookmarks", "true")
		if rv != "" {
			q.Set("resourceVersion", rv)
		}
		resp, err := s.raw.get(ctx, p, q, accept)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var ev watchEvent
			if err := dec.Decode(&ev); err != nil {
				resp.Body.Close()
				if ctx.Err() != nil {
					return nil
				}
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					break
				}
				return fmt.Errorf("watch %s: %w", info.Resource, err)
			}
			switch ev.Type {
			case "ERROR":
				resp.Body.Close()
				return statusError(500, ev.Object)
			case "BOOKMARK":
				var m struct {
					Metadata api.ObjectMeta `json:"metadata"`
				}
				if json.Unmarshal(ev.Object, &m) == nil && m.Metadata.ResourceVersion != "" {
					rv = m.Metadata.ResourceVersion
				}
				continue
			}
			newRV, err := o.printEvent(s, f, info, ev, &columns, w, &headerDone)
			if err != nil {
				resp.Body.Close()
				return err
			}
			if newRV != "" {
				rv = newRV
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// printEvent prints one watch event and returns the resourceVersion it
// carries.
func (o *getOptions) printEvent(s *session, f outputFormat, info *api.ResourceInfo, ev watchEvent, columns *[]TableColumn, w *columnWriter, headerDone *bool) (string, error) {
	var probe struct {
		Kind     string         `json:"kind"`
		Metadata api.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Object, &probe); err != nil {
		return "", fmt.Errorf("decode watch event: %w", err)
	}
	if f.kind != outTable {
		m, err := decodeMap(ev.Object)
		if err != nil {
			return "", err
		}
		fillTypeMeta(m, info)
		if f.kind == outCustomColumns {
			return probe.Metadata.ResourceVersion, w.write(customColumnRows(f.columns, []map[string]any{m}, true))
		}
		if f.kind == outYAML {
			fmt.Fprintln(s.env.Out, "---")
		}
		return probe.Metadata.ResourceVersion, printObject(s.env.Out, f, m, objectRef(info, probe.Metadata.Name))
	}
	var rs rowSet
	rv := probe.Metadata.ResourceVersion
	if probe.Kind == "Table" {
		var t Table
		if err := json.Unmarshal(ev.Object, &t); err != nil {
			return "", fmt.Errorf("decode Table: %w", err)
		}
		rs = rowsFromTable(&t)
		if len(rs.columns) == 0 {
			rs.columns = *columns
		} else {
			*columns = rs.columns
		}
		for _, row := range rs.rows {
			if row.meta.ResourceVersion != "" {
				rv = row.meta.ResourceVersion
			}
		}
	} else {
		var err error
		rs, err = clientRows(info, []json.RawMessage{ev.Object}, s.env.Now())
		if err != nil {
			return "", err
		}
	}
	opts := o.printOptions(outputFormat{kind: outTable, wide: f.wide}, &fetched{t: target{info: info}}, false)
	opts.withNamespace = o.allNamespaces && info.Namespaced
	header, rows := rs.lines(opts)
	if o.outputWatchEvents {
		header = append([]string{"EVENT"}, header...)
		for i := range rows {
			rows[i] = append([]string{ev.Type}, rows[i]...)
		}
	}
	if !*headerDone && !o.noHeaders {
		rows = append([][]string{header}, rows...)
	}
	*headerDone = true
	return rv, w.write(rows)
}
