package apiserver

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"reflect"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/store"
)

// KeyFor is the store key of an object:
// /registry/<group or "core">/<resource>/<namespace>/<name>, or without the
// namespace segment for cluster-scoped resources.
func KeyFor(info *api.ResourceInfo, ns, name string) string {
	g := info.Group
	if g == "" {
		g = "core"
	}
	if info.Namespaced {
		return "/registry/" + g + "/" + info.Resource + "/" + ns + "/" + name
	}
	return "/registry/" + g + "/" + info.Resource + "/" + name
}

// resourcePrefix is the key prefix of every object of a resource (with the
// trailing slash, so "pods" never matches "podsx").
func resourcePrefix(info *api.ResourceInfo) string {
	g := info.Group
	if g == "" {
		g = "core"
	}
	return "/registry/" + g + "/" + info.Resource + "/"
}

// resource is one served ResourceInfo with what the server derived from it.
type resource struct {
	info          *api.ResourceInfo
	qualified     string // services, deployments.apps
	qualifiedKind string // Service, Deployment.apps
	prefix        string
	storageGV     string // apiVersion of stored values
	// convert rewrites a stored value's apiVersion (storageGV, always its
	// first field) to the served one; nil when they are the same.
	convert      func([]byte) ([]byte, error)
	custom       bool // a custom resource (SetCustomResources)
	subs         map[string]bool
	actions      map[string]*Action // subresources served by an Action (actions.go)
	hook         TxnHook
	isPods       bool
	isNamespaces bool

	statusIndex []int   // reflect index of the status field; nil when none
	specIndexes [][]int // fields outside metadata and status (generation)
	fieldKeys   map[string]bool
}

func newResource(info *api.ResourceInfo, hook TxnHook) (*resource, error) {
	if info.New == nil || info.Resource == "" || info.Kind == "" || info.Version == "" {
		return nil, fmt.Errorf("apiserver: resource %q: New, Resource, Kind and Version are required", info.Resource)
	}
	r := &resource{
		info:          info,
		qualified:     info.Resource,
		qualifiedKind: info.Kind,
		prefix:        resourcePrefix(info),
		subs:          make(map[string]bool),
		hook:          hook,
		isPods:        info.Group == "" && info.Resource == "pods",
		isNamespaces:  info.Group == "" && info.Resource == "namespaces",
	}
	if info.Group != "" {
		r.qualified += "." + info.Group
		r.qualifiedKind += "." + info.Group
	}
	r.storageGV = info.GroupVersion()
	if sv := info.StorageVersion; sv != "" && sv != info.Version {
		r.storageGV = sv
		if info.Group != "" {
			r.storageGV = info.Group + "/" + sv
		}
		r.convert = apiVersionRewriter(r.storageGV, info.GroupVersion())
		if info.Conversion != nil {
			r.convert = r.fromStorage
		}
	}
	for _, s := range info.Subresources {
		r.subs[s] = true
	}
	if r.isNamespaces {
		r.subs["finalize"] = true
	}
	sample := info.New()
	t := reflect.TypeOf(sample)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("apiserver: resource %q: New must return a pointer to a struct", info.Resource)
	}
	t = t.Elem()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "-" || !f.IsExported() {
			continue
		}
		switch name {
		case "metadata", "apiVersion", "kind":
		case "status":
			r.statusIndex = f.Index
		default:
			r.specIndexes = append(r.specIndexes, f.Index)
		}
	}
	r.fieldKeys = make(map[string]bool)
	for k := range r.fieldsOf(sample) {
		r.fieldKeys[k] = true
	}
	return r, nil
}

// fieldsOf is the field-selector field set of obj.
func (r *resource) fieldsOf(obj api.Object) map[string]string {
	var m map[string]string
	if r.info.Fields != nil {
		m = r.info.Fields(obj)
	}
	if m == nil {
		m = make(map[string]string, 2)
	}
	meta := obj.GetObjectMeta()
	if _, ok := m["metadata.name"]; !ok {
		m["metadata.name"] = meta.Name
	}
	if _, ok := m["metadata.namespace"]; !ok {
		m["metadata.namespace"] = meta.Namespace
	}
	return m
}

// decode decodes a stored value (trusted, so not strict).
func (r *resource) decode(raw []byte) (api.Object, error) {
	obj := r.info.New()
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, fmt.Errorf("apiserver: decoding stored %s: %w", r.qualified, err)
	}
	return obj, nil
}

// copyStatus sets dst's status field to src's (no-op without one).
func (r *resource) copyStatus(dst, src api.Object) {
	if r.statusIndex == nil {
		return
	}
	reflect.ValueOf(dst).Elem().FieldByIndex(r.statusIndex).Set(reflect.ValueOf(src).Elem().FieldByIndex(r.statusIndex))
}

// specChanged reports whether anything outside metadata and status differs.
func (r *resource) specChanged(a, b api.Object) (bool, error) {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, idx := range r.specIndexes {
		ja, err := json.Marshal(va.FieldByIndex(idx).Interface())
		if err != nil {
			return false, err
		}
		jb, err := json.Marshal(vb.FieldByIndex(idx).Interface())
		if err != nil {
			return false, err
		}
		if !bytes.Equal(ja, jb) {
			return true, nil
		}
	}
	return false, nil
}

