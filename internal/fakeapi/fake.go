package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Finalizers the server adds for delete propagation.
const (
	FinalizerForeground = "foregroundDeletion"
	FinalizerOrphan     = "orphan"
	// FinalizerNamespace is the namespace controller's spec finalizer.
	FinalizerNamespace = "kubernetes"
)

// Resources is a resource table shaped like api.Resources() for tests: only
// the addressing fields are set.
func Resources() []*api.ResourceInfo {
	r := func(group, resource, kind string, namespaced bool) *api.ResourceInfo {
		return &api.ResourceInfo{Group: group, Version: "v1", Resource: resource, Kind: kind, ListKind: kind + "List", Namespaced: namespaced}
	}
	return []*api.ResourceInfo{
		r("", "namespaces", "Namespace", false),
		r("", "nodes", "Node", false),
		r("", "pods", "Pod", true),
		r("", "services", "Service", true),
		r("", "events", "Event", true),
		r("apps", "deployments", "Deployment", true),
		r("apps", "replicasets", "ReplicaSet", true),
		r("discovery.k8s.io", "endpointslices", "EndpointSlice", true),
		r("networking.k8s.io", "ipaddresses", "IPAddress", false),
	}
}

// Find returns the entry of resources with that group and resource.
func Find(resources []*api.ResourceInfo, group, resource string) *api.ResourceInfo {
	for _, r := range resources {
		if r.Group == group && r.Resource == resource {
			return r
		}
	}
	return nil
}

// Action is one write the server accepted or refused.
type Action struct {
	Verb        string // create, update, patch, delete
	Resource    string // group/resource ("" group for core: "/pods")
	Namespace   string
	Name        string
	Subresource string
	PatchType   string
	Policy      string // delete propagation policy as sent
	Err         error
}

func (a Action) String() string {
	s := fmt.Sprintf("%s %s %s/%s", a.Verb, a.Resource, a.Namespace, a.Name)
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	if a.Policy != "" {
		s += " " + a.Policy
	}
	if a.Err != nil {
		s += " ERR " + a.Err.Error()
	}
	return s
}

type event struct {
	rv    int64
	coll  string
	ns    string
	event client.Event
}

// Server is the fake. The zero value is not usable; call New.
type Server struct {
	// mu protects every field below.
	mu        sync.Mutex
	infos     map[string]*api.ResourceInfo // by group/resource
	objects   map[string]map[string]any    // coll|ns|name
	rv        int64
	uid       int
	generated int // suffix of the last generateName
	events    []event
	compacted int64
	changed   chan struct{} // closed and replaced on every change
	paused    bool
	epoch     int // bumped by Expire: open watches end
	actions   []Action
	history   []string // "TYPE group/resource ns/name", never compacted
	// Intercept, when set, is called before every write with the action;
	// a non-nil error is returned instead of performing it.
	intercept func(Action) error
}

// New returns an empty server serving resources.
func New(resources []*api.ResourceInfo) *Server {
	s := &Server{
		infos:   map[string]*api.ResourceInfo{},
		objects: map[string]map[string]any{},
		changed: make(chan struct{}),
	}
	for _, r := range resources {
		s.infos[coll(r)] = r
	}
	return s
}

func coll(info *api.ResourceInfo) string { return info.Group + "/" + info.Resource }

func key(info *api.ResourceInfo, ns, name string) string {
	return coll(info) + "|" + ns + "|" + name
}

func notFound(info *api.ResourceInfo, name string) error {
	return client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "%s %q not found", info.Resource, name)
}

func conflict(info *api.ResourceInfo, name, why string) error {
	return client.NewAPIError(http.StatusConflict, api.StatusReasonConflict,
		"Operation cannot be fulfilled on %s %q: %s", info.Resource, name, why)
}

func invalid(format string, args ...any) error {
	return client.NewAPIError(http.StatusUnprocessableEntity, api.StatusReasonInvalid, format, args...)
}

// SetIntercept installs f (nil removes it); see Server.intercept.
func (s *Server) SetIntercept(f func(Action) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = f
}

// Actions returns the writes so far.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.actions)
}

// History returns every change so far as "TYPE group/resource ns/name"
// (TYPE is ADDED, MODIFIED or DELETED), oldest first.
func (s *Server) History() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history)
}

// record runs the interceptor and records a. s.mu must be held.
func (s *Server) record(a Action) error {
	if s.intercept != nil {
		a.Err = s.intercept(a)
	}
	s.actions = append(s.actions, a)
	return a.Err
}

