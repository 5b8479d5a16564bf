// Package apiextensions serves CustomResourceDefinitions
// (apiextensions.k8s.io/v1) and the custom resources they define, behaving
// as upstream kube-apiserver's apiextensions-apiserver does for what is
// implemented here; where this doc is silent, upstream's behaviour is the
// rule and a difference is a bug.
//
// # Pieces
//
//   - CRDResource is the resource table entry of customresourcedefinitions
//     (cluster-scoped, short names crd and crds, category api-extensions,
//     status subresource; Table columns NAME and CREATED AT, as
//     kube-apiserver's): stored and served by package apiserver like any
//     built-in resource (CRUD, list, watch, patch, selectors).
//   - ResourceInfos turns one definition into the resource table entries of
//     its served versions; Object and ObjectWithStatus hold custom objects.
//   - Registry keeps the API server's custom resources
//     (apiserver.Server.SetCustomResources) equal to the stored definitions:
//     its Hook syncs after every committed write of a definition, before the
//     response is sent, and Run syncs again on every change the store
//     reports. A definition is therefore in discovery when its create
//     returns, and gone when its delete returns.
//
// # Validation of a definition (422 Invalid, one cause per field path)
//
// As upstream's ValidateCustomResourceDefinition:
//
//   - metadata.name must be spec.names.plural + "." + spec.group (and a DNS
//     subdomain).
//   - spec.group is required, a DNS subdomain with at least one dot; a group
//     ending in k8s.io or kubernetes.io needs the annotation
//     api-approved.kubernetes.io.
//   - spec.scope is required, Namespaced or Cluster.
//   - spec.versions: at least one; names are unique DNS-1035 labels;
//     exactly one has storage: true; each has a
//     schema.openAPIV3Schema ("schemas are required" in v1);
//     deprecationWarning only on a deprecated version.
//   - spec.names: plural, singular, kind and listKind required (singular
//     and listKind defaulted first: the lowercased kind, kind + "List");
//     plural, singular, short names and categories are DNS-1035 labels
//     (lowercase), kind and listKind are once lowercased; kind and
//     listKind differ.
//   - spec.conversion.strategy defaults to None; Webhook is refused
//     (Forbidden on spec.conversion.strategy: this server has no webhook
//     client), and webhook may not be set with None.
//   - spec.preserveUnknownFields: true is refused, as in v1.
//   - selectableFields: at most 8 per version, each jsonPath a simple
//     path of field names (".spec.color"), no path twice. That the path
//     names a string, integer or boolean of the schema is not checked (the
//     schema is not read, below).
//   - additionalPrinterColumns need name, a jsonPath that parses and a type
//     among integer, number, string, boolean, date.
//   - On update, spec.group, spec.names.plural, spec.names.kind and
//     spec.scope are immutable (every served definition is established),
//     and each status.storedVersions entry must stay in spec.versions.
//
// Two rules are this server's, not upstream's: a group served by built-in
// resources is refused (upstream serves the built-in one and the
// definition never becomes established), and a definition whose plural,
// singular, kind, listKind or a short name another definition of the same
// group already uses is refused, naming the field (upstream accepts it
// with NamesAccepted False and serves nothing).
//
// # Status
//
// The server sets the status as kube-apiserver's controllers do once a
// definition is served, but at once, in the write itself: acceptedNames is
// spec.names, the conditions NamesAccepted (reason NoConflicts) and
// Established (reason InitialNamesAccepted) are True, and the storage
// version is added to storedVersions (never removed but through /status).
// The main resource ignores a client's status; /status changes status only.
//
// # Custom objects
//
// A served version is served at /apis/<group>/<version>[/namespaces/<ns>]/
// <plural>[/<name>] with every verb of a built-in resource (get, list,
// watch, create, update, patch: JSON merge patch and JSON patch, a
// strategic merge patch being 415 as upstream answers for custom
// resources; delete, deletecollection), label selectors and the
// field selectors metadata.name, metadata.namespace and the version's
// selectableFields (named by their JSONPath without the leading dot,
// "spec.color"; a string, an integer or a boolean matches as text, any
// other value or none as ""). resourceVersion,
// uid, creationTimestamp and generation are set as for built-in objects;
// generation grows when anything outside metadata (and outside status
// when the version has the status subresource) changes. An unserved
// version is 404 and absent from discovery.
//
// Every version of a definition shares one key
// (/registry/<group>/<plural>/[<namespace>/]<name>); objects are stored
// with the storage version's apiVersion and every read or write answer
// carries the apiVersion of the version asked for: conversion None.
//
// With the status subresource (spec.versions[*].subresources.status) the
// main resource keeps the stored status and /status keeps everything but
// status and metadata it may change; without it, status is an ordinary
// field. With the scale subresource, /scale is an autoscaling/v1 Scale:
// spec.replicas and status.replicas read from specReplicasPath and
// statusReplicasPath (0 when absent or not an integer), status.selector the
// string at labelSelectorPath; a PUT or PATCH of it writes
// specReplicasPath only. Those paths are simple JSONPaths under .spec,
// .status, and either.
//
// Deleting a definition deletes all its objects in the same transaction
// (upstream deletes them one by one behind the finalizer
// customresourcecleanup.apiextensions.k8s.io; objects' own finalizers are
// not waited for here). Every write of a custom object checks, in its own
// transaction, that the definition it was served for is still stored with
// the same uid (else 404 NotFound naming the definition), so a request that
// began before the deletion (or before the definition was deleted and
// created again) leaves no object behind.
//
// Invariant: no custom object is stored without the definition, by uid,
// that it was written under.
//
// # Not yet enforced
//
// spec.versions[*].schema.openAPIV3Schema is accepted and stored but not
// enforced: objects are not validated against it, unknown fields are not
// pruned, defaults are not applied, and custom resources are not in the
// OpenAPI documents. Custom objects are decoded strictly only as JSON (a
// duplicate or misplaced field in metadata is not reported).
//
// # Tables (kubectl get)
//
// A version with additionalPrinterColumns has the Table upstream's table
// convertor builds: Name, then each column in order (no Age unless one is
// listed), a cell being the column's JSONPath's first value: printed for
// a string column, kept for integer, number and boolean when it has that
// type, the age of an RFC 3339 timestamp for a date, empty when missing
// or of another type. A version without columns has Name and Age.
package apiextensions
