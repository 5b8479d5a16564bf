package ipalloc

import "errors"

// Allocation errors. Their text is Kubernetes' wording, which the API server
// puts in its Status messages unchanged (it adds "failed to allocate IP
// <ns/name>: " in front of ErrFull); test them with errors.Is.
var (
	// ErrNotInRange: the address is outside the usable range. Allocate wraps
	// it as "provided IP is not in the valid range. The range of valid IPs
	// is <cidr>".
	ErrNotInRange = errors.New("provided IP is not in the valid range")
	// ErrAllocated: the address is already taken.
	ErrAllocated = errors.New("provided IP is already allocated")
	// ErrFull: no free address is left.
	ErrFull = errors.New("range is full")
)
