// Package logtail copies a container's log file to a reader, and with
// follow keeps copying what is appended until the container's output is
// complete: the `skiff logs -f` loop that runtime/process and
// runtime/containerd share. It uses only the standard library.
//
// # Invariants
//
//   - Everything in the file when Copy starts is copied before Copy looks
//     at the container's state.
//   - The state is read before each copy, so what a container wrote
//     before it was seen exited is in the copy that follows.
//   - Copy returns once the container's output is complete (nil), ctx is
//     done (nil: the reader went away), or the state or the writer fails
//     (that error, unwrapped).
package logtail
