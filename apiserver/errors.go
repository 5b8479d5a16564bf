package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
)

// StatusError is an error that the API server sends as a Status body with
// its HTTP code. Hooks return one to fail a request with a precise reason;
// any other error becomes a 500 InternalError.
type StatusError struct {
	status api.Status
}

// Error implements error.
func (e *StatusError) Error() string { return e.status.Message }

// Status returns the Status body (kind, apiVersion and status filled).
func (e *StatusError) Status() api.Status { return e.status }

// Code is the HTTP status code.
func (e *StatusError) Code() int { return int(e.status.Code) }

// Reason is the machine-readable reason.
func (e *StatusError) Reason() api.StatusReason { return e.status.Reason }

func newStatusError(code int, reason api.StatusReason, msg string, details *api.StatusDetails) *StatusError {
	return &StatusError{status: api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Failure",
		Message:  msg,
		Reason:   reason,
		Details:  details,
		Code:     int32(code),
	}}
}

// splitResource splits "deployments.apps" into ("apps", "deployments").
func splitResource(qualified string) (group, resource string) {
	if i := strings.IndexByte(qualified, '.'); i >= 0 {
		return qualified[i+1:], qualified[:i]
	}
	return "", qualified
}

// NewNotFound: `services "x" not found` (404). resource is "resource" or
// "resource.group".
func NewNotFound(resource, name string) *StatusError {
	g, r := splitResource(resource)
	msg := fmt.Sprintf("%s %q not found", resource, name)
	if name == "" {
		msg = resource + " not found"
	}
	return newStatusError(http.StatusNotFound, api.StatusReasonNotFound, msg,
		&api.StatusDetails{Name: name, Group: g, Kind: r})
}

// NewAlreadyExists: `services "x" already exists` (409).
func NewAlreadyExists(resource, name string) *StatusError {
	g, r := splitResource(resource)
	return newStatusError(http.StatusConflict, api.StatusReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists", resource, name),
		&api.StatusDetails{Name: name, Group: g, Kind: r})
}

// NewConflict: `Operation cannot be fulfilled on services "x": <err>` (409).
func NewConflict(resource, name string, err error) *StatusError {
	g, r := splitResource(resource)
	return newStatusError(http.StatusConflict, api.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %v", resource, name, err),
		&api.StatusDetails{Name: name, Group: g, Kind: r})
}

// errModified is the Kubernetes wording of a stale resourceVersion.
var errModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// NewInvalid: `Service "x" is invalid: [a: ..., b: ...]` (422) with one
// cause per field error. kind is "Kind" or "Kind.group".
func NewInvalid(kind, name string, errs field.ErrorList) *StatusError {
	g, k := splitResource(kind)
	causes := make([]api.StatusCause, 0, len(errs))
	for _, fe := range errs {
		causes = append(causes, api.StatusCause{Type: string(fe.Type), Message: fe.ErrorBody(), Field: fe.Field})
	}
	msg := fmt.Sprintf("%s %q is invalid", kind, name)
	if len(errs) > 0 {
		msg += ": " + errs.Error()
	}
	return newStatusError(http.StatusUnprocessableEntity, api.StatusReasonInvalid, msg,
		&api.StatusDetails{Name: name, Group: g, Kind: k, Causes: causes})
}

// NewBadRequest (400).
func NewBadRequest(msg string) *StatusError {
	return newStatusError(http.StatusBadRequest, api.StatusReasonBadRequest, msg, nil)
}

// NewForbidden: `services "x" is forbidden: <err>` (403).
func NewForbidden(resource, name string, err error) *StatusError {
	g, r := splitResource(resource)
	var msg string
	if name == "" {
		msg = fmt.Sprintf("%s is forbidden: %v", resource, err)
	} else {
		msg = fmt.Sprintf("%s %q is forbidden: %v", resource, name, err)
	}
	return newStatusError(http.StatusForbidden, api.StatusReasonForbidden, msg,
		&api.StatusDetails{Name: name, Group: g, Kind: r})
}

// NewUnauthorized (401).
func NewUnauthorized(msg string) *StatusError {
	if msg == "" {
		msg = "Unauthorized"
	}
	return newStatusError(http.StatusUnauthorized, api.StatusReasonUnauthorized, msg, nil)
}

// NewGone (410), e.g. `too old resource version: 5 (10)`.
func NewGone(msg string) *StatusError {
	return newStatusError(http.StatusGone, api.StatusReasonGone, msg, nil)
}

// NewExpired (410, reason Expired): a continue token that can no longer be served.
func NewExpired(msg string) *StatusError {
	return newStatusError(http.StatusGone, api.StatusReasonExpired, msg, nil)
}

// NewInternal (500): `Internal error occurred: <err>`.
func NewInternal(err error) *StatusError {
	return newStatusError(http.StatusInternalServerError, api.StatusReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err),
		&api.StatusDetails{Causes: []api.StatusCause{{Message: err.Error()}}})
}

// NewMethodNotAllowed (405).
func NewMethodNotAllowed(method string) *StatusError {
	return newStatusError(http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed,
		fmt.Sprintf("the server does not allow this method on the requested resource (%s)", method), nil)
}

// NewUnsupportedMediaType (415).
func NewUnsupportedMediaType(contentType string, accepted ...string) *StatusError {
	return newStatusError(http.StatusUnsupportedMediaType, api.StatusReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format (%q) - accepted media types include: %s",
			contentType, strings.Join(accepted, ", ")), nil)
}

// NewRequestEntityTooLarge (413).
func NewRequestEntityTooLarge(limit int64) *StatusError {
	return newStatusError(http.StatusRequestEntityTooLarge, api.StatusReasonRequestEntityTooLarge,
		fmt.Sprintf("Request entity too large: limit is %d", limit), nil)
}

// NewRequestTimeout (408, reason Timeout): the request's body did not
// arrive in time.
func NewRequestTimeout(msg string) *StatusError {
	return newStatusError(http.StatusRequestTimeout, api.StatusReasonTimeout, msg, nil)
}

// NewTimeout (504), e.g. a watch from a revision that has not happened yet.
func NewTimeout(msg string) *StatusError {
	return newStatusError(http.StatusGatewayTimeout, api.StatusReasonTimeout, msg, nil)
}

// NewServiceUnavailable (503).
func NewServiceUnavailable(msg string) *StatusError {
	return newStatusError(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable, msg, nil)
}

// pathNotFound is the 404 for a path that names no resource.
func pathNotFound() *StatusError {
	return newStatusError(http.StatusNotFound, api.StatusReasonNotFound,
		"the server could not find the requested resource", &api.StatusDetails{})
}

// AsStatusError returns err as a *StatusError: unchanged when it is one
// (anywhere in its chain), else a 500 InternalError.
func AsStatusError(err error) *StatusError {
	var se *StatusError
	if errors.As(err, &se) {
		return se
	}
	return NewInternal(err)
}
