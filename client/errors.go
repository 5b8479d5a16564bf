package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// ErrInvalidRequest is wrapped by errors the client returns before sending
// anything: a bad name or namespace, a missing object, a bad Config.
var ErrInvalidRequest = errors.New("invalid request")

// APIError is a response outside 2xx, holding the server's Status.
type APIError struct {
	Status api.Status
}

// Error implements error.
func (e *APIError) Error() string {
	msg := e.Status.Message
	if msg == "" {
		msg = http.StatusText(int(e.Status.Code))
	}
	if e.Status.Reason != "" {
		return fmt.Sprintf("client: %s (%d %s)", msg, e.Status.Code, e.Status.Reason)
	}
	return fmt.Sprintf("client: %s (%d)", msg, e.Status.Code)
}

// NewAPIError builds an APIError from an HTTP code, a reason and a message,
// shaped as the server would send it. Fakes of the client use it.
func NewAPIError(code int, reason api.StatusReason, format string, args ...any) *APIError {
	return &APIError{Status: api.Status{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   "Failure",
		Message:  fmt.Sprintf(format, args...),
		Reason:   reason,
		Code:     int32(code),
	}}
}

// reasonForCode is the reason Kubernetes clients assume when a failed
// response carries no Status.
var reasonForCode = map[int]api.StatusReason{
	http.StatusBadRequest:            api.StatusReasonBadRequest,
	http.StatusUnauthorized:          api.StatusReasonUnauthorized,
	http.StatusForbidden:             api.StatusReasonForbidden,
	http.StatusNotFound:              api.StatusReasonNotFound,
	http.StatusMethodNotAllowed:      api.StatusReasonMethodNotAllowed,
	http.StatusNotAcceptable:         api.StatusReasonNotAcceptable,
	http.StatusConflict:              api.StatusReasonConflict,
	http.StatusGone:                  api.StatusReasonGone,
	http.StatusRequestEntityTooLarge: api.StatusReasonRequestEntityTooLarge,
	http.StatusUnsupportedMediaType:  api.StatusReasonUnsupportedMediaType,
	http.StatusUnprocessableEntity:   api.StatusReasonInvalid,
	http.StatusInternalServerError:   api.StatusReasonInternalError,
	http.StatusServiceUnavailable:    api.StatusReasonServiceUnavailable,
	http.StatusGatewayTimeout:        api.StatusReasonTimeout,
}

// errorFromResponse turns a failed response's code and body into an APIError.
func errorFromResponse(code int, body []byte) *APIError {
	var st api.Status
	if err := json.Unmarshal(body, &st); err == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		if st.Reason == "" {
			st.Reason = reasonForCode[int(st.Code)]
		}
		return &APIError{Status: st}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 512 {
		msg = msg[:512]
	}
	if msg == "" {
		msg = http.StatusText(code)
	}
	return NewAPIError(code, reasonForCode[code], "%s", msg)
}

// knownReasons are the reasons whose meaning does not depend on the code.
var knownReasons = map[api.StatusReason]bool{
	api.StatusReasonNotFound:              true,
	api.StatusReasonAlreadyExists:         true,
	api.StatusReasonConflict:              true,
	api.StatusReasonInvalid:               true,
	api.StatusReasonBadRequest:            true,
	api.StatusReasonUnauthorized:          true,
	api.StatusReasonForbidden:             true,
	api.StatusReasonGone:                  true,
	api.StatusReasonExpired:               true,
	api.StatusReasonInternalError:         true,
	api.StatusReasonMethodNotAllowed:      true,
	api.StatusReasonUnsupportedMediaType:  true,
	api.StatusReasonRequestEntityTooLarge: true,
	api.StatusReasonNotAcceptable:         true,
	api.StatusReasonTimeout:               true,
	api.StatusReasonServiceUnavailable:    true,
}

// is reports whether err is an APIError with reason, or with an unknown
// reason and the code that goes with reason (as Kubernetes' helpers do).
func is(err error, reason api.StatusReason, code int) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.Status.Reason == reason {
		return true
	}
	return !knownReasons[ae.Status.Reason] && int(ae.Status.Code) == code
}

// ReasonForError returns the Status reason of an APIError, "" otherwise.
func ReasonForError(err error) api.StatusReason {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status.Reason
	}
	return ""
}

// IsNotFound reports a 404 NotFound.
func IsNotFound(err error) bool { return is(err, api.StatusReasonNotFound, http.StatusNotFound) }

// IsConflict reports a 409 Conflict (a stale resourceVersion or a failed
// precondition), not AlreadyExists.
func IsConflict(err error) bool { return is(err, api.StatusReasonConflict, http.StatusConflict) }

// IsAlreadyExists reports a 409 AlreadyExists.
func IsAlreadyExists(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status.Reason == api.StatusReasonAlreadyExists
}

// IsGone reports a 410 Gone (a watch or continue token from a compacted
// revision); Expired counts too, as Kubernetes uses it for continue tokens.
func IsGone(err error) bool {
	return is(err, api.StatusReasonGone, http.StatusGone) || ReasonForError(err) == api.StatusReasonExpired
}

// IsInvalid reports a 422 Invalid.
func IsInvalid(err error) bool {
	return is(err, api.StatusReasonInvalid, http.StatusUnprocessableEntity)
}

// IsBadRequest reports a 400 BadRequest.
func IsBadRequest(err error) bool {
	return is(err, api.StatusReasonBadRequest, http.StatusBadRequest)
}

// IsForbidden reports a 403 Forbidden.
func IsForbidden(err error) bool { return is(err, api.StatusReasonForbidden, http.StatusForbidden) }

// IsUnauthorized reports a 401 Unauthorized.
func IsUnauthorized(err error) bool {
	return is(err, api.StatusReasonUnauthorized, http.StatusUnauthorized)
}