func (s *Server) info(info *api.ResourceInfo) (*api.ResourceInfo, error) {
	if info == nil {
		return nil, fmt.Errorf("fakeapi: nil resource")
	}
	known, ok := s.infos[coll(info)]
	if !ok {
		return nil, client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "the server could not find the requested resource %s", coll(info))
	}
	return known, nil
}

func metaOf(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func stringList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func toAny(list []string) any {
	if len(list) == 0 {
		return nil
	}
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func setOrDelete(m map[string]any, k string, v any) {
	if v == nil {
		delete(m, k)
		return
	}
	m[k] = v
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeInto(obj map[string]any, into any) error {
	if into == nil {
		return nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func deepCopy(obj map[string]any) map[string]any {
	m, _ := toMap(obj)
	return m
}

// commit stores obj (or removes it for DELETED) under a new revision and
// records the watch event. s.mu must be held.
func (s *Server) commit(info *api.ResourceInfo, typ string, obj map[string]any) {
	s.rv++
	m := metaOf(obj)
	m["resourceVersion"] = strconv.FormatInt(s.rv, 10)
	k := key(info, str(m, "namespace"), str(m, "name"))
	if typ == client.EventDeleted {
		delete(s.objects, k)
	} else {
		s.objects[k] = obj
	}
	raw, _ := json.Marshal(obj)
	s.history = append(s.history, fmt.Sprintf("%s %s %s/%s", typ, coll(info), str(m, "namespace"), str(m, "name")))
	s.events = append(s.events, event{rv: s.rv, coll: coll(info), ns: str(m, "namespace"), event: client.Event{Type: typ, Object: raw}})
	s.notify()
}

// specChanged reports a change outside metadata and status, which bumps
// metadata.generation.
func specChanged(old, next map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		out := maps.Clone(m)
		delete(out, "metadata")
		delete(out, "status")
		delete(out, "apiVersion")
		delete(out, "kind")
		return out
	}
	return !reflect.DeepEqual(strip(old), strip(next))
}

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// namespaceUsable checks the namespace of a new object. s.mu must be held.
func (s *Server) namespaceUsable(ns string) error {
	nsInfo, ok := s.infos["/namespaces"]
	if !ok {
		return nil
	}
	obj, ok := s.objects[key(nsInfo, "", ns)]
	if !ok {
		return client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "namespaces %q not found", ns)
	}
	if metaOf(obj)["deletionTimestamp"] != nil {
		return client.NewAPIError(http.StatusForbidden, api.StatusReasonForbidden,
			"unable to create new content in namespace %s because it is being terminated", ns)
	}
	return nil
}

// Create stores obj (an api.Object or any JSON-encodable object with
// metadata.name or metadata.generateName) and returns its uid.
func (s *Server) Create(ctx context.Context, info *api.ResourceInfo, ns string, obj any) (string, error) {
	m, err := s.create(info, ns, obj)
	if err != nil {
		return "", err
	}
	return str(metaOf(m), "uid"), nil
}

// create stores obj and returns a copy of what it stored.
func (s *Server) create(info *api.ResourceInfo, ns string, obj any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.info(info)
	if err != nil {
		return nil, err
	}
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	meta := metaOf(m)
	name := str(meta, "name")
	if name == "" && str(meta, "generateName") != "" {
		s.generated++
		name = fmt.Sprintf("%s%05d", str(meta, "generateName"), s.generated)
		meta["name"] = name
	}
	if !info.Namespaced {
		ns = ""
	}
	if err := s.record(Action{Verb: "create", Resource: coll(info), Namespace: ns, Name: name}); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, invalid("metadata.name: Required value")
	}
	if info.Namespaced {
		if ns == "" {
			return nil, invalid("metadata.namespace: Required value")
		}
		if err := s.namespaceUsable(ns); err != nil {
			return nil, err
		}
		meta["namespace"] = ns
	}
	if _, ok := s.objects[key(info, ns, name)]; ok {
		return nil, client.NewAPIError(http.StatusConflict, api.StatusReasonAlreadyExists, "%s %q already exists", info.Resource, name)
	}
	s.uid++
	meta["uid"] = fmt.Sprintf("uid-%d", s.uid)
	meta["generation"] = 1
	meta["creationTimestamp"] = api.Now().Format(time.RFC3339)
	delete(meta, "deletionTimestamp")
	m["apiVersion"], m["kind"] = info.GroupVersion(), info.Kind
	if info.Group == "" && info.Resource == "namespaces" {
		m["spec"] = map[string]any{"finalizers": []any{FinalizerNamespace}}
		m["status"] = map[string]any{"phase": "Active"}
	}
	s.commit(info, client.EventAdded, m)
	return deepCopy(m), nil
}

// Object returns a copy of a stored object, nil if absent.
func (s *Server) Object(info *api.ResourceInfo, ns, name string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key(info, ns, name)]
	if !ok {
		return nil
	}
	return deepCopy(obj)
}

// Meta returns the decoded metadata of a stored object and whether it exists.
func (s *Server) Meta(info *api.ResourceInfo, ns, name string) (api.ObjectMeta, bool) {
	obj := s.Object(info, ns, name)
	var meta api.ObjectMeta
	if obj == nil {
		return meta, false
	}
	_ = decodeInto(metaOf(obj), &meta)
	return meta, true
}

// Len is the number of stored objects.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.objects)
}

