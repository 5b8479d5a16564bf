// Package api holds Skiff's resource types in the Kubernetes JSON shape,
// their defaults and validation, and the resource table (Resources) the API
// server serves.
//
// # Invariants
//
//   - JSON field names are exactly Kubernetes' names, so users' manifests
//     decode unchanged; a field Skiff does not know is an error, never
//     silently dropped (decoding is strict, see package api/codec).
//   - Validation reports every error with its field path (package api/field).
//   - Defaulting is idempotent: defaulting a defaulted object changes nothing.
package api
