package apiextensions

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/kubectl/jsonpath"
)

// Options tune the CustomResourceDefinition resource.
type Options struct {
	// Reserved reports the groups served by built-in resources, refused as
	// a definition's group; nil refuses none.
	Reserved func(group string) bool
	// Now is the clock of the conditions' lastTransitionTime; nil is
	// time.Now.
	Now func() time.Time
}

// CRDResource is the resource table entry of customresourcedefinitions
// (cluster-scoped, with the status subresource).
func CRDResource(opts Options) *api.ResourceInfo {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	gv := Group + "/" + Version
	typed := func(o api.Object) *CustomResourceDefinition {
		c, _ := o.(*CustomResourceDefinition)
		return c
	}
	wrong := func(o api.Object) field.ErrorList {
		return field.ErrorList{field.Internal(field.NewPath(""), errWrongType(o))}
	}
	return &api.ResourceInfo{
		Group: Group, Version: Version,
		Resource: "customresourcedefinitions", Singular: "customresourcedefinition",
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		Subresources: []string{"status"},
		// kube-apiserver's columns: NAME, CREATED AT (a timestamp).
		Table: &api.TablePrinter{
			Columns: []api.TableColumn{
				{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
				{Name: "Created At", Type: "date"},
			},
			Cells: func(o api.Object, _ time.Time) []any {
				m := o.GetObjectMeta()
				return []any{m.Name, m.CreationTimestamp.UTC().Format(time.RFC3339)}
			},
		},
		New: func() api.Object {
			return &CustomResourceDefinition{TypeMeta: api.TypeMeta{APIVersion: gv, Kind: "CustomResourceDefinition"}}
		},
		NewList: func() api.ListObject {
			return &CustomResourceDefinitionList{TypeMeta: api.TypeMeta{APIVersion: gv, Kind: "CustomResourceDefinitionList"}}
		},
		Default: func(o api.Object) {
			if c := typed(o); c != nil {
				DefaultCRD(c)
				SetStatus(c, now())
			}
		},
		ValidateCreate: func(o api.Object) field.ErrorList {
			c := typed(o)
			if c == nil {
				return wrong(o)
			}
			return ValidateCRD(c, opts.Reserved)
		},
		ValidateUpdate: func(o, old api.Object) field.ErrorList {
			c, p := typed(o), typed(old)
			if c == nil || p == nil {
				return wrong(o)
			}
			return ValidateCRDUpdate(c, p, opts.Reserved)
		},
		ValidateStatusUpdate: func(o, old api.Object) field.ErrorList {
			c, p := typed(o), typed(old)
			if c == nil || p == nil {
				return wrong(o)
			}
			errs := api.ValidateObjectMetaUpdate(&c.ObjectMeta, &p.ObjectMeta, field.NewPath("metadata"))
			return append(errs, validateStoredVersions(c.Status.StoredVersions, c.Spec.Versions, field.NewPath("status", "storedVersions"))...)
		},
		PrepareForCreate: func(o api.Object) {
			if c := typed(o); c != nil {
				c.Status = CustomResourceDefinitionStatus{}
				c.Generation = 1
			}
		},
		PrepareForUpdate: func(o, old api.Object) {
			c, p := typed(o), typed(old)
			if c == nil || p == nil {
				return
			}
			api.PrepareObjectMetaForUpdate(&c.ObjectMeta, &p.ObjectMeta)
			c.Status = p.Status
		},
		PrepareForStatusUpdate: func(o, old api.Object) {
			c, p := typed(o), typed(old)
			if c == nil || p == nil {
				return
			}
			api.PrepareObjectMetaForUpdate(&c.ObjectMeta, &p.ObjectMeta)
			c.Labels, c.Annotations = p.Labels, p.Annotations
			c.OwnerReferences, c.Finalizers = p.OwnerReferences, p.Finalizers
			c.Spec = p.Spec
		},
	}
}

// DefaultCRD fills what upstream's v1 defaulting fills: names.singular
// (the lowercased kind), names.listKind (kind + "List") and
// conversion.strategy None.
func DefaultCRD(c *CustomResourceDefinition) {
	n := &c.Spec.Names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
	if c.Spec.Conversion == nil {
		c.Spec.Conversion = &CustomResourceConversion{Strategy: NoneConverter}
	} else if c.Spec.Conversion.Strategy == "" {
		c.Spec.Conversion.Strategy = NoneConverter
	}
}

// SetStatus sets what kube-apiserver's controllers set once a definition
// is served: acceptedNames (the spec's names), the conditions
// NamesAccepted and Established True, and the storage version added to
// storedVersions. A condition already True keeps its lastTransitionTime.
func SetStatus(c *CustomResourceDefinition, now time.Time) {
	c.Status.AcceptedNames = c.Spec.Names
	t := api.NewTime(now)
	setCondition(&c.Status, CustomResourceDefinitionCondition{Type: NamesAccepted, Status: "True",
		Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: &t})
	setCondition(&c.Status, CustomResourceDefinitionCondition{Type: Established, Status: "True",
		Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: &t})
	if sv := c.StorageVersion(); sv != "" && !slices.Contains(c.Status.StoredVersions, sv) {
		c.Status.StoredVersions = append(c.Status.StoredVersions, sv)
	}
	if c.Status.StoredVersions == nil {
		c.Status.StoredVersions = []string{}
	}
}

func setCondition(s *CustomResourceDefinitionStatus, c CustomResourceDefinitionCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type != c.Type {
			continue
		}
		if s.Conditions[i].Status == c.Status && s.Conditions[i].LastTransitionTime != nil {
			c.LastTransitionTime = s.Conditions[i].LastTransitionTime
		}
		s.Conditions[i] = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}

// ObjectPrefix is the store key prefix of a definition's objects, in the
// API server's key layout (/registry/<group>/<plural>/).
func ObjectPrefix(c *CustomResourceDefinition) string {
	return "/registry/" + c.Spec.Group + "/" + c.Spec.Names.Plural + "/"
}

// ResourceInfos are the resource table entries of a definition's served
// versions, the preferred version first (upstream's version priority:
// GA before beta before alpha, higher numbers first, then other names in
// alphabetical order). Every version is stored in the storage version;
// conversion between them rewrites apiVersion only.
func ResourceInfos(c *CustomResourceDefinition) []*api.ResourceInfo {
	var vs []CustomResourceDefinitionVersion
	for _, v := range c.Spec.Versions {
		if v.Served {
			vs = append(vs, v)
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return api.CompareVersions(vs[i].Name, vs[j].Name) > 0 })
	storage := c.StorageVersion()
	n := c.Spec.Names
	out := make([]*api.ResourceInfo, 0, len(vs))
	for _, v := range vs {
		withStatus := v.Subresources != nil && v.Subresources.Status != nil
		info := objectInfo(c.Spec.Group, v.Name, storage, n, c.Spec.Scope == NamespaceScoped, withStatus)
		info.Table = tableOf(v.AdditionalPrinterColumns)
		info.Fields = fieldsOf(v.SelectableFields)
		if v.Subresources != nil && v.Subresources.Scale != nil {
			sc := v.Subresources.Scale
			info.Subresources = append(info.Subresources, "scale")
			info.Scale = &api.ScalePaths{SpecReplicas: pathSegments(sc.SpecReplicasPath), StatusReplicas: pathSegments(sc.StatusReplicasPath)}
			if sc.LabelSelectorPath != nil {
				info.Scale.LabelSelector = pathSegments(*sc.LabelSelectorPath)
			}
		}
		out = append(out, info)
	}
	return out
}

func objectInfo(group, version, storage string, n CustomResourceDefinitionNames, namespaced, withStatus bool) *api.ResourceInfo {
	gv := group + "/" + version
	info := &api.ResourceInfo{
		Group: group, Version: version, Resource: n.Plural, Singular: n.Singular,
		Kind: n.Kind, ListKind: n.ListKind, Namespaced: namespaced,
		ShortNames: slices.Clone(n.ShortNames), Categories: slices.Clone(n.Categories),
		StorageVersion: storage,
	}
	tm := api.TypeMeta{APIVersion: gv, Kind: n.Kind}
	nameFn := api.NameIsDNSSubdomain
	validateCreate := func(o api.Object) field.ErrorList {
		return api.ValidateObjectMeta(o.GetObjectMeta(), namespaced, nameFn, field.NewPath("metadata"))
	}
	validateUpdate := func(o, old api.Object) field.ErrorList {
		return api.ValidateObjectMetaUpdate(o.GetObjectMeta(), old.GetObjectMeta(), field.NewPath("metadata"))
	}
	info.Default = func(o api.Object) {
		t := o.GetTypeMeta()
		if t.APIVersion == "" && t.Kind == "" {
			*t = tm
		}
	}
	info.ValidateCreate = validateCreate
	info.ValidateUpdate = validateUpdate
	info.Fields = fieldsOf(nil)
	info.PrepareForUpdate = func(o, old api.Object) {
		api.PrepareObjectMetaForUpdate(o.GetObjectMeta(), old.GetObjectMeta())
	}
	if !withStatus {
		info.New = func() api.Object { return &Object{TypeMeta: tm} }
		info.NewList = func() api.ListObject {
			return &List[Object, *Object]{TypeMeta: api.TypeMeta{APIVersion: gv, Kind: n.ListKind}}
		}
		info.PrepareForCreate = func(o api.Object) { o.GetObjectMeta().Generation = 1 }
		return info
	}
	info.Subresources = []string{"status"}
	info.New = func() api.Object { return &ObjectWithStatus{TypeMeta: tm} }
	info.NewList = func() api.ListObject {
		return &List[ObjectWithStatus, *ObjectWithStatus]{TypeMeta: api.TypeMeta{APIVersion: gv, Kind: n.ListKind}}
	}
	info.PrepareForCreate = func(o api.Object) {
		o.GetObjectMeta().Generation = 1
		if w, ok := o.(*ObjectWithStatus); ok {
			w.Status = nil
		}
	}
	info.PrepareForStatusUpdate = func(o, old api.Object) {
		m, om := o.GetObjectMeta(), old.GetObjectMeta()
		api.PrepareObjectMetaForUpdate(m, om)
		m.Labels, m.Annotations = om.Labels, om.Annotations
		m.OwnerReferences, m.Finalizers = om.OwnerReferences, om.Finalizers
		if w, ok := o.(*ObjectWithStatus); ok {
			if p, ok := old.(*ObjectWithStatus); ok {
				w.Content = p.Content
			}
		}
	}
	info.ValidateStatusUpdate = validateUpdate
	return info
}

// decodeCRD decodes a stored definition.
func decodeCRD(raw []byte) (*CustomResourceDefinition, error) {
	var c CustomResourceDefinition
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// fieldsOf is the field-selector fields of a version: metadata.name,
// metadata.namespace and each selectable field, named by its JSONPath
// without the leading dot ("spec.color"), its value the field's string,
// integer or boolean as text ("" when absent or of another type).
func fieldsOf(selectable []SelectableField) func(api.Object) map[string]string {
	return func(o api.Object) map[string]string {
		m := o.GetObjectMeta()
		out := map[string]string{"metadata.name": m.Name, "metadata.namespace": m.Namespace}
		if len(selectable) == 0 {
			return out
		}
		data, err := asJSONValue(o)
		for _, f := range selectable {
			key := strings.TrimPrefix(f.JSONPath, ".")
			out[key] = ""
			if err != nil {
				continue
			}
			vals, err := jsonpath.Eval(f.JSONPath, data)
			if err != nil || len(vals) != 1 {
				continue
			}
			switch v := vals[0].(type) {
			case string:
				out[key] = v
			case bool:
				out[key] = strconv.FormatBool(v)
			case json.Number:
				if _, err := v.Int64(); err == nil {
					out[key] = v.String()
				}
			}
		}
		return out
	}
}

// pathSegments splits a simple JSONPath (".spec.replicas") into field names.
func pathSegments(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }
