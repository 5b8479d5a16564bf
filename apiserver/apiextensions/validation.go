package apiextensions

import (
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/kubectl/jsonpath"
)

// approvalAnnotation must be on a definition in a protected group
// (k8s.io, kubernetes.io and their subdomains), as upstream requires.
const approvalAnnotation = "api-approved.kubernetes.io"

// maxSelectableFields is upstream's limit of selectableFields per version.
const maxSelectableFields = 8

// simplePath reports a JSONPath of field names only (".spec.color"), what
// a selectable field may name.
func simplePath(p string) bool {
	if !strings.HasPrefix(p, ".") || len(p) < 2 {
		return false
	}
	for _, part := range strings.Split(p[1:], ".") {
		if part == "" {
			return false
		}
		for _, r := range part {
			if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

// ValidateCRD checks a new CustomResourceDefinition (after Default) as
// upstream's apiextensions validation does for what this server
// implements: see the package doc's rules. reserved reports the groups
// the server's built-in resources serve (nil: none).
func ValidateCRD(c *CustomResourceDefinition, reserved func(group string) bool) field.ErrorList {
	nameFn := func(name string, prefix bool) []string {
		msgs := api.NameIsDNSSubdomain(name, prefix)
		if name != c.Spec.Names.Plural+"."+c.Spec.Group {
			msgs = append(msgs, `must be spec.names.plural+"."+spec.group`)
		}
		return msgs
	}
	errs := api.ValidateObjectMeta(&c.ObjectMeta, false, nameFn, field.NewPath("metadata"))
	if isProtectedGroup(c.Spec.Group) && c.Annotations[approvalAnnotation] == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(approvalAnnotation),
			`protected groups must have approval annotation "`+approvalAnnotation+`", see https://github.com/kubernetes/enhancements/pull/1111`))
	}
	errs = append(errs, validateSpec(&c.Spec, reserved, field.NewPath("spec"))...)
	return errs
}

