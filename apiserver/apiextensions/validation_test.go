package apiextensions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api/field"
)

func validCRD() *CustomResourceDefinition {
	c := &CustomResourceDefinition{}
	if err := json.Unmarshal([]byte(crdJSON), c); err != nil {
		panic(err)
	}
	DefaultCRD(c)
	return c
}

func TestValidateCRD(t *testing.T) {
	reserved := func(g string) bool { return g == "apps" || g == "discovery.k8s.io" }
	cases := []struct {
		name   string
		edit   func(c *CustomResourceDefinition)
		fields []string // the field paths of the errors, in order; none when valid
		detail string   // a substring of the first error's detail
	}{
		{name: "valid", edit: func(*CustomResourceDefinition) {}},
		{name: "name must be plural.group", edit: func(c *CustomResourceDefinition) { c.Name = "widget.example.com" },
			fields: []string{"metadata.name"}, detail: `must be spec.names.plural+"."+spec.group`},
		{name: "group required", edit: func(c *CustomResourceDefinition) { c.Spec.Group, c.Name = "", "widgets." },
			fields: []string{"metadata.name", "spec.group"}},
		{name: "group needs a dot", edit: func(c *CustomResourceDefinition) { c.Spec.Group, c.Name = "example", "widgets.example" },
			fields: []string{"spec.group"}, detail: "at least one dot"},
		{name: "group of built-in resources", edit: func(c *CustomResourceDefinition) {
			c.Spec.Group, c.Name = "discovery.k8s.io", "widgets.discovery.k8s.io"
			c.Annotations = map[string]string{approvalAnnotation: "unapproved"}
		}, fields: []string{"spec.group"}, detail: "built-in"},
		{name: "protected group without approval", edit: func(c *CustomResourceDefinition) {
			c.Spec.Group, c.Name = "x.k8s.io", "widgets.x.k8s.io"
		}, fields: []string{"metadata.annotations[api-approved.kubernetes.io]"}},
		{name: "protected group with approval", edit: func(c *CustomResourceDefinition) {
			c.Spec.Group, c.Name = "x.k8s.io", "widgets.x.k8s.io"
			c.Annotations = map[string]string{approvalAnnotation: "https://example.com/pr/1"}
		}},
		{name: "scope required", edit: func(c *CustomResourceDefinition) { c.Spec.Scope = "" }, fields: []string{"spec.scope"}},
		{name: "scope unsupported", edit: func(c *CustomResourceDefinition) { c.Spec.Scope = "Global" },
			fields: []string{"spec.scope"}, detail: `"Cluster", "Namespaced"`},
		{name: "no versions", edit: func(c *CustomResourceDefinition) { c.Spec.Versions = nil },
			fields: []string{"spec.versions"}, detail: "at least one version"},
		{name: "no storage version", edit: func(c *CustomResourceDefinition) { c.Spec.Versions[1].Storage = false },
			fields: []string{"spec.versions"}, detail: "exactly one version marked as storage"},
		{name: "two storage versions", edit: func(c *CustomResourceDefinition) { c.Spec.Versions[0].Storage = true },
			fields: []string{"spec.versions"}, detail: "exactly one version marked as storage"},
		{name: "duplicate versions", edit: func(c *CustomResourceDefinition) { c.Spec.Versions[0].Name = "v1" },
			fields: []string{"spec.versions"}, detail: "unique version names"},
		{name: "version name not a DNS-1035 label", edit: func(c *CustomResourceDefinition) { c.Spec.Versions[0].Name = "V1Beta1" },
			fields: []string{"spec.versions[0].name"}},
		{name: "schema required", edit: func(c *CustomResourceDefinition) { c.Spec.Versions[0].Schema = nil },
			fields: []string{"spec.versions[0].schema.openAPIV3Schema"}, detail: "schemas are required"},
		{name: "plural uppercase", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Plural, c.Name = "Widgets", "Widgets.example.com" },
			fields: []string{"metadata.name", "spec.names.plural"}},
		{name: "singular with a dot", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Singular = "wid.get" },
			fields: []string{"spec.names.singular"}},
		{name: "kind may be mixed case", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Kind = "WidGet" }},
		{name: "kind with a dash in front", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Kind = "-Widget" },
			fields: []string{"spec.names.kind"}, detail: "may have mixed case"},
		{name: "kind required", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Kind = "" },
			fields: []string{"spec.names.kind"}},
		{name: "listKind equals kind", edit: func(c *CustomResourceDefinition) { c.Spec.Names.ListKind = "Widget" },
			fields: []string{"spec.names.listKind"}, detail: "may not be the same"},
		{name: "short name invalid", edit: func(c *CustomResourceDefinition) { c.Spec.Names.ShortNames = []string{"w_d"} },
			fields: []string{"spec.names.shortNames[0]"}},
		{name: "category invalid", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Categories = []string{"All"} },
			fields: []string{"spec.names.categories[0]"}},
		{name: "webhook conversion refused", edit: func(c *CustomResourceDefinition) {
			c.Spec.Conversion = &CustomResourceConversion{Strategy: WebhookConverter, Webhook: json.RawMessage(`{"clientConfig":{"url":"https://x"}}`)}
		}, fields: []string{"spec.conversion.strategy"}, detail: "Webhook conversion is not supported"},
		{name: "conversion strategy unknown", edit: func(c *CustomResourceDefinition) {
			c.Spec.Conversion = &CustomResourceConversion{Strategy: "Magic"}
		}, fields: []string{"spec.conversion.strategy"}},
		{name: "webhook set with None", edit: func(c *CustomResourceDefinition) {
			c.Spec.Conversion = &CustomResourceConversion{Strategy: NoneConverter, Webhook: json.RawMessage(`{}`)}
		}, fields: []string{"spec.conversion.webhook"}},
		{name: "preserveUnknownFields", edit: func(c *CustomResourceDefinition) { c.Spec.PreserveUnknownFields = true },
			fields: []string{"spec.preserveUnknownFields"}},
		{name: "printer column type", edit: func(c *CustomResourceDefinition) {
			c.Spec.Versions[1].AdditionalPrinterColumns = []CustomResourceColumnDefinition{{Name: "Size", Type: "int", JSONPath: ".spec.size"}}
		}, fields: []string{"spec.versions[1].additionalPrinterColumns[0].type"}},
		{name: "selectable fields", edit: func(c *CustomResourceDefinition) {
			c.Spec.Versions[1].SelectableFields = []SelectableField{{JSONPath: ".spec.color"}, {JSONPath: ".spec.size"}}
		}},
		{name: "selectable field not a simple path", edit: func(c *CustomResourceDefinition) {
			c.Spec.Versions[1].SelectableFields = []SelectableField{{JSONPath: ".spec.items[*].name"}, {JSONPath: ""}}
		}, fields: []string{"spec.versions[1].selectableFields[0].jsonPath", "spec.versions[1].selectableFields[1].jsonPath"}, detail: "simple json path"},
		{name: "selectable field twice", edit: func(c *CustomResourceDefinition) {
			c.Spec.Versions[1].SelectableFields = []SelectableField{{JSONPath: ".spec.color"}, {JSONPath: ".spec.color"}}
		}, fields: []string{"spec.versions[1].selectableFields[1].jsonPath"}},
		{name: "too many selectable fields", edit: func(c *CustomResourceDefinition) {
			for i := range 9 {
				c.Spec.Versions[1].SelectableFields = append(c.Spec.Versions[1].SelectableFields, SelectableField{JSONPath: ".spec.f" + string(rune('a'+i))})
			}
		}, fields: []string{"spec.versions[1].selectableFields"}},
		{name: "scale", edit: func(c *CustomResourceDefinition) {
			sel := ".status.selector"
			c.Spec.Versions[1].Subresources.Scale = &CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &sel}
		}},
		{name: "scale paths outside spec and status", edit: func(c *CustomResourceDefinition) {
			sel := ".metadata.labels"
			c.Spec.Versions[1].Subresources.Scale = &CustomResourceSubresourceScale{SpecReplicasPath: ".status.replicas", StatusReplicasPath: "", LabelSelectorPath: &sel}
		}, fields: []string{"spec.versions[1].subresources.scale.specReplicasPath", "spec.versions[1].subresources.scale.statusReplicasPath",
			"spec.versions[1].subresources.scale.labelSelectorPath"}, detail: "should be a json path under .spec"},
		{name: "printer column jsonPath", edit: func(c *CustomResourceDefinition) {
			c.Spec.Versions[1].AdditionalPrinterColumns = []CustomResourceColumnDefinition{{Name: "Size", Type: "integer", JSONPath: ".spec[size"}}
		}, fields: []string{"spec.versions[1].additionalPrinterColumns[0].jsonPath"}, detail: "simple json path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validCRD()
			tc.edit(c)
			errs := ValidateCRD(c, reserved)
			checkErrs(t, errs, tc.fields, tc.detail)
		})
	}
}

