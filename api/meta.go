package api

import (
	"time"

	"github.com/skiff-dev/skiff/api/field"
)

// TypeMeta is apiVersion and kind, inlined into every object.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// GetTypeMeta gives access to an object's TypeMeta.
func (t *TypeMeta) GetTypeMeta() *TypeMeta { return t }

// ObjectMeta is metadata every stored object carries.
type ObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	UID                        string            `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	CreationTimestamp          Time              `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          *Time             `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	OwnerReferences            []OwnerReference  `json:"ownerReferences,omitempty"`
	Finalizers                 []string          `json:"finalizers,omitempty"`
	ManagedFields              []ManagedField    `json:"managedFields,omitempty"`
}

// GetObjectMeta gives access to an object's ObjectMeta.
func (m *ObjectMeta) GetObjectMeta() *ObjectMeta { return m }

// ManagedField is accepted for compatibility with clients that send it
// (kubectl); Skiff does not track field managers.
type ManagedField struct {
	Manager    string         `json:"manager,omitempty"`
	Operation  string         `json:"operation,omitempty"`
	APIVersion string         `json:"apiVersion,omitempty"`
	Time       *Time          `json:"time,omitempty"`
	FieldsType string         `json:"fieldsType,omitempty"`
	FieldsV1   map[string]any `json:"fieldsV1,omitempty"`
	// Subresource is the subresource the manager wrote through.
	Subresource string `json:"subresource,omitempty"`
}

// OwnerReference points from a dependent to its owner (garbage collection).
type OwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

// ListMeta is the metadata of a list.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// Object is any stored API object.
type Object interface {
	GetTypeMeta() *TypeMeta
	GetObjectMeta() *ObjectMeta
}

// Status is the body of every error response (and of some successes).
type Status struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata"`
	Status   string         `json:"status,omitempty"` // Success or Failure
	Message  string         `json:"message,omitempty"`
	Reason   StatusReason   `json:"reason,omitempty"`
	Details  *StatusDetails `json:"details,omitempty"`
	Code     int32          `json:"code,omitempty"`
}

// StatusReason is the machine-readable reason of a Status.
type StatusReason string

const (
	StatusReasonNotFound              StatusReason = "NotFound"
	StatusReasonAlreadyExists         StatusReason = "AlreadyExists"
	StatusReasonConflict              StatusReason = "Conflict"
	StatusReasonInvalid               StatusReason = "Invalid"
	StatusReasonBadRequest            StatusReason = "BadRequest"
	StatusReasonUnauthorized          StatusReason = "Unauthorized"
	StatusReasonForbidden             StatusReason = "Forbidden"
	StatusReasonGone                  StatusReason = "Gone"
	StatusReasonExpired               StatusReason = "Expired"
	StatusReasonInternalError         StatusReason = "InternalError"
	StatusReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"
	StatusReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"
	StatusReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge"
	StatusReasonNotAcceptable         StatusReason = "NotAcceptable"
	StatusReasonTimeout               StatusReason = "Timeout"
	StatusReasonServiceUnavailable    StatusReason = "ServiceUnavailable"
	StatusReasonTooManyRequests       StatusReason = "TooManyRequests"
)

// StatusDetails names the object a Status is about and lists field causes.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one field-level cause.
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Conversion converts a resource between the version it is served in and
// the one it is stored in (ResourceInfo.Conversion).
type Conversion struct {
	// New returns an empty object of the served version's type.
	New func() any
	// NewList returns an empty list of the served version (its schema).
	NewList func() any
	// ToStorage converts a decoded served-version object (New's type).
	ToStorage func(any) (Object, error)
	// FromStorage converts a stored object to the served version.
	FromStorage func(Object) (any, error)
}