// ValidateCRDUpdate checks an update against the stored definition: as a
// create, and group, names.plural, names.kind and scope are immutable
// (every served definition is established), and every stored version
// must stay in spec.versions.
func ValidateCRDUpdate(c, old *CustomResourceDefinition, reserved func(group string) bool) field.ErrorList {
	errs := api.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&c.Spec, reserved, field.NewPath("spec"))...)
	p := field.NewPath("spec")
	errs = append(errs, api.ValidateImmutableField(c.Spec.Scope, old.Spec.Scope, p.Child("scope"))...)
	errs = append(errs, api.ValidateImmutableField(c.Spec.Names.Kind, old.Spec.Names.Kind, p.Child("names", "kind"))...)
	errs = append(errs, api.ValidateImmutableField(c.Spec.Group, old.Spec.Group, p.Child("group"))...)
	errs = append(errs, api.ValidateImmutableField(c.Spec.Names.Plural, old.Spec.Names.Plural, p.Child("names", "plural"))...)
	errs = append(errs, validateStoredVersions(c.Status.StoredVersions, c.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	return errs
}

func isProtectedGroup(g string) bool {
	for _, d := range []string{"k8s.io", "kubernetes.io"} {
		if g == d || strings.HasSuffix(g, "."+d) {
			return true
		}
	}
	return false
}

func validateStoredVersions(stored []string, versions []CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stored {
		found := false
		for _, v := range versions {
			found = found || v.Name == s
		}
		if !found {
			errs = append(errs, field.Invalid(p.Index(i), s, "must appear in spec.versions"))
		}
	}
	return errs
}

func validateSpec(s *CustomResourceDefinitionSpec, reserved func(string) bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case s.Group == "":
		errs = append(errs, field.Required(p.Child("group"), ""))
	case len(api.ValidateDNS1123Subdomain(s.Group)) > 0:
		errs = append(errs, field.Invalid(p.Child("group"), s.Group, strings.Join(api.ValidateDNS1123Subdomain(s.Group), ",")))
	case !strings.Contains(s.Group, "."):
		errs = append(errs, field.Invalid(p.Child("group"), s.Group, "should be a domain with at least one dot"))
	case reserved != nil && reserved(s.Group):
		// Not an upstream rule: upstream serves the built-in resource and
		// reports the conflict in status; this server refuses it.
		errs = append(errs, field.Invalid(p.Child("group"), s.Group, "is a group of the server's built-in resources"))
	}

	switch s.Scope {
	case "":
		errs = append(errs, field.Required(p.Child("scope"), ""))
	case ClusterScoped, NamespaceScoped:
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), s.Scope, []string{ClusterScoped, NamespaceScoped}))
	}

	vp := p.Child("versions")
	if len(s.Versions) == 0 {
		errs = append(errs, field.Required(vp, "must have at least one version"))
	}
	storage := 0
	seen := map[string]bool{}
	unique := true
	for i, v := range s.Versions {
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := api.ValidateDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(vp.Index(i).Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		if v.Schema == nil || len(v.Schema.OpenAPIV3Schema) == 0 || string(v.Schema.OpenAPIV3Schema) == "null" {
			errs = append(errs, field.Required(vp.Index(i).Child("schema", "openAPIV3Schema"), "schemas are required"))
		}
		if v.DeprecationWarning != nil && !v.Deprecated {
			errs = append(errs, field.Invalid(vp.Index(i).Child("deprecationWarning"), *v.DeprecationWarning, "can only be set for deprecated versions"))
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			errs = append(errs, validateScale(v.Subresources.Scale, vp.Index(i).Child("subresources", "scale"))...)
		}
		sp := vp.Index(i).Child("selectableFields")
		if len(v.SelectableFields) > maxSelectableFields {
			errs = append(errs, field.TooMany(sp, len(v.SelectableFields), maxSelectableFields))
		}
		seenPaths := map[string]bool{}
		for j, f := range v.SelectableFields {
			fp := sp.Index(j).Child("jsonPath")
			switch {
			case f.JSONPath == "":
				errs = append(errs, field.Required(fp, ""))
			case !simplePath(f.JSONPath):
				errs = append(errs, field.Invalid(fp, f.JSONPath, "must be a simple json path"))
			case seenPaths[f.JSONPath]:
				errs = append(errs, field.Duplicate(fp, f.JSONPath))
			}
			seenPaths[f.JSONPath] = true
		}
		for j, c := range v.AdditionalPrinterColumns {
			cp := vp.Index(i).Child("additionalPrinterColumns").Index(j)
			if c.Name == "" {
				errs = append(errs, field.Required(cp.Child("name"), ""))
			}
			if c.JSONPath == "" {
				errs = append(errs, field.Required(cp.Child("jsonPath"), ""))
			} else if _, err := jsonpath.Parse("{" + c.JSONPath + "}"); err != nil {
				errs = append(errs, field.Invalid(cp.Child("jsonPath"), c.JSONPath, "must be a simple json path"))
			}
			switch c.Type {
			case "":
				errs = append(errs, field.Required(cp.Child("type"), ""))
			case "integer", "number", "string", "boolean", "date":
			default:
				errs = append(errs, field.NotSupported(cp.Child("type"), c.Type, []string{"integer", "number", "string", "boolean", "date"}))
			}
		}
	}
	if !unique {
		errs = append(errs, field.Invalid(vp, versionNames(s.Versions), "must contain unique version names"))
	}
	if len(s.Versions) > 0 && storage != 1 {
		errs = append(errs, field.Invalid(vp, versionNames(s.Versions), "must have exactly one version marked as storage version"))
	}

	np := p.Child("names")
	if s.Names.Plural == "" {
		errs = append(errs, field.Required(np.Child("plural"), ""))
	}
	if s.Names.Singular == "" {
		errs = append(errs, field.Required(np.Child("singular"), ""))
	}
	if s.Names.Kind == "" {
		errs = append(errs, field.Required(np.Child("kind"), ""))
	}
	if s.Names.ListKind == "" {
		errs = append(errs, field.Required(np.Child("listKind"), ""))
	}
	errs = append(errs, validateNames(&s.Names, np)...)

	if c := s.Conversion; c != nil {
		cp := p.Child("conversion")
		switch c.Strategy {
		case NoneConverter:
			if len(c.Webhook) > 0 && string(c.Webhook) != "null" {
				errs = append(errs, field.Forbidden(cp.Child("webhook"), "should not be set when strategy is not set to Webhook"))
			}
		case WebhookConverter:
			// Upstream calls the webhook; this server has no webhook client.
			errs = append(errs, field.Forbidden(cp.Child("strategy"), "Webhook conversion is not supported by this server; use None (all served versions share one schema)"))
		case "":
			errs = append(errs, field.Required(cp.Child("strategy"), ""))
		default:
			errs = append(errs, field.NotSupported(cp.Child("strategy"), c.Strategy, []string{NoneConverter, WebhookConverter}))
		}
	}
	if s.PreserveUnknownFields {
		errs = append(errs, field.Invalid(p.Child("preserveUnknownFields"), true, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
	}
	return errs
}

func versionNames(vs []CustomResourceDefinitionVersion) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// validateNames is upstream's ValidateCustomResourceDefinitionNames: every
// name a DNS-1035 label (kind and listKind once lowercased), kind and
// listKind different.
func validateNames(n *CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(path *field.Path, v string, lower bool) {
		if v == "" {
			return
		}
		s, prefix := v, ""
		if lower {
			s, prefix = strings.ToLower(v), "may have mixed case, but should otherwise match: "
		}
		if msgs := api.ValidateDNS1035Label(s); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path, v, prefix+strings.Join(msgs, ",")))
		}
	}
	label(p.Child("plural"), n.Plural, false)
	label(p.Child("singular"), n.Singular, false)
	label(p.Child("kind"), n.Kind, true)
	label(p.Child("listKind"), n.ListKind, true)
	for i, s := range n.ShortNames {
		if msgs := api.ValidateDNS1035Label(s); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("shortNames").Index(i), s, strings.Join(msgs, ",")))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range n.Categories {
		if msgs := api.ValidateDNS1035Label(c); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("categories").Index(i), c, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateScale is upstream's check of subresources.scale: replicas paths
// under .spec and .status, the selector's under either.
func validateScale(sc *CustomResourceSubresourceScale, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	under := func(path *field.Path, v string, msg string, roots ...string) {
		if v == "" {
			errs = append(errs, field.Required(path, ""))
			return
		}
		ok := simplePath(v)
		if ok {
			ok = false
			for _, r := range roots {
				ok = ok || strings.HasPrefix(v, r+".")
			}
		}
		if !ok {
			errs = append(errs, field.Invalid(path, v, msg))
		}
	}
	under(p.Child("specReplicasPath"), sc.SpecReplicasPath, "should be a json path under .spec", ".spec")
	under(p.Child("statusReplicasPath"), sc.StatusReplicasPath, "should be a json path under .status", ".status")
	if sc.LabelSelectorPath != nil {
		under(p.Child("labelSelectorPath"), *sc.LabelSelectorPath, "should be a json path under either .spec or .status", ".spec", ".status")
	}
	return errs
}
