package protobuf

import "errors"

// Sentinel errors; ToJSON wraps them with what failed and where.
var (
	// ErrMagic: the body does not start with "k8s\x00".
	ErrMagic = errors.New("protobuf: not a Kubernetes protobuf body (no k8s\\x00 prefix)")
	// ErrUnsupportedKind: no table decodes the envelope's apiVersion and kind.
	ErrUnsupportedKind = errors.New("protobuf: kind not decodable from protobuf")
	// ErrMalformed: the wire data is not valid protobuf for the kind.
	ErrMalformed = errors.New("protobuf: malformed message")
	// ErrUnknownField: a field number the tables do not know (strict only).
	ErrUnknownField = errors.New("protobuf: unknown field")
)
