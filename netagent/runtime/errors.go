package runtime

import "errors"

// Errors every Runtime returns (wrapped) so callers can tell them apart with
// errors.Is.
var (
	// ErrNotFound: no container with that ID.
	ErrNotFound = errors.New("container not found")
	// ErrNotRunning: the operation (Exec) needs a running container.
	ErrNotRunning = errors.New("container is not running")
	// ErrNoStdin: the container was not started with stdin (its spec
	// has no stdin: true), so an attach cannot write to it.
	ErrNoStdin = errors.New("container was not started with stdin")
)