func TestValidateCRDUpdate(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(c *CustomResourceDefinition)
		fields []string
	}{
		{name: "labels may change", edit: func(c *CustomResourceDefinition) { c.Labels = map[string]string{"a": "b"} }},
		{name: "a version may be added", edit: func(c *CustomResourceDefinition) {
			v := c.Spec.Versions[0]
			v.Name = "v2"
			c.Spec.Versions = append(c.Spec.Versions, v)
		}},
		{name: "scope immutable", edit: func(c *CustomResourceDefinition) { c.Spec.Scope = ClusterScoped }, fields: []string{"spec.scope"}},
		{name: "kind immutable", edit: func(c *CustomResourceDefinition) { c.Spec.Names.Kind = "Gadget" }, fields: []string{"spec.names.kind"}},
		{name: "stored version removed", edit: func(c *CustomResourceDefinition) {
			c.Spec.Versions = c.Spec.Versions[:1]
			c.Spec.Versions[0].Storage = true
		}, fields: []string{"status.storedVersions[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validCRD()
			SetStatus(old, testTime)
			c := validCRD()
			c.Status = old.Status
			tc.edit(c)
			checkErrs(t, ValidateCRDUpdate(c, old, nil), tc.fields, "")
		})
	}
}

func checkErrs(t *testing.T, errs field.ErrorList, fields []string, detail string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	if strings.Join(got, " ") != strings.Join(fields, " ") {
		t.Fatalf("error fields = %q, want %q (%v)", got, fields, errs)
	}
	if detail != "" && !strings.Contains(errs[0].Error(), detail) {
		t.Errorf("error %q does not say %q", errs[0].Error(), detail)
	}
}