// Get implements the client call.
func (s *Server) Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.info(info)
	if err != nil {
		return err
	}
	obj, ok := s.objects[key(info, ns, name)]
	if !ok {
		return notFound(info, name)
	}
	return decodeInto(obj, into)
}

// List implements the client call: into must be a *client.RawList (or any
// type that decodes a list). Limit and Continue page the result.
func (s *Server) List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.info(info)
	if err != nil {
		return err
	}
	prefix := coll(info) + "|"
	if ns != "" {
		prefix = key(info, ns, "")
	}
	var keys []string
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	start := 0
	if opts.Continue != "" {
		start, _ = strconv.Atoi(opts.Continue)
	}
	end := len(keys)
	list := client.RawList{APIVersion: info.GroupVersion(), Kind: info.ListKind,
		Metadata: api.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10)}}
	if opts.Limit > 0 && start+int(opts.Limit) < end {
		end = start + int(opts.Limit)
		list.Metadata.Continue = strconv.Itoa(end)
	}
	list.Items = []json.RawMessage{}
	for _, k := range keys[min(start, len(keys)):end] {
		raw, _ := json.Marshal(s.objects[k])
		list.Items = append(list.Items, raw)
	}
	return decodeInto(mustMap(list), into)
}

func mustMap(v any) map[string]any {
	m, err := toMap(v)
	if err != nil {
		panic(err) // only for values built here
	}
	return m
}

// Delete implements the client call with the server's finalizer rules.
func (s *Server) Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.info(info)
	if err != nil {
		return err
	}
	if err := s.record(Action{Verb: "delete", Resource: coll(info), Namespace: ns, Name: name, Policy: opts.PropagationPolicy}); err != nil {
		return err
	}
	stored, ok := s.objects[key(info, ns, name)]
	if !ok {
		return notFound(info, name)
	}
	obj := deepCopy(stored)
	meta := metaOf(obj)
	if p := opts.Preconditions; p != nil {
		if p.UID != "" && p.UID != str(meta, "uid") {
			return conflict(info, name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", p.UID, str(meta, "uid")))
		}
		if p.ResourceVersion != "" && p.ResourceVersion != str(meta, "resourceVersion") {
			return conflict(info, name, "Precondition failed: resourceVersion")
		}
	}
	if meta["deletionTimestamp"] != nil {
		return nil // already being deleted
	}
	finalizers := stringList(meta["finalizers"])
	switch opts.PropagationPolicy {
	case client.DeletePropagationForeground:
		finalizers = addString(removeString(finalizers, FinalizerOrphan), FinalizerForeground)
	case client.DeletePropagationOrphan:
		finalizers = addString(removeString(finalizers, FinalizerForeground), FinalizerOrphan)
	case "", client.DeletePropagationBackground:
		finalizers = removeString(removeString(finalizers, FinalizerOrphan), FinalizerForeground)
	default:
		return client.NewAPIError(http.StatusBadRequest, api.StatusReasonBadRequest, "unknown propagationPolicy %q", opts.PropagationPolicy)
	}
	setOrDelete(meta, "finalizers", toAny(finalizers))
	if len(finalizers) == 0 && len(specFinalizers(info, obj)) == 0 {
		s.commit(info, client.EventDeleted, obj)
		return nil
	}
	meta["deletionTimestamp"] = api.Now().Format(time.RFC3339)
	if isNamespace(info) {
		status, _ := obj["status"].(map[string]any)
		if status == nil {
			status = map[string]any{}
			obj["status"] = status
		}
		status["phase"] = "Terminating"
	}
	s.commit(info, client.EventModified, obj)
	return nil
}

