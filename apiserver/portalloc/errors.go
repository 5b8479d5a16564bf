package portalloc

import "errors"

// Allocation errors. Their text is Kubernetes' wording, which the API server
// puts in its Status messages unchanged; test them with errors.Is.
var (
	// ErrNotInRange: the port is outside the range. Allocate wraps it as
	// "provided port is not in the valid range. The range of valid ports is
	// 30000-32767".
	ErrNotInRange = errors.New("provided port is not in the valid range")
	// ErrAllocated: the port is already taken.
	ErrAllocated = errors.New("provided port is already allocated")
	// ErrFull: no free port is left.
	ErrFull = errors.New("range is full")
)
