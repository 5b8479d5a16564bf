package apiserver

import "github.com/skiff-dev/skiff/api"

// NewStatus builds a Status error with any code and reason, for callers
// outside this package (the patch adapter) whose errors have no named
// constructor.
func NewStatus(code int, reason api.StatusReason, msg string) *StatusError {
	return newStatusError(code, reason, msg, nil)
}
