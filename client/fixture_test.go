package client_test

// This file is a TEST FIXTURE: a small stand-in for the Skiff API server that
// implements only what client_test.go calls (bearer auth, get, list with
// limit/continue, create, update, merge and JSON patch, delete, watch as a
// chunked newline-delimited JSON stream, Status error bodies). It is served
// over real HTTPS on 127.0.0.1 by httptest.NewTLSServer. The real apiserver
// is tested against this client after the branches merge.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

const fixtureToken = "s3cret"

// fixtureRequest is what the fixture saw of one request.
type fixtureRequest struct {
	Method      string
	EscapedPath string
	Query       url.Values
	ContentType string
	UserAgent   string
	Body        []byte
}

type fixtureEvent struct {
	rv    int64
	coll  string // group/resource
	ns    string
	event client.Event
}

type fixture struct {
	t *testing.T

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every write
	rv        int64
	compacted int64
	uid       int
	objects   map[string]map[string]any // coll|ns|name -> object
	events    []fixtureEvent
	requests  []fixtureRequest
	// failNext, when set, answers the next request with this code and a
	// plain-text (non-Status) body.
	failNext int
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, changed: make(chan struct{}), objects: map[string]map[string]any{}}
}

func (f *fixture) lastRequest() fixtureRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		f.t.Fatal("fixture: no request recorded")
	}
	return f.requests[len(f.requests)-1]
}

// compact drops the event history up to the current revision.
func (f *fixture) compact() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compacted = f.rv
	f.events = nil
}