func isNamespace(info *api.ResourceInfo) bool {
	return info.Group == "" && info.Resource == "namespaces"
}

func specFinalizers(info *api.ResourceInfo, obj map[string]any) []string {
	if !isNamespace(info) {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	return stringList(spec["finalizers"])
}

// keepSpecFinalizers keeps a namespace's spec.finalizers, which only the
// finalize subresource changes.
func keepSpecFinalizers(info *api.ResourceInfo, old, next map[string]any) {
	if !isNamespace(info) {
		return
	}
	spec, _ := next["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		next["spec"] = spec
	}
	setOrDelete(spec, "finalizers", toAny(specFinalizers(info, old)))
}

func addString(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func removeString(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == s })
}

// write stores next in place of old after the server's checks: the uid and
// deletionTimestamp cannot change, the resourceVersion must be current, no
// finalizer may be added to a marked object, and a marked object without
// finalizers is removed. s.mu must be held.
func (s *Server) write(info *api.ResourceInfo, old, next map[string]any) error {
	return s.writeGen(info, old, next, true)
}

// writeKeepGeneration is write without the generation bump.
func (s *Server) writeKeepGeneration(info *api.ResourceInfo, old, next map[string]any) error {
	return s.writeGen(info, old, next, false)
}

func (s *Server) writeGen(info *api.ResourceInfo, old, next map[string]any, bump bool) error {
	om, nm := metaOf(old), metaOf(next)
	name := str(om, "name")
	if rv := str(nm, "resourceVersion"); rv != "" && rv != str(om, "resourceVersion") {
		return conflict(info, name, "the object has been modified; please apply your changes to the latest version and try again")
	}
	if uid := str(nm, "uid"); uid != "" && uid != str(om, "uid") {
		return invalid("metadata.uid: Invalid value: %q: field is immutable", uid)
	}
	if str(nm, "name") != name || str(nm, "namespace") != str(om, "namespace") {
		return client.NewAPIError(http.StatusBadRequest, api.StatusReasonBadRequest, "the name or namespace of the object does not match the request")
	}
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "generation"} {
		setOrDelete(nm, k, om[k])
	}
	if bump && specChanged(old, next) {
		var g int64
		switch v := om["generation"].(type) {
		case float64:
			g = int64(v)
		case int:
			g = int64(v)
		}
		nm["generation"] = g + 1
	}
	if om["deletionTimestamp"] != nil {
		oldF := stringList(om["finalizers"])
		for _, f := range stringList(nm["finalizers"]) {
			if !slices.Contains(oldF, f) {
				return client.NewAPIError(http.StatusForbidden, api.StatusReasonForbidden,
					"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers [%s]", f)
			}
		}
		if len(stringList(nm["finalizers"])) == 0 && len(specFinalizers(info, next)) == 0 {
			s.commit(info, client.EventDeleted, next)
			return nil
		}
	}
	s.commit(info, client.EventModified, next)
	return nil
}

// Update implements the client call: subresource "" replaces all but
// status, "status" only status, "finalize" (namespaces) only
// spec.finalizers. It decodes the stored object back into obj.
func (s *Server) Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.info(info)
	if err != nil {
		return err
	}
	in, err := toMap(obj)
	if err != nil {
		return err
	}
	name := str(metaOf(in), "name")
	if ns == "" {
		ns = str(metaOf(in), "namespace")
	}
	sub := strings.Join(subresource, "/")
	if err := s.record(Action{Verb: "update", Resource: coll(info), Namespace: ns, Name: name, Subresource: sub}); err != nil {
		return err
	}
	stored, ok := s.objects[key(info, ns, name)]
	if !ok {
		return notFound(info, name)
	}
	old := deepCopy(stored)
	var next map[string]any
	switch {
	case sub == "":
		next = in
		setOrDelete(next, "status", old["status"])
		keepSpecFinalizers(info, old, next)
	case sub == "status":
		next = deepCopy(old)
		metaOf(next)["resourceVersion"] = metaOf(in)["resourceVersion"]
		setOrDelete(next, "status", in["status"])
	case sub == "finalize" && isNamespace(info):
		next = deepCopy(old)
		metaOf(next)["resourceVersion"] = metaOf(in)["resourceVersion"]
		spec, _ := in["spec"].(map[string]any)
		nspec, _ := next["spec"].(map[string]any)
		if nspec == nil {
			nspec = map[string]any{}
			next["spec"] = nspec
		}
		setOrDelete(nspec, "finalizers", toAny(stringList(spec["finalizers"])))
	default:
		return notFound(info, name+"/"+sub)
	}
	metaOf(next)["namespace"] = metaOf(old)["namespace"]
	if !info.Namespaced {
		delete(metaOf(next), "namespace")
	}
	if err := s.write(info, old, next); err != nil {
		return err
	}
	return decodeInto(next, obj)
}

