package apiserver

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/api/labels"
	"github.com/skiff-dev/skiff/store"
)

// filter applies a list's or watch's label and field selectors to raw
// stored values, decoding no more than it needs.
type filter struct {
	r     *resource
	label labels.Selector // nil: everything
	field fields.Selector // nil: everything
	// metaOnly: the field selector uses only metadata.name/namespace, so
	// the object need not be decoded.
	metaOnly bool
}

// newFilter parses labelSelector and fieldSelector from q.
func (s *Server) newFilter(r *resource, q url.Values) (*filter, error) {
	f := &filter{r: r, metaOnly: true}
	if v := q.Get("labelSelector"); strings.TrimSpace(v) != "" {
		sel, err := parseLabelSelector(v)
		if err != nil {
			return nil, NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		if sel != nil && !sel.Empty() {
			f.label = sel
		}
	}
	if v := q.Get("fieldSelector"); strings.TrimSpace(v) != "" {
		sel, err := parseFieldSelector(v)
		if err != nil {
			return nil, NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		if sel != nil && !sel.Empty() {
			for _, k := range sel.Fields() {
				if !r.fieldKeys[k] {
					return nil, NewBadRequest(fmt.Sprintf("field label not supported: %s", k))
				}
				if k != "metadata.name" && k != "metadata.namespace" {
					f.metaOnly = false
				}
			}
			f.field = sel
		}
	}
	return f, nil
}

func (f *filter) empty() bool { return f.label == nil && f.field == nil }

// metaOnly is the part of an object a label or metadata field selector needs.
type metaOnly struct {
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// matches reports whether a stored value passes the selectors.
func (f *filter) matches(raw []byte) (bool, error) {
	if f.empty() {
		return true, nil
	}
	if f.metaOnly {
		var m metaOnly
		if scanMeta(raw, &m) != nil {
			m = metaOnly{}
			if err := json.Unmarshal(raw, &m); err != nil {
				return false, fmt.Errorf("apiserver: decoding stored %s: %w", f.r.qualified, err)
			}
		}
		if f.label != nil && !f.label.Matches(m.Metadata.Labels) {
			return false, nil
		}
		if f.field != nil {
			return f.field.Matches(map[string]string{
				"metadata.name":      m.Metadata.Name,
				"metadata.namespace": m.Metadata.Namespace,
			}), nil
		}
		return true, nil
	}
	obj, err := f.r.decode(raw)
	if err != nil {
		return false, err
	}
	if f.label != nil && !f.label.Matches(obj.GetObjectMeta().Labels) {
		return false, nil
	}
	return f.field.Matches(f.r.fieldsOf(obj)), nil
}

// listPrefix is the key prefix the request lists or watches.
func (h *handler) listPrefix() string {
	if h.r.info.Namespaced && h.ns != "" {
		return h.r.prefix + h.ns + "/"
	}
	return h.r.prefix
}

// continueToken is the opaque state of a paginated list.
type continueToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"` // last returned key, relative to the prefix
}

func encodeContinue(rv int64, prefix, lastKey string) string {
	b, _ := json.Marshal(continueToken{Version: "meta.k8s.io/v1", RV: rv, Start: strings.TrimPrefix(lastKey, prefix)})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, NewBadRequest("continue key is not valid: illegal base64 data")
	}
	if err := json.Unmarshal(b, &t); err != nil || t.Version != "meta.k8s.io/v1" || t.Start == "" || t.RV <= 0 {
		return t, NewBadRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	return t, nil
}

// list streams the stored values into the list envelope without decoding
// them (unless a selector needs to look inside).
func (h *handler) list() {
	ctx := h.req.Context()
	q := h.req.URL.Query()
	f, err := h.s.newFilter(h.r, q)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	if err := checkListOptions(q); err != nil {
		writeErr(h.w, err)
		return
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(h.w, NewBadRequest(fmt.Sprintf("invalid limit %q", v)))
			return
		}
		limit = n
	}
	prefix := h.listPrefix()
	after := ""
	var rv int64
	if v := q.Get("continue"); v != "" {
		tok, err := decodeContinue(v)
		if err != nil {
			writeErr(h.w, err)
			return
		}
		after, rv = prefix+tok.Start, tok.RV
	}

	var items []store.KeyValue
	more := false
	if f.empty() {
		res, err := h.s.store.List(ctx, prefix, store.ListOptions{Limit: limit, After: after})
		if err != nil {
			writeErr(h.w, err)
			return
		}
		items, more = res.Items, res.More
		if rv == 0 {
			rv = res.Revision
		}
	} else {
		page := 0
		if limit > 0 {
			page = max(limit, 500)
		}
	pages:
		for {
			res, err := h.s.store.List(ctx, prefix, store.ListOptions{Limit: page, After: after})
			if err != nil {
				writeErr(h.w, err)
				return
			}
			if rv == 0 {
				rv = res.Revision
			}
			for i, kv := range res.Items {
				ok, err := f.matches(kv.Value)
				if err != nil {
					writeErr(h.w, err)
					return
				}
				if !ok {
					continue
				}
				items = append(items, kv)
				if limit > 0 && len(items) == limit {
					more = i < len(res.Items)-1 || res.More
					break pages
				}
			}
			if !res.More || len(res.Items) == 0 {
				break
			}
			after = res.Items[len(res.Items)-1].Key
		}
	}
	cont := ""
	if more && len(items) > 0 {
		cont = encodeContinue(rv, prefix, items[len(items)-1].Key)
	}
	if h.view != nil {
		viewed := make([]store.KeyValue, len(items))
		for i, kv := range items {
			v, err := h.view(kv.Value)
			if err != nil {
				writeErr(h.w, err)
				return
			}
			viewed[i] = store.KeyValue{Key: kv.Key, Value: v}
		}
		items = viewed
	}
	h.writeList(rv, cont, items)
}

// writeList writes the list envelope around raw items.
func (h *handler) writeList(rv int64, cont string, items []store.KeyValue) {
	w := h.w
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := h.s.bufPool.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		h.s.bufPool.Put(bw)
	}()
	bw.WriteString(`{"kind":`)
	writeQuoted(bw, h.r.info.ListKind)
	bw.WriteString(`,"apiVersion":`)
	writeQuoted(bw, h.r.info.GroupVersion())
	bw.WriteString(`,"metadata":{"resourceVersion":"`)
	var num [20]byte
	bw.Write(strconv.AppendInt(num[:0], rv, 10))
	bw.WriteByte('"')
	if cont != "" {
		bw.WriteString(`,"continue":"`)
		bw.WriteString(cont) // base64url: no escaping needed
		bw.WriteByte('"')
	}
	bw.WriteString(`},"items":[`)
	for i, kv := range items {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(kv.Value)
	}
	bw.WriteString("]}\n")
	_ = bw.Flush()
}

