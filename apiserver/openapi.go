package apiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/patch"
)

// OpenAPI documents of the served subset, generated from the api Go types
// by reflection: /openapi/v2 (Swagger 2.0, JSON) and /openapi/v3 (an index)
// with /openapi/v3/api/v1, /openapi/v3/apis/{group}/{version} (OpenAPI
// 3.0). kubectl reads them for `explain`, to decide that the server
// validates fields itself (fieldValidation), and for the merge keys of a
// client-side `apply`. Definitions carry Kubernetes' names
// (io.k8s.api.core.v1.Service), x-kubernetes-group-version-kind and the
// strategic-merge-patch keys of apiserver/patch's table. The documents are
// built once, on first use, and served from memory.

// Kubernetes' definition-name prefixes.
const (
	defMeta   = "io.k8s.apimachinery.pkg.apis.meta.v1."
	defIntStr = "io.k8s.apimachinery.pkg.util.intstr."
	defQty    = "io.k8s.apimachinery.pkg.api.resource."
	defCore   = "io.k8s.api.core.v1."
)

// metaTypes are the api types that Kubernetes defines in apimachinery.
var metaTypeNames = map[string]string{
	"ObjectMeta": defMeta + "ObjectMeta", "ListMeta": defMeta + "ListMeta",
	"OwnerReference": defMeta + "OwnerReference", "LabelSelector": defMeta + "LabelSelector",
	"LabelSelectorRequirement": defMeta + "LabelSelectorRequirement", "Condition": defMeta + "Condition",
	"Time": defMeta + "Time", "MicroTime": defMeta + "MicroTime", "ManagedField": defMeta + "ManagedFieldsEntry",
	"Status": defMeta + "Status", "StatusDetails": defMeta + "StatusDetails", "StatusCause": defMeta + "StatusCause",
	"DeleteOptions": defMeta + "DeleteOptions", "Preconditions": defMeta + "Preconditions",
	"IntOrString": defIntStr + "IntOrString", "Quantity": defQty + "Quantity",
	"PodTemplateSpec": defCore + "PodTemplateSpec",
	"Scale":           "io.k8s.api.autoscaling.v1.Scale", "ScaleSpec": "io.k8s.api.autoscaling.v1.ScaleSpec",
	"ScaleStatus": "io.k8s.api.autoscaling.v1.ScaleStatus",
}

// patchStrategy is one list's strategic-merge-patch metadata in a
// definition: x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key.
type patchStrategy struct{ strategy, key string }

// retainKeysFields are the fields Kubernetes tags "merge,retainKeys" rather
// than "merge" (keyed by Go type and JSON field). apiserver/patch's table
// does not record it: the server honours a patch's $retainKeys directive
// wherever it appears.
var retainKeysFields = map[string]bool{"PodSpec.volumes": true}

// patchStrategiesOf derives, from apiserver/patch's merge table (keyed by
// schema path), the strategy of every list field the resources reach, keyed
// by the Go type declaring the field and its JSON name ("Container.ports"),
// as a definition is per type and not per path. A field that two paths give
// different strategies cannot be described by one definition: an error.
func patchStrategiesOf(resources []*api.ResourceInfo) (map[string]patchStrategy, error) {
	table := patch.ListStrategies()
	out := map[string]patchStrategy{}
	var walkErr error
	onStack := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if t.Kind() != reflect.Struct || t == typeTime || t == typeMicro || t == typeIntOrStr || onStack[t] {
			return
		}
		onStack[t] = true
		defer delete(onStack, t)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				walk(ft, path) // inlined: its fields stand at this path
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			if ls, ok := table[p]; ok {
				key := t.Name() + "." + name
				ps := patchStrategy{strategy: "merge", key: ls.MergeKey}
				if retainKeysFields[key] {
					ps.strategy = "merge,retainKeys"
				}
				if prev, seen := out[key]; seen && prev != ps && walkErr == nil {
					walkErr = fmt.Errorf("apiserver: openapi: %s has merge key %q at one path and %q at %s", key, prev.key, ps.key, p)
				}
				out[key] = ps
			}
			for ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map || ft.Kind() == reflect.Pointer {
				if ft.Kind() != reflect.Pointer {
					p += "[]"
				}
				ft = ft.Elem()
			}
			walk(ft, p)
		}
	}
	for _, info := range resources {
		walk(reflect.TypeOf(servedNew(info)).Elem(), "")
	}
	return out, walkErr
}

