package apiextensions

import (
	"encoding/json"

	"github.com/skiff-dev/skiff/api"
)

// Group and Version of the CustomResourceDefinition kind.
const (
	Group   = "apiextensions.k8s.io"
	Version = "v1"
)

// Scopes of a custom resource.
const (
	NamespaceScoped = "Namespaced"
	ClusterScoped   = "Cluster"
)

// Conversion strategies.
const (
	NoneConverter    = "None"
	WebhookConverter = "Webhook"
)

// Condition types of a CustomResourceDefinition.
const (
	Established   = "Established"
	NamesAccepted = "NamesAccepted"
)

// CustomResourceDefinition is apiextensions.k8s.io/v1
// CustomResourceDefinition: a resource served for as long as it exists.
type CustomResourceDefinition struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           CustomResourceDefinitionSpec   `json:"spec"`
	Status         CustomResourceDefinitionStatus `json:"status,omitempty"`
}

// CustomResourceDefinitionSpec is how the resource is named and served.
type CustomResourceDefinitionSpec struct {
	Group                 string                            `json:"group"`
	Names                 CustomResourceDefinitionNames     `json:"names"`
	Scope                 string                            `json:"scope"`
	Versions              []CustomResourceDefinitionVersion `json:"versions"`
	Conversion            *CustomResourceConversion         `json:"conversion,omitempty"`
	PreserveUnknownFields bool                              `json:"preserveUnknownFields,omitempty"`
}

// CustomResourceDefinitionNames are the names of the resource.
type CustomResourceDefinitionNames struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// CustomResourceDefinitionVersion is one version of the resource.
type CustomResourceDefinitionVersion struct {
	Name                     string                           `json:"name"`
	Served                   bool                             `json:"served"`
	Storage                  bool                             `json:"storage"`
	Deprecated               bool                             `json:"deprecated,omitempty"`
	DeprecationWarning       *string                          `json:"deprecationWarning,omitempty"`
	Schema                   *CustomResourceValidation        `json:"schema,omitempty"`
	Subresources             *CustomResourceSubresources      `json:"subresources,omitempty"`
	AdditionalPrinterColumns []CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`
	SelectableFields         []SelectableField                `json:"selectableFields,omitempty"`
}

// CustomResourceValidation holds the version's schema, stored and not yet
// enforced (package doc).
type CustomResourceValidation struct {
	OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema,omitempty"`
}

// CustomResourceSubresources are the version's status and scale
// subresources.
type CustomResourceSubresources struct {
	Status *struct{}                       `json:"status,omitempty"`
	Scale  *CustomResourceSubresourceScale `json:"scale,omitempty"`
}

// CustomResourceSubresourceScale says where the scale subresource reads
// and writes (simple JSONPaths).
type CustomResourceSubresourceScale struct {
	SpecReplicasPath   string  `json:"specReplicasPath"`
	StatusReplicasPath string  `json:"statusReplicasPath"`
	LabelSelectorPath  *string `json:"labelSelectorPath,omitempty"`
}

// CustomResourceColumnDefinition is a column of the version's Table.
type CustomResourceColumnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// SelectableField is a field a field selector may name.
type SelectableField struct {
	JSONPath string `json:"jsonPath"`
}

// CustomResourceConversion is how objects are converted between versions.
type CustomResourceConversion struct {
	Strategy string          `json:"strategy"`
	Webhook  json.RawMessage `json:"webhook,omitempty"`
}

// CustomResourceDefinitionStatus is what the server accepted and stored.
type CustomResourceDefinitionStatus struct {
	Conditions     []CustomResourceDefinitionCondition `json:"conditions,omitempty"`
	AcceptedNames  CustomResourceDefinitionNames       `json:"acceptedNames"`
	StoredVersions []string                            `json:"storedVersions"`
}

// CustomResourceDefinitionCondition is one condition of the definition.
type CustomResourceDefinitionCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime *api.Time `json:"lastTransitionTime,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
}

// CustomResourceDefinitionList is a list of CustomResourceDefinitions.
type CustomResourceDefinitionList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []CustomResourceDefinition `json:"items"`
}

// GetItems implements api.ListObject.
func (l *CustomResourceDefinitionList) GetItems() []api.Object {
	out := make([]api.Object, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

// SetItems implements api.ListObject.
func (l *CustomResourceDefinitionList) SetItems(items []api.Object) error {
	l.Items = make([]CustomResourceDefinition, 0, len(items))
	for _, o := range items {
		c, ok := o.(*CustomResourceDefinition)
		if !ok {
			return errWrongType(o)
		}
		l.Items = append(l.Items, *c)
	}
	return nil
}

// StorageVersion is the name of the version marked storage; "" when none.
func (c *CustomResourceDefinition) StorageVersion() string {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}
