// Package protobuf converts Kubernetes protobuf request bodies
// (Content-Type application/vnd.kubernetes.protobuf, as client-go's typed
// clients and kubectl's create verbs send them) into the JSON the
// apiserver's strict decoder already takes, so that a protobuf body is
// checked, defaulted and validated exactly as the same object in JSON.
//
// # Wire format
//
// A body is the 4-byte magic "k8s\x00" followed by a runtime.Unknown
// message: typeMeta (1: apiVersion, kind), raw (2: the object's
// generated.proto message), contentEncoding (3) and contentType (4). The
// raw message is decoded by field tables (tables.go: field number → JSON
// name and kind) generated from the k8s.io/api Go types by
// test/kubectl-compat/cmd/prototables (`go generate`), so that no k8s.io
// module enters Skiff's. The special apimachinery messages map to their
// JSON forms: Time and MicroTime ({seconds, nanos}) to RFC 3339 strings
// (Time drops nanoseconds, as Kubernetes does), Duration to a Go duration
// string, IntOrString ({type, intVal, strVal}) to a number or string,
// Quantity ({string}) to its string, FieldsV1 and RawExtension ({raw}) to
// their raw JSON, and a map's named string lists (UserInfo's ExtraValue:
// {items}) to JSON arrays of strings.
//
// # Invariants
//
//   - Kubernetes' generated marshallers write every non-pointer field, zero
//     or not, so a zero scalar (or an empty non-pointer message) of a
//     non-pointer field is left out of the JSON, as encoding/json's
//     omitempty does; pointer fields keep their zero ("replicas: 0"). A
//     field Kubernetes knows but Skiff does not therefore reaches the
//     strict JSON decoder (and its 400 naming the field) only when set.
//   - A field number the tables do not know is an error naming the message
//     and the number when strict, and skipped otherwise.
//   - A singular field seen twice keeps its last value, as in proto; for a
//     message field that is the last message whole (no proto merge).
//     Repeated scalars may be packed or not.
//   - ToJSON never panics and bounds nesting (maxDepth) whatever the input.
package protobuf

//go:generate sh -c "cd ../../test/kubectl-compat && go run ./cmd/prototables -o ../../apiserver/protobuf/tables.go"