// Go types with a fixed schema instead of their reflected shape.
var (
	typeTime     = reflect.TypeOf(api.Time{})
	typeMicro    = reflect.TypeOf(api.MicroTime{})
	typeIntOrStr = reflect.TypeOf(api.IntOrString{})
	typeQuantity = reflect.TypeOf(api.Quantity(""))
	typeRawJSON  = reflect.TypeOf(json.RawMessage(nil))
)

// schemaGen builds the definitions reachable from a set of Go types.
type schemaGen struct {
	refPrefix string                    // "#/definitions/" or "#/components/schemas/"
	names     map[reflect.Type]string   // the definition name of every named struct
	gvks      map[reflect.Type][]any    // x-kubernetes-group-version-kind of top-level types
	patches   map[string]patchStrategy  // list fields' merge strategies (patchStrategiesOf)
	defs      map[string]map[string]any // the definitions built so far
}

// defNames assigns every struct type reachable from the resources its
// Kubernetes definition name: apimachinery's for the meta types, else the
// API group of the first resource (in table order, core first) that reaches
// it — io.k8s.api.apps.v1.DeploymentSpec, io.k8s.api.core.v1.PodSpec.
func defNames(resources []*api.ResourceInfo) map[reflect.Type]string {
	names := make(map[reflect.Type]string)
	var walk func(t reflect.Type, pkg string)
	walk = func(t reflect.Type, pkg string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct && t != typeQuantity {
			return
		}
		if _, seen := names[t]; seen {
			return
		}
		if n, ok := metaTypeNames[t.Name()]; ok {
			names[t] = n
		} else {
			names[t] = pkg + t.Name()
		}
		if t.Kind() != reflect.Struct || t == typeTime || t == typeMicro || t == typeIntOrStr {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			walk(t.Field(i).Type, pkg)
		}
	}
	for _, info := range resources {
		pkg := "io.k8s.api." + k8sGroupPackage(info.Group) + "." + info.Version + "."
		walk(reflect.TypeOf(servedNew(info)), pkg)
		if info.NewList != nil {
			walk(reflect.TypeOf(servedNewList(info)), pkg)
		}
	}
	for _, t := range []reflect.Type{reflect.TypeOf(api.Scale{}), reflect.TypeOf(api.DeleteOptions{}), reflect.TypeOf(api.Status{})} {
		walk(t, defCore)
	}
	return names
}

// k8sGroupPackage is the Go package name Kubernetes keeps a group's types
// in: "" is core, discovery.k8s.io is discovery.
func k8sGroupPackage(group string) string {
	if group == "" {
		return "core"
	}
	return strings.TrimSuffix(group, ".k8s.io")
}

func gvkExt(group, version, kind string) map[string]any {
	return map[string]any{"group": group, "version": version, "kind": kind}
}

func (g *schemaGen) ref(name string) map[string]any {
	return map[string]any{"$ref": g.refPrefix + name}
}

// schemaOf is the schema of a field of type t: a $ref for named structs
// (defining them on the way), inline schemas for everything else.
func (g *schemaGen) schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if name, ok := g.names[t]; ok {
		g.define(t, name)
		return g.ref(name)
	}
	if t == typeRawJSON {
		return map[string]any{"type": "object"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint16, reflect.Uint8:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": g.schemaOf(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return map[string]any{"type": "object"}
		}
		return map[string]any{"type": "object", "additionalProperties": g.schemaOf(t.Elem())}
	case reflect.Interface:
		return map[string]any{"type": "object"}
	case reflect.Struct:
		s := map[string]any{"type": "object"}
		g.fillStruct(s, t)
		return s
	}
	return map[string]any{}
}

