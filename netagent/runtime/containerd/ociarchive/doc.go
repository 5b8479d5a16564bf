// Package ociarchive writes container image archives from local files,
// without a registry or a build tool: an OCI image layout (as `ctr image
// import` and `skiff image import` read it) or a docker-save archive, each
// holding one image of a single uncompressed layer. Skiff uses it to package
// its own static binary (`skiff netexec`, the test workload) as an image for
// the containerd runtime's tests and demos.
//
// # Invariants
//
//   - The output is deterministic: the same Image gives the same bytes
//     (file times are Image.Created, default the Unix epoch; owners are
//     root), so the image's digest is stable.
//   - The layer holds the given files and their parent directories; every
//     path is cleaned and relative to the image root; a path that escapes
//     the root ("..") is an error.
//   - The OCI layout names the image with both the
//     io.containerd.image.name (the full reference) and the
//     org.opencontainers.image.ref.name (the tag) annotations; the docker
//     archive lists it in RepoTags.
package ociarchive
