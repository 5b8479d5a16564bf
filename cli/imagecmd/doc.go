// Package imagecmd implements the `skiff image` verbs (import, ls, pull,
// rm, build) on the containerd runtime's image methods
// (netagent/runtime/containerd) and the archive writer
// (netagent/runtime/containerd/ociarchive); cli declares the
// commands and cmd/skiff wires the two.
//
// # Invariants
//
//   - It talks to the containerd it finds: --containerd-socket, else the
//     default socket, else an agent-managed daemon under a --data-dir; it
//     never starts one.
//   - Output is one line per image for import and pull (the name first),
//     a table for ls; progress goes to the same writer, before the result.
//   - build --self refuses a dynamically linked skiff (it could not run
//     in an image without a libc); its PATH ends in / (SelfPath), so the
//     command `skiff` in a pod finds /skiff.
package imagecmd