// define adds the definition of a named type once.
func (g *schemaGen) define(t reflect.Type, name string) {
	if _, done := g.defs[name]; done {
		return
	}
	var s map[string]any
	switch t {
	case typeTime:
		s = map[string]any{"type": "string", "format": "date-time",
			"description": "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON."}
	case typeMicro:
		s = map[string]any{"type": "string", "format": "date-time",
			"description": "MicroTime is version of Time with microsecond level precision."}
	case typeIntOrStr:
		s = map[string]any{"type": "string", "format": "int-or-string",
			"description": "IntOrString is a type that can hold an int32 or a string."}
	case typeQuantity:
		s = map[string]any{"type": "string",
			"description": "Quantity is a fixed-point representation of a number (\"100m\", \"1Gi\")."}
	default:
		s = map[string]any{"type": "object"}
	}
	g.defs[name] = s // before the fields: a recursive type refers to itself
	if gvk, ok := g.gvks[t]; ok {
		s["x-kubernetes-group-version-kind"] = gvk
	}
	if t.Kind() == reflect.Struct && s["format"] == nil && t != typeQuantity {
		g.fillStruct(s, t)
	}
}

// fillStruct sets a struct's properties and required fields.
func (g *schemaGen) fillStruct(s map[string]any, t reflect.Type) {
	props := map[string]any{}
	var required []string
	g.addFields(props, &required, t)
	if len(props) > 0 {
		s["properties"] = props
	}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
}

func (g *schemaGen) addFields(props map[string]any, required *[]string, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.addFields(props, required, ft)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		fs := g.schemaOf(f.Type)
		if ps, ok := g.patches[t.Name()+"."+name]; ok {
			if _, isRef := fs["$ref"]; isRef {
				fs = map[string]any{"allOf": []any{fs}}
			}
			fs["x-kubernetes-patch-strategy"] = ps.strategy
			if ps.key != "" {
				fs["x-kubernetes-patch-merge-key"] = ps.key
			}
		}
		props[name] = fs
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") ||
			f.Type.Kind() == reflect.Pointer || name == "apiVersion" || name == "kind"
		if !optional {
			*required = append(*required, name)
		}
	}
}

// openAPIDocs are the generated documents, built once.
type openAPIDocs struct {
	s    *Server
	once sync.Once
	err  error
	v2   []byte
	v2pb []byte            // v2 as gnostic protobuf (openapi_proto.go)
	v3   map[string][]byte // "api/v1", "apis/apps/v1"
	hash map[string]string
	idx  []byte
}

// openAPIRoutes mounts the OpenAPI endpoints on an authenticated router.
func (s *Server) openAPIRoutes(r chi.Router) {
	d := &openAPIDocs{s: s}
	r.Get("/openapi/v2", d.serveV2)
	r.Get("/openapi/v3", d.serveV3Index)
	r.Get("/openapi/v3/*", d.serveV3)
}

func (d *openAPIDocs) build() error {
	d.once.Do(func() {
		d.v2, d.v3, d.err = d.s.openAPIDocuments()
		if d.err != nil {
			return
		}
		if d.v2pb, d.err = openAPIV2Protobuf(d.v2); d.err != nil {
			return
		}
		d.hash = make(map[string]string, len(d.v3))
		paths := map[string]any{}
		for k, doc := range d.v3 {
			d.hash[k] = fmt.Sprintf("%X", sha512.Sum512(doc))
			paths[k] = map[string]string{"serverRelativeURL": "/openapi/v3/" + k + "?hash=" + d.hash[k]}
		}
		d.idx, d.err = json.Marshal(map[string]any{"paths": paths})
	})
	return d.err
}

