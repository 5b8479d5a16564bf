// Package logdriver is the containerd runtime's logging binary: `skiff
// containerd-log <log file>`, which a containerd shim starts (the
// binary:// log scheme) with a container's stdout and stderr pipes and
// which appends both to the container's one log file.
//
// It is a package of its own, using only the standard library, so that
// the skiff binary can serve it even when built without the containerd
// runtime (-tags skiff_nocontainerd).
//
// # Invariants
//
//   - Readiness is signalled only after the log file is open, so a
//     container never writes before its log exists.
//   - Both streams go through one file; each chunk read from a pipe is one
//     write(2) under a mutex, so a write of up to 4 KiB is never
//     interleaved with the other stream.
//   - It keeps draining both pipes after a write error (a container never
//     blocks on a full pipe) and returns the first error at the end.
package logdriver
