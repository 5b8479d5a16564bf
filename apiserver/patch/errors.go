package patch

import (
	"errors"
	"net/http"
)

// Sentinel errors. Apply wraps one of them, with detail, in every error it
// returns, so callers test with errors.Is and map to an HTTP status with
// StatusCode.
var (
	// ErrUnsupportedType: the Content-Type names no patch type Skiff
	// implements (415 Unsupported Media Type).
	ErrUnsupportedType = errors.New("unsupported patch type")

	// ErrInvalidPatch: the patch body is malformed: not JSON, not the shape
	// its type needs (an object for merge and strategic merge patches, a list
	// of operations for a JSON patch), an unknown $patch directive, a list
	// element without its merge key (400 Bad Request, as Kubernetes).
	ErrInvalidPatch = errors.New("invalid patch")

	// ErrTestFailed: a JSON-patch "test" operation did not match the
	// document (422 Unprocessable Entity, as Kubernetes).
	ErrTestFailed = errors.New("json patch test operation failed")

	// ErrCannotApply: a well-formed JSON patch cannot be applied to this
	// document: a path that does not exist, an index out of range, a result
	// that is no longer a JSON object (422 Unprocessable Entity, as
	// Kubernetes).
	ErrCannotApply = errors.New("patch cannot be applied")

	// ErrInvalidDocument: the original document is not a JSON object. The
	// server stores only objects it has encoded itself, so this is a
	// server fault (500 Internal Server Error).
	ErrInvalidDocument = errors.New("original document is not a JSON object")
)

// StatusCode maps an error returned by Apply or ParseContentType's caller to
// the HTTP status Kubernetes uses for it; 500 for anything else.
//
//	ErrUnsupportedType  415 UnsupportedMediaType
//	ErrInvalidPatch     400 BadRequest
//	ErrTestFailed       422 Invalid
//	ErrCannotApply      422 Invalid
//	ErrInvalidDocument  500 InternalError
func StatusCode(err error) int {
	switch {
	case errors.Is(err, ErrUnsupportedType):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, ErrInvalidPatch):
		return http.StatusBadRequest
	case errors.Is(err, ErrTestFailed), errors.Is(err, ErrCannotApply):
		return http.StatusUnprocessableEntity
	default:
		return http.StatusInternalServerError
	}
}