// acceptsJSON reports whether an Accept header admits JSON (an absent one
// does); kubectl asks /openapi/v2 for protobuf only, and a 406 sends it to
// its fallbacks (OpenAPI v3, the types compiled into it).
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.TrimSpace(mt) {
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

func notAcceptable() *StatusError {
	return newStatusError(http.StatusNotAcceptable, api.StatusReasonNotAcceptable,
		"only the following media types are accepted: application/json", nil)
}

// The media types of the protobuf v2 document: client-go asks for the
// first; kube-openapi answers with the second (the first is no valid MIME
// type for Go's mime package) and accepts it and vnd.kubernetes.protobuf.
const (
	mediaOpenAPIV2Protobuf      = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	mediaOpenAPIV2ProtobufReply = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// serveV2 answers JSON, or protobuf to a client that asks for it first
// (client-go's OpenAPISchema, kubectl's validation and explain up to 1.26).
func (d *openAPIDocs) serveV2(w http.ResponseWriter, r *http.Request) {
	accept := r.Header.Get("Accept")
	first, _, _ := strings.Cut(accept, ",")
	first, _, _ = strings.Cut(first, ";")
	wantPB := false
	switch strings.TrimSpace(first) {
	case mediaOpenAPIV2Protobuf, mediaOpenAPIV2ProtobufReply, "application/vnd.kubernetes.protobuf":
		wantPB = true
	}
	if !wantPB && !acceptsJSON(accept) {
		writeError(w, notAcceptable())
		return
	}
	if err := d.build(); err != nil {
		writeErr(w, err)
		return
	}
	if wantPB {
		w.Header().Set("Content-Type", mediaOpenAPIV2ProtobufReply)
		w.Header().Set("Content-Length", strconv.Itoa(len(d.v2pb)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(d.v2pb)
		return
	}
	writeRaw(w, http.StatusOK, d.v2)
}

func (d *openAPIDocs) serveV3Index(w http.ResponseWriter, r *http.Request) {
	if !acceptsJSON(r.Header.Get("Accept")) {
		writeError(w, notAcceptable())
		return
	}
	if err := d.build(); err != nil {
		writeErr(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, private")
	writeRaw(w, http.StatusOK, d.idx)
}

// serveV3 serves one group-version document. Its URL in the index carries
// the document's hash: a request with the current hash may be cached
// forever; one with another hash is redirected to the current one.
func (d *openAPIDocs) serveV3(w http.ResponseWriter, r *http.Request) {
	if !acceptsJSON(r.Header.Get("Accept")) {
		writeError(w, notAcceptable())
		return
	}
	if err := d.build(); err != nil {
		writeErr(w, err)
		return
	}
	key := strings.Trim(chi.URLParam(r, "*"), "/")
	doc, ok := d.v3[key]
	if !ok {
		writeError(w, pathNotFound())
		return
	}
	hash := d.hash[key]
	etag := `"` + hash + `"`
	switch h := r.URL.Query().Get("hash"); {
	case h == "":
		w.Header().Set("Cache-Control", "no-cache, private")
	case h == hash:
		w.Header().Set("Cache-Control", "public, immutable, max-age=31536000")
	default:
		http.Redirect(w, r, "/openapi/v3/"+key+"?hash="+hash, http.StatusMovedPermanently)
		return
	}
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeRaw(w, http.StatusOK, doc)
}

// openAPIDocuments generates the v2 document and one v3 document per
// served group-version.
func (s *Server) openAPIDocuments() (v2 []byte, v3 map[string][]byte, err error) {
	// Core first: a type shared by several groups (PodSpec) is core's.
	keys := sortedKeys(s.groups)
	sort.SliceStable(keys, func(i, j int) bool { return s.groups[keys[i]].group == "" && s.groups[keys[j]].group != "" })
	var all []*api.ResourceInfo
	for _, key := range keys {
		for _, r := range s.groups[key].order {
			all = append(all, r.info)
		}
	}
	names := defNames(all)
	patches, err := patchStrategiesOf(all)
	if err != nil {
		return nil, nil, err
	}
	gvks := map[reflect.Type][]any{
		reflect.TypeOf(api.Scale{}): {gvkExt("autoscaling", "v1", "Scale")},
	}
	for _, info := range all {
		gvks[reflect.TypeOf(servedNew(info)).Elem()] = []any{gvkExt(info.Group, info.Version, info.Kind)}
		if info.NewList != nil {
			gvks[reflect.TypeOf(servedNewList(info)).Elem()] = []any{gvkExt(info.Group, info.Version, info.ListKind)}
		}
	}

	// v2: every group-version in one document.
	g2 := &schemaGen{refPrefix: "#/definitions/", names: names, gvks: gvks, patches: patches, defs: map[string]map[string]any{}}
	paths2 := map[string]any{}
	for _, key := range sortedKeys(s.groups) {
		for _, r := range s.groups[key].order {
			addResourcePaths(paths2, g2, r, false)
		}
	}
	v2, err = json.Marshal(map[string]any{
		"swagger":     "2.0",
		"info":        map[string]string{"title": "Kubernetes", "version": s.version.GitVersion},
		"paths":       paths2,
		"definitions": g2.defs,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("apiserver: openapi v2: %w", err)
	}

	v3 = make(map[string][]byte)
	for _, key := range sortedKeys(s.groups) {
		gv := s.groups[key]
		g3 := &schemaGen{refPrefix: "#/components/schemas/", names: names, gvks: gvks, patches: patches, defs: map[string]map[string]any{}}
		paths3 := map[string]any{}
		for _, r := range gv.order {
			addResourcePaths(paths3, g3, r, true)
		}
		doc, err := json.Marshal(map[string]any{
			"openapi":    "3.0.0",
			"info":       map[string]string{"title": "Kubernetes", "version": s.version.GitVersion},
			"paths":      paths3,
			"components": map[string]any{"schemas": g3.defs},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("apiserver: openapi v3 %s: %w", key, err)
		}
		prefix := "apis/" + key
		if gv.group == "" {
			prefix = "api/" + gv.version
		}
		v3[prefix] = doc
	}
	return v2, v3, nil
}

// param is one operation parameter.
type param struct {
	name, in, typ string
	required      bool
}

var (
	pathName      = param{"name", "path", "string", true}
	pathNamespace = param{"namespace", "path", "string", true}
	listParams    = []param{
		{"allowWatchBookmarks", "query", "boolean", false}, {"continue", "query", "string", false},
		{"fieldSelector", "query", "string", false}, {"labelSelector", "query", "string", false},
		{"limit", "query", "integer", false}, {"resourceVersion", "query", "string", false},
		{"timeoutSeconds", "query", "integer", false}, {"watch", "query", "boolean", false},
	}
	writeParams = []param{
		{"dryRun", "query", "string", false}, {"fieldManager", "query", "string", false},
		{"fieldValidation", "query", "string", false},
	}
	deleteParams = []param{
		{"dryRun", "query", "string", false}, {"gracePeriodSeconds", "query", "integer", false},
		{"propagationPolicy", "query", "string", false},
	}
	patchTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}
)

// operation builds one path operation, v2 or v3 shaped.
type operation struct {
	id, action string
	group      string // of the body's kind
	version    string
	kind       string
	params     []param
	body       map[string]any // request body schema; nil for none
	bodyTypes  []string       // request media types
	resp       map[string]any // 200 response schema
}

func (o operation) build(v3 bool) map[string]any {
	op := map[string]any{
		"operationId":                     o.id,
		"x-kubernetes-action":             o.action,
		"x-kubernetes-group-version-kind": gvkExt(o.group, o.version, o.kind),
	}
	var params []any
	for _, p := range o.params {
		m := map[string]any{"name": p.name, "in": p.in, "required": p.required, "uniqueItems": true}
		if v3 {
			delete(m, "uniqueItems")
			m["schema"] = map[string]any{"type": p.typ}
		} else {
			m["type"] = p.typ
		}
		params = append(params, m)
	}
	if o.body != nil && !v3 {
		params = append(params, map[string]any{"name": "body", "in": "body", "required": true, "schema": o.body})
		op["consumes"] = o.bodyTypes
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if v3 {
		if o.body != nil {
			content := map[string]any{}
			for _, t := range o.bodyTypes {
				content[t] = map[string]any{"schema": o.body}
			}
			op["requestBody"] = map[string]any{"content": content, "required": true}
		}
		content := map[string]any{}
		for _, t := range []string{"application/json", "application/yaml"} {
			content[t] = map[string]any{"schema": o.resp}
		}
		op["responses"] = map[string]any{"200": map[string]any{"description": "OK", "content": content}}
	} else {
		op["produces"] = []string{"application/json", "application/yaml"}
		op["responses"] = map[string]any{"200": map[string]any{"description": "OK", "schema": o.resp}}
	}
	return op
}

// addResourcePaths adds the paths of one resource and its status and scale
// subresources.
func addResourcePaths(paths map[string]any, g *schemaGen, r *resource, v3 bool) {
	info := r.info
	objT := reflect.TypeOf(servedNew(info))
	obj := g.schemaOf(objT)
	list := map[string]any{"type": "object"}
	if info.NewList != nil {
		list = g.schemaOf(reflect.TypeOf(servedNewList(info)))
	}
	status := g.schemaOf(reflect.TypeOf(api.Status{}))
	delOpts := g.schemaOf(reflect.TypeOf(api.DeleteOptions{}))
	patch := map[string]any{"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}

	base := "/api/" + info.Version
	opGroup := "Core"
	if info.Group != "" {
		base = "/apis/" + info.Group + "/" + info.Version
		opGroup = ""
		for _, part := range strings.Split(strings.TrimSuffix(info.Group, ".k8s.io"), ".") {
			opGroup += strings.ToUpper(part[:1]) + part[1:]
		}
	}
	opSuffix := opGroup + strings.ToUpper(info.Version[:1]) + info.Version[1:]
	scope := ""
	collection := base + "/" + info.Resource
	var nsParams []param
	if info.Namespaced {
		scope = "Namespaced"
		collection = base + "/namespaces/{namespace}/" + info.Resource
		nsParams = []param{pathNamespace}
	}
	item := collection + "/{name}"
	named := append(append([]param{}, nsParams...), pathName)
	mk := func(action, verb string, params []param, body map[string]any, bodyTypes []string, resp map[string]any, kindSuffix string) map[string]any {
		return operation{
			id: verb + opSuffix + scope + info.Kind + kindSuffix, action: action,
			group: info.Group, version: info.Version, kind: info.Kind,
			params: params, body: body, bodyTypes: bodyTypes, resp: resp,
		}.build(v3)
	}
	js := []string{"application/json", "application/yaml"}
	paths[collection] = map[string]any{
		"get":    mk("list", "list", append(append([]param{}, nsParams...), listParams...), nil, nil, list, ""),
		"post":   mk("post", "create", append(append([]param{}, nsParams...), writeParams...), obj, js, obj, ""),
		"delete": mk("deletecollection", "deleteCollection", append(append(append([]param{}, nsParams...), deleteParams...), listParams...), delOpts, js, status, ""),
	}
	paths[item] = map[string]any{
		"get":    mk("get", "read", named, nil, nil, obj, ""),
		"put":    mk("put", "replace", append(append([]param{}, named...), writeParams...), obj, js, obj, ""),
		"patch":  mk("patch", "patch", append(append([]param{}, named...), writeParams...), patch, patchTypes, obj, ""),
		"delete": mk("delete", "delete", append(append([]param{}, named...), deleteParams...), delOpts, js, status, ""),
	}
	if info.Namespaced {
		paths[base+"/"+info.Resource] = map[string]any{
			"get": operation{
				id: "list" + opSuffix + info.Kind + "ForAllNamespaces", action: "list",
				group: info.Group, version: info.Version, kind: info.Kind, params: listParams, resp: list,
			}.build(v3),
		}
	}
	if r.subs["status"] {
		paths[item+"/status"] = map[string]any{
			"get":   mk("get", "read", named, nil, nil, obj, "Status"),
			"put":   mk("put", "replace", append(append([]param{}, named...), writeParams...), obj, js, obj, "Status"),
			"patch": mk("patch", "patch", append(append([]param{}, named...), writeParams...), patch, patchTypes, obj, "Status"),
		}
	}
	if r.subs["scale"] {
		scale := g.schemaOf(reflect.TypeOf(api.Scale{}))
		sc := func(action, verb string, params []param, body map[string]any, bodyTypes []string) map[string]any {
			return operation{
				id: verb + opSuffix + scope + info.Kind + "Scale", action: action,
				group: "autoscaling", version: "v1", kind: "Scale",
				params: params, body: body, bodyTypes: bodyTypes, resp: scale,
			}.build(v3)
		}
		paths[item+"/scale"] = map[string]any{
			"get":   sc("get", "read", named, nil, nil),
			"put":   sc("put", "replace", append(append([]param{}, named...), writeParams...), scale, js),
			"patch": sc("patch", "patch", append(append([]param{}, named...), writeParams...), patch, patchTypes),
		}
	}
}

// servedNew is an empty object of the type info is served as: the served
// version's for a resource served by conversion (api.Conversion).
func servedNew(info *api.ResourceInfo) any {
	if info.Conversion != nil {
		return info.Conversion.New()
	}
	return info.New()
}

// servedNewList is servedNew's list.
func servedNewList(info *api.ResourceInfo) any {
	if info.Conversion != nil {
		return info.Conversion.NewList()
	}
	return info.NewList()
}
