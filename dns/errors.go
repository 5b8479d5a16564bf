package dns

import "errors"

// Sentinel errors of package dns.
var (
	// ErrInvalidObject: a Store update had an empty or malformed namespace or
	// name (one that cannot appear in a DNS name).
	ErrInvalidObject = errors.New("invalid object")
	// ErrInvalidConfig: a Config field is out of range.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrForwardLoop: an upstream is the server's own listening address.
	ErrForwardLoop = errors.New("upstream is this server")
	// ErrNoUpstream: no upstream answered a forwarded query.
	ErrNoUpstream = errors.New("no upstream answered")
)