// ResourceInfo describes one API resource: how it is addressed, what Go type
// holds it, and how it is defaulted and validated. The API server serves
// every entry of Resources() generically.
type ResourceInfo struct {
	Group      string // "" for the core group
	Version    string // v1
	Resource   string // plural: services
	Singular   string // service
	Kind       string // Service
	ListKind   string // ServiceList
	Namespaced bool
	ShortNames []string
	// Categories are the groupings the resource belongs to ("all" makes
	// `kubectl get all` list it), served in discovery.
	Categories []string
	// Subresources served besides the main resource: status, scale, binding, log.
	Subresources []string
	// StorageVersion is the version objects are stored in when it is not
	// Version (a custom resource served in several versions, converted by
	// rewriting apiVersion: package apiserver/apiextensions); "" is Version.
	StorageVersion string
	// Conversion, when set, serves a built-in resource in Version while
	// its objects are stored in StorageVersion, as New's type: bodies are
	// decoded strictly into Conversion.New and converted with ToStorage
	// (then defaulted and validated as the stored version), answers are
	// converted with FromStorage. Without it a StorageVersion other than
	// Version only rewrites apiVersion (custom resources).
	Conversion *Conversion
	// Table, when set, is the resource's server-side Table (kubectl get)
	// instead of package printers' own: a custom resource's
	// additionalPrinterColumns.
	Table *TablePrinter
	// Scale, when set, is where the scale subresource reads and writes its
	// fields (a custom resource's subresources.scale); nil is
	// spec.replicas, status.replicas and the LabelSelector spec.selector.
	Scale *ScalePaths
	// New returns a new empty object of the resource's type.
	New func() Object
	// Default fills defaults in place (called before validation on create and update).
	Default func(Object)
	// ValidateCreate validates a new object.
	ValidateCreate func(Object) field.ErrorList
	// ValidateUpdate validates an update; old is the stored object.
	ValidateUpdate func(obj, old Object) field.ErrorList
	// Fields returns the field-selector fields of an object, e.g.
	// metadata.name, metadata.namespace, spec.nodeName, status.phase.
	Fields func(Object) map[string]string

	// NewList returns a new empty XxxList of the resource's type.
	NewList func() ListObject
	// PrepareForCreate clears what a client may not set on create, as the
	// Kubernetes strategies do: the status of resources whose status is
	// written through the status subresource, and generation (set to 1 for
	// resources that track it). Call it before Default.
	PrepareForCreate func(Object)
	// PrepareForUpdate readies an update of the main resource against the
	// stored object, before Default: it keeps the server-owned metadata
	// (PrepareObjectMetaForUpdate), keeps the stored status when the
	// resource has a status subresource, bumps generation when the spec
	// changed, and keeps a Service's allocated values
	// (PrepareServiceForUpdate).
	PrepareForUpdate func(obj, old Object)
	// PrepareForStatusUpdate readies a write to the status subresource: it
	// keeps the stored spec, labels, annotations, owner references and
	// finalizers and the server-owned metadata. Nil when the resource has
	// no status subresource.
	PrepareForStatusUpdate func(obj, old Object)
	// ValidateStatusUpdate validates a write to the status subresource.
	// Nil when the resource has no status subresource.
	ValidateStatusUpdate func(obj, old Object) field.ErrorList
}

// ScalePaths are the field paths of a custom resource's scale
// subresource, as segments (["spec", "replicas"]).
type ScalePaths struct {
	SpecReplicas, StatusReplicas []string
	// LabelSelector names a string (a serialized label selector); nil
	// when the resource has none.
	LabelSelector []string
}

// TablePrinter is a resource's Table: its columns and the cells of one
// object's row, one per column.
type TablePrinter struct {
	Columns []TableColumn
	Cells   func(obj Object, now time.Time) []any
}

// TableColumn is one column of a Table (meta.k8s.io TableColumnDefinition).
type TableColumn struct {
	Name, Type, Format, Description string
	Priority                        int32
}

// GroupVersion is "v1" for the core group, else "group/version".
func (r *ResourceInfo) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}