func writeQuoted(bw *bufio.Writer, s string) {
	b, _ := json.Marshal(s)
	bw.Write(b)
}

// sortedKeys is for deterministic discovery output.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// checkListOptions refuses a list's resourceVersion and
// resourceVersionMatch that Kubernetes refuses: a resourceVersion that is
// no revision (400, as kube-apiserver answers a version it cannot parse),
// and, as its ListOptions validation (422 on ListOptions.meta.k8s.io), a
// resourceVersionMatch other than NotOlderThan or Exact, one without a
// resourceVersion, and Exact with resourceVersion 0. The list itself is
// always served at the latest revision (docs/api.md).
func checkListOptions(q url.Values) error {
	rv, match := q.Get("resourceVersion"), q.Get("resourceVersionMatch")
	if rv != "" {
		if n, err := strconv.ParseInt(rv, 10, 64); err != nil || n < 0 {
			return NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
		}
	}
	if match == "" {
		return nil
	}
	p := field.NewPath("resourceVersionMatch")
	var errs field.ErrorList
	switch {
	case rv == "":
		errs = append(errs, field.Forbidden(p, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
	case match != "NotOlderThan" && match != "Exact":
		errs = append(errs, field.NotSupported(p, match, []string{"Exact", "NotOlderThan"}))
	case match == "Exact" && rv == "0":
		errs = append(errs, field.Forbidden(p, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
	}
	if len(errs) > 0 {
		return NewInvalid("ListOptions.meta.k8s.io", "", errs)
	}
	return nil
}
