// Package api holds Skiff's resource types in the Kubernetes JSON shape,
// their defaults and validation, and the resource table (Resources) the API
// server serves.
//
// # Types
//
// Every object type (Namespace, Node, Pod, Service, Event, ConfigMap,
// Secret, ServiceAccount, Deployment, StatefulSet, DaemonSet, EndpointSlice,
// ServiceCIDR, IPAddress, Lease, Job, CronJob, PriorityClass, ...) embeds
// TypeMeta inline and ObjectMeta as "metadata", so it satisfies Object; each
// has an XxxList satisfying ListObject. Helper types follow Kubernetes:
// IntOrString (a JSON number or string, with ScaledValue to resolve "25%"
// against a total), Quantity (resource amounts, kept as written and parsed
// by ParseQuantity), LabelSelector (SelectorMatches, SelectorString),
// ObjectReference, Condition, Scale, Binding, DeleteOptions, WatchEvent.
// The pod scheduling fields (affinity, topologySpreadConstraints,
// priority) are in types_scheduling.go. Fields Skiff does not model
// (volumeClaimTemplates, schedulingGates, most volume sources, ...) are deliberately absent so that strict decoding rejects
// them instead of dropping them.
//
// # Defaulting
//
// DefaultXxx fills what Kubernetes fills when a client leaves it out
// (Service type ClusterIP, port protocol TCP, targetPort = port, pod
// restartPolicy Always, probe periods, Deployment 25%/25% rolling update,
// ...). Defaulting never looks at other objects or server flags: ClusterIP
// and NodePort allocation belong to the API server. One deliberate
// difference: imagePullPolicy defaults to IfNotPresent for every image,
// ":latest" included, because Skiff nodes often run images no registry
// serves. A Secret's write-only stringData is merged into data by
// DefaultSecret, so it is validated as data and never stored. What
// Kubernetes' admission does on create only runs in PrepareForCreate: a
// new pod naming no ServiceAccount gets "default"
// (DefaultPodServiceAccount); pod templates are left as written. A new
// Job gets its generated selector and template labels there
// (PrepareJobForCreate: batch.kubernetes.io/controller-uid and job-name,
// and their legacy unprefixed forms), because they need the uid the server
// just assigned; the defaults run after it, so a Job without labels of its
// own gets its template's, generated ones included, as a Job read back from
// Kubernetes has them.
//
// # Validation
//
// ValidateXxx checks a new object and ValidateXxxUpdate an update against
// the stored object, returning every problem as a field.Error with its path
// and Kubernetes' wording (`spec.ports[0].port: Invalid value: 0: must be
// between 1 and 65535, inclusive`). The string validators
// (ValidateDNS1123Label, ValidateDNS1123Subdomain, ValidateDNS1035Label,
// ValidateQualifiedName, ValidateLabelValue, ValidatePortName, IsValidIP,
// IsValidCIDR, ...) return bare messages so other packages can reuse them.
// Where Skiff is stricter than Kubernetes it says so: SCTP ports are
// rejected as NotSupported; StatefulSet names must be DNS-1123 labels.
// A CronJob schedule is parsed with github.com/robfig/cron/v3's standard
// parser (ParseSchedule), the parser Kubernetes validates and schedules
// with, so both accept and reject the same schedules; ParseIndexes and
// FormatIndexes read and write an Indexed Job's index lists ("1,3-5,7").
//
// # Resource table
//
// Resources returns a fresh []*ResourceInfo on each call: group, version,
// names, scope, subresources and the typed functions above wrapped to take
// an Object. The API server is expected to call, on create,
// PrepareForCreate, Default, ValidateCreate; on update, PrepareForUpdate,
// Default, ValidateUpdate; on a status write, PrepareForStatusUpdate,
// Default, ValidateStatusUpdate. Lookup, LookupKind and LookupName find
// entries by resource, kind or kubectl name.
//
// # Invariants
//
//   - JSON field names are exactly Kubernetes' names, so users' manifests
//     decode unchanged; a field Skiff does not know is an error, never
//     silently dropped (the API server decodes with sigs.k8s.io/json's
//     UnmarshalStrict; the tests decode real manifests that way).
//   - Validation reports every error with its field path (package
//     api/field), in a deterministic order.
//   - Defaulting is idempotent: defaulting a defaulted object changes nothing.
//   - The package holds no mutable global state.
package api