// Patch implements the client call for merge and JSON patches of the main
// resource.
func (s *Server) Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.info(info)
	if err != nil {
		return err
	}
	sub := strings.Join(subresource, "/")
	if err := s.record(Action{Verb: "patch", Resource: coll(info), Namespace: ns, Name: name, Subresource: sub, PatchType: patchType}); err != nil {
		return err
	}
	if sub != "" {
		return notFound(info, name+"/"+sub)
	}
	stored, ok := s.objects[key(info, ns, name)]
	if !ok {
		return notFound(info, name)
	}
	orig, _ := json.Marshal(stored)
	var out []byte
	switch patchType {
	case client.MergePatchType:
		out, err = jsonpatch.MergePatch(orig, data)
		if err != nil {
			return client.NewAPIError(http.StatusBadRequest, api.StatusReasonBadRequest, "invalid merge patch: %v", err)
		}
	case client.JSONPatchType:
		p, derr := jsonpatch.DecodePatch(data)
		if derr != nil {
			return client.NewAPIError(http.StatusBadRequest, api.StatusReasonBadRequest, "invalid JSON patch: %v", derr)
		}
		out, err = p.Apply(orig)
		if err != nil {
			return invalid("the server rejected our request due to an error in our request: %v", err)
		}
	default:
		return client.NewAPIError(http.StatusUnsupportedMediaType, api.StatusReasonUnsupportedMediaType, "patch type %q not supported by the fake", patchType)
	}
	var next map[string]any
	if err := json.Unmarshal(out, &next); err != nil {
		return invalid("patched object: %v", err)
	}
	old := deepCopy(stored)
	setOrDelete(next, "status", old["status"])
	keepSpecFinalizers(info, old, next)
	if err := s.write(info, old, next); err != nil {
		return err
	}
	return decodeInto(next, into)
}

// Watch implements the client call: events after opts.ResourceVersion
// ("" or "0": from now) for the resource in ns ("" all). A start revision
// older than the last Expire gets an ERROR 410 event, then the stream ends.
func (s *Server) Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions) (*client.Watcher, error) {
	s.mu.Lock()
	info, err := s.info(info)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	from, _ := strconv.ParseInt(opts.ResourceVersion, 10, 64)
	if from == 0 {
		from = s.rv
	}
	epoch := s.epoch
	c := coll(info)
	gone := from < s.compacted
	compacted := s.compacted
	s.mu.Unlock()

	return client.NewWatcher(ctx, func(ctx context.Context, send func(client.Event) bool) error {
		if gone {
			st, _ := json.Marshal(api.Status{
				TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Failure",
				Code: http.StatusGone, Reason: api.StatusReasonGone,
				Message: fmt.Sprintf("too old resource version: %d (%d)", from, compacted),
			})
			send(client.Event{Type: client.EventError, Object: st})
			return nil
		}
		for {
			s.mu.Lock()
			if s.epoch != epoch {
				s.mu.Unlock()
				return nil // the server closed the stream
			}
			var batch []client.Event
			if !s.paused {
				for _, ev := range s.events {
					if ev.rv > from && ev.coll == c && (ns == "" || ev.ns == ns) {
						batch = append(batch, ev.event)
					}
				}
				from = s.rv
			}
			changed := s.changed
			s.mu.Unlock()
			for _, ev := range batch {
				if !send(ev) {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			}
		}
	}), nil
}

// PauseWatches holds back watch events until Expire.
func (s *Server) PauseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = true
}

// Expire compacts the event history to the current revision and ends every
// open watch, as a server restart after compaction would: watchers that
// resume from an older revision get 410 Gone and must relist.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = s.rv
	s.events = nil
	s.paused = false
	s.epoch++
	s.notify()
}