// encode stamps TypeMeta and resourceVersion rv and marshals obj.
func (r *resource) encode(obj api.Object, rv int64) ([]byte, error) {
	tm := obj.GetTypeMeta()
	tm.APIVersion, tm.Kind = r.storedAPIVersion(), r.info.Kind
	obj.GetObjectMeta().ResourceVersion = strconv.FormatInt(rv, 10)
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("apiserver: encoding %s: %w", r.qualified, err)
	}
	return b, nil
}

// storedAPIVersion is the apiVersion of r's stored values.
func (r *resource) storedAPIVersion() string {
	if r.storageGV == "" {
		return r.info.GroupVersion()
	}
	return r.storageGV
}

// fromStorage converts a stored value to the served version with
// info.Conversion (a built-in resource served in two versions).
func (r *resource) fromStorage(raw []byte) ([]byte, error) {
	obj, err := r.decode(raw)
	if err != nil {
		return nil, err
	}
	out, err := r.info.Conversion.FromStorage(obj)
	if err != nil {
		return nil, fmt.Errorf("apiserver: converting %s to %s: %w", r.qualified, r.info.GroupVersion(), err)
	}
	return json.Marshal(out)
}

// apiVersionRewriter rewrites the apiVersion of a value encoded with
// apiVersion from as its first field to to (the conversion of custom
// resources whose versions share one schema); any other value (a Status)
// passes unchanged.
func apiVersionRewriter(from, to string) func([]byte) ([]byte, error) {
	fromPrefix := []byte(`{"apiVersion":"` + from + `"`)
	toPrefix := []byte(`{"apiVersion":"` + to + `"`)
	return func(raw []byte) ([]byte, error) {
		if !bytes.HasPrefix(raw, fromPrefix) {
			return raw, nil
		}
		out := make([]byte, 0, len(raw)-len(fromPrefix)+len(toPrefix))
		out = append(out, toPrefix...)
		return append(out, raw[len(fromPrefix):]...), nil
	}
}

// newUID is a random RFC 4122 version 4 UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go >= 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	const hex = "0123456789abcdef"
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hex[c>>4], hex[c&0xf]
		j += 2
	}
	return string(out[:])
}

// nameSuffix is the 5-character generateName suffix Kubernetes uses.
func nameSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	for i := range b {
		b[i] = alphabet[mathrand.IntN(len(alphabet))]
	}
	return string(b[:])
}

// validateMeta checks what the key layout needs of names.
func validateMeta(r *resource, meta *api.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("metadata")
	switch {
	case meta.Name == "" && meta.GenerateName == "":
		errs = append(errs, field.Required(p.Child("name"), "name or generateName is required"))
	case meta.Name == "":
	case len(meta.Name) > 253:
		errs = append(errs, field.TooLong(p.Child("name"), meta.Name, 253))
	case meta.Name == "." || meta.Name == "..":
		errs = append(errs, field.Invalid(p.Child("name"), meta.Name, "may not be '.' or '..'"))
	case strings.ContainsAny(meta.Name, "/%"):
		errs = append(errs, field.Invalid(p.Child("name"), meta.Name, "may not contain '/' or '%'"))
	}
	if r.info.Namespaced && meta.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	}
	return errs
}

// PutObject writes obj for a hook inside tx: it fills uid,
// creationTimestamp and generation when empty, sets resourceVersion to the
// transaction's revision, encodes and puts it under KeyFor.
func (s *Server) PutObject(tx store.Txn, info *api.ResourceInfo, obj api.Object) error {
	r := s.byInfo(info)
	meta := obj.GetObjectMeta()
	if meta.Name == "" || (info.Namespaced && meta.Namespace == "") {
		return fmt.Errorf("apiserver: PutObject %s: name and namespace are required", info.Resource)
	}
	if meta.UID == "" {
		meta.UID = newUID()
	}
	if meta.CreationTimestamp.IsZero() {
		meta.CreationTimestamp = api.NewTime(s.now())
	}
	if meta.Generation == 0 {
		meta.Generation = 1
	}
	raw, err := r.encode(obj, tx.Revision())
	if err != nil {
		return err
	}
	return tx.Put(KeyFor(info, meta.Namespace, meta.Name), raw)
}

// DeleteObject removes an object for a hook inside tx; an absent object is
// a NotFound StatusError.
func (s *Server) DeleteObject(tx store.Txn, info *api.ResourceInfo, ns, name string) error {
	err := tx.Delete(KeyFor(info, ns, name))
	if errors.Is(err, store.ErrNotFound) {
		q := info.Resource
		if info.Group != "" {
			q += "." + info.Group
		}
		return NewNotFound(q, name)
	}
	return err
}

// byInfo finds the served resource of info, or derives an unserved one.
func (s *Server) byInfo(info *api.ResourceInfo) *resource {
	if r, ok := s.byPtr[info]; ok {
		return r
	}
	if r, ok := s.byQualified[qualifiedName(info)]; ok {
		return r
	}
	r, err := newResource(info, nil)
	if err != nil {
		return &resource{info: info, qualified: qualifiedName(info), prefix: resourcePrefix(info)}
	}
	return r
}

func qualifiedName(info *api.ResourceInfo) string {
	if info.Group == "" {
		return info.Resource
	}
	return info.Resource + "." + info.Group
}