func writeStatus(w http.ResponseWriter, code int, reason api.StatusReason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(api.Status{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   "Failure", Message: msg, Reason: reason, Code: int32(code),
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// route is a parsed resource path.
type route struct {
	group, version, resource, ns, name, sub string
}

func (r route) coll() string { return r.group + "/" + r.resource }
func (r route) key(name string) string {
	return r.coll() + "|" + r.ns + "|" + name
}

func parseRoute(escaped string) (route, bool) {
	var segs []string
	for _, s := range strings.Split(strings.Trim(escaped, "/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return route{}, false
		}
		segs = append(segs, u)
	}
	var r route
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		r.version, segs = segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		r.group, r.version, segs = segs[1], segs[2], segs[3:]
	default:
		return route{}, false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		r.ns, segs = segs[1], segs[2:]
	}
	switch len(segs) {
	case 3:
		r.sub = segs[2]
		fallthrough
	case 2:
		r.name = segs[1]
		fallthrough
	case 1:
		r.resource = segs[0]
	default:
		return route{}, false
	}
	return r, true
}

func (f *fixture) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		writeStatus(w, http.StatusBadRequest, api.StatusReasonBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, fixtureRequest{
		Method: req.Method, EscapedPath: req.URL.EscapedPath(), Query: req.URL.Query(),
		ContentType: req.Header.Get("Content-Type"), UserAgent: req.Header.Get("User-Agent"), Body: body,
	})
	failNext := f.failNext
	f.failNext = 0
	f.mu.Unlock()

	if req.Header.Get("Authorization") != "Bearer "+fixtureToken {
		writeStatus(w, http.StatusUnauthorized, api.StatusReasonUnauthorized, "Unauthorized")
		return
	}
	if failNext != 0 {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(failNext)
		_, _ = w.Write([]byte("upstream is sad\n"))
		return
	}
	r, ok := parseRoute(req.URL.EscapedPath())
	if !ok {
		writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, "the server could not find the requested resource")
		return
	}
	switch {
	case req.Method == http.MethodGet && r.name == "" && req.URL.Query().Get("watch") == "true":
		f.watch(w, req, r)
	case req.Method == http.MethodGet && r.name == "":
		f.list(w, req, r)
	case req.Method == http.MethodGet:
		f.get(w, r)
	case req.Method == http.MethodPost && r.name == "":
		f.create(w, r, body)
	case req.Method == http.MethodPut && r.name != "":
		f.update(w, r, body)
	case req.Method == http.MethodPatch && r.name != "":
		f.patch(w, req, r, body)
	case req.Method == http.MethodDelete && r.name != "":
		f.delete(w, r)
	default:
		writeStatus(w, http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed, "method not allowed")
	}
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// commit stores (or, with obj nil, removes) an object and records the event.
// f.mu must be held.
func (f *fixture) commit(r route, name, typ string, obj map[string]any) {
	f.rv++
	if typ == client.EventDeleted {
		delete(f.objects, r.key(name))
	} else {
		f.objects[r.key(name)] = obj
	}
	meta(obj)["resourceVersion"] = strconv.FormatInt(f.rv, 10)
	raw, _ := json.Marshal(obj)
	f.events = append(f.events, fixtureEvent{rv: f.rv, coll: r.coll(), ns: r.ns, event: client.Event{Type: typ, Object: raw}})
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fixture) get(w http.ResponseWriter, r route) {
	f.mu.Lock()
	defer f.mu.Unlock()
	obj, ok := f.objects[r.key(r.name)]
	if !ok {
		writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("%s %q not found", r.resource, r.name))
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

func (f *fixture) list(w http.ResponseWriter, req *http.Request, r route) {
	q := req.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []string
	for k, obj := range f.objects {
		if !strings.HasPrefix(k, r.coll()+"|") || (r.ns != "" && !strings.HasPrefix(k, r.key(""))) {
			continue
		}
		if sel := q.Get("labelSelector"); sel != "" {
			k2, v2, _ := strings.Cut(sel, "=")
			labels, _ := meta(obj)["labels"].(map[string]any)
			if labels[k2] != v2 {
				continue
			}
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	start := 0
	if c := q.Get("continue"); c != "" {
		start, _ = strconv.Atoi(c)
	}
	end := len(keys)
	lm := api.ListMeta{ResourceVersion: strconv.FormatInt(f.rv, 10)}
	if l, _ := strconv.Atoi(q.Get("limit")); l > 0 && start+l < end {
		end = start + l
		lm.Continue = strconv.Itoa(end)
	}
	items := []map[string]any{}
	for _, k := range keys[start:end] {
		items = append(items, f.objects[k])
	}
	writeJSON(w, http.StatusOK, map[string]any{"apiVersion": "v1", "kind": "WidgetList", "metadata": lm, "items": items})
}

func (f *fixture) create(w http.ResponseWriter, r route, body []byte) {
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		writeStatus(w, http.StatusBadRequest, api.StatusReasonBadRequest, err.Error())
		return
	}
	m := meta(obj)
	name, _ := m["name"].(string)
	if name == "" {
		writeStatus(w, http.StatusUnprocessableEntity, api.StatusReasonInvalid, "metadata.name: Required value: name is required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.objects[r.key(name)]; ok {
		writeStatus(w, http.StatusConflict, api.StatusReasonAlreadyExists, fmt.Sprintf("%s %q already exists", r.resource, name))
		return
	}
	f.uid++
	m["uid"] = fmt.Sprintf("uid-%d", f.uid)
	if r.ns != "" {
		m["namespace"] = r.ns
	}
	f.commit(r, name, client.EventAdded, obj)
	writeJSON(w, http.StatusCreated, obj)
}

func (f *fixture) update(w http.ResponseWriter, r route, body []byte) {
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		writeStatus(w, http.StatusBadRequest, api.StatusReasonBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.objects[r.key(r.name)]
	if !ok {
		writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("%s %q not found", r.resource, r.name))
		return
	}
	if rv, _ := meta(obj)["resourceVersion"].(string); rv != "" && rv != meta(old)["resourceVersion"] {
		writeStatus(w, http.StatusConflict, api.StatusReasonConflict,
			fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", r.resource, r.name))
		return
	}
	if r.sub == "status" { // only status changes through /status
		next := map[string]any{}
		for k, v := range old {
			next[k] = v
		}
		next["status"] = obj["status"]
		obj = next
	}
	meta(obj)["uid"] = meta(old)["uid"]
	f.commit(r, r.name, client.EventModified, obj)
	writeJSON(w, http.StatusOK, obj)
}

func (f *fixture) patch(w http.ResponseWriter, req *http.Request, r route, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.objects[r.key(r.name)]
	if !ok {
		writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("%s %q not found", r.resource, r.name))
		return
	}
	orig, _ := json.Marshal(old)
	var out []byte
	var err error
	switch req.Header.Get("Content-Type") {
	case client.MergePatchType:
		out, err = jsonpatch.MergePatch(orig, body)
	case client.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(body); err == nil {
			out, err = p.Apply(orig)
		}
	default:
		writeStatus(w, http.StatusUnsupportedMediaType, api.StatusReasonUnsupportedMediaType, "unsupported patch type")
		return
	}
	if err != nil {
		writeStatus(w, http.StatusUnprocessableEntity, api.StatusReasonInvalid, err.Error())
		return
	}
	var obj map[string]any
	_ = json.Unmarshal(out, &obj)
	if meta(obj)["resourceVersion"] != meta(old)["resourceVersion"] {
		writeStatus(w, http.StatusConflict, api.StatusReasonConflict, "the object has been modified")
		return
	}
	f.commit(r, r.name, client.EventModified, obj)
	writeJSON(w, http.StatusOK, obj)
}

func (f *fixture) delete(w http.ResponseWriter, r route) {
	f.mu.Lock()
	defer f.mu.Unlock()
	obj, ok := f.objects[r.key(r.name)]
	if !ok {
		writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("%s %q not found", r.resource, r.name))
		return
	}
	f.commit(r, r.name, client.EventDeleted, obj)
	writeJSON(w, http.StatusOK, api.Status{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Success", Code: 200})
}

// watch streams the events after resourceVersion as chunked NDJSON until the
// client goes away (or, with timeoutSeconds, after the backlog); a compacted start revision gets an ERROR 410 event.
func (f *fixture) watch(w http.ResponseWriter, req *http.Request, r route) {
	from, _ := strconv.ParseInt(req.URL.Query().Get("resourceVersion"), 10, 64)
	flusher := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	enc := json.NewEncoder(w)

	f.mu.Lock()
	if from < f.compacted {
		f.mu.Unlock()
		st, _ := json.Marshal(api.Status{
			TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Failure", Code: http.StatusGone,
			Reason: api.StatusReasonGone, Message: fmt.Sprintf("too old resource version: %d (%d)", from, f.compacted),
		})
		_ = enc.Encode(client.Event{Type: client.EventError, Object: st})
		flusher.Flush()
		return
	}
	if from == 0 {
		from = f.rv
	}
	f.mu.Unlock()
	for {
		f.mu.Lock()
		var batch []client.Event
		for _, ev := range f.events {
			if ev.rv > from && ev.coll == r.coll() && (r.ns == "" || ev.ns == r.ns) {
				batch = append(batch, ev.event)
			}
		}
		from = f.rv
		changed := f.changed
		f.mu.Unlock()
		for _, ev := range batch {
			if err := enc.Encode(ev); err != nil {
				return
			}
		}
		flusher.Flush()
		if req.URL.Query().Has("timeoutSeconds") { // end after the backlog
			return
		}
		select {
		case <-req.Context().Done():
			return
		case <-changed:
		}
	}
}
