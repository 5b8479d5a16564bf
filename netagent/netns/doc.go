// Package netns creates, deletes and enters named Linux network namespaces.
//
// A named network namespace is a file in a directory (by default
// /run/netns, as iproute2 keeps them; Skiff's agent uses a directory in its
// data dir) on which the namespace is bind-mounted. The bind mount keeps the
// namespace alive with no process in it; unmounting it and removing the file
// lets the kernel free it once nothing else holds it.
//
// # Invariants
//
//   - Create never leaves the calling goroutine's thread in another network
//     namespace: it unshares on a locked OS thread and switches back before
//     unlocking. If switching back fails, the thread stays locked, so the Go
//     runtime discards it when the goroutine exits rather than reuse a
//     thread in the wrong namespace. Do follows the same rule.
//   - Create fails with an error wrapping fs.ErrExist when the name is taken;
//     it never mounts over an existing namespace.
//   - Delete is idempotent: a missing file, or a file that is no longer a
//     mount point (after a reboot of a persistent directory), is not an
//     error.
//   - A file that exists but holds no namespace is "stale": Live reports
//     false for it, List still lists it, so that a caller can clean up what
//     belonged to it.
//
// # Caveats
//
// Code run by Do must not start goroutines that expect to be in the
// namespace: only the locked thread is. Processes exec'd from inside Do
// (os/exec forks from the calling thread) inherit the namespace, which is
// how CNI plugins are run inside a node namespace in tests.
//
// Mount namespaces created after a namespace file is mounted hold their own
// copy of the mount; when the directory is not a shared mount, Delete in
// the agent's mount namespace does not unmount those copies, and the kernel
// frees the namespace only when they go too. Runtimes that make private
// mount namespaces for pods therefore create them from the pod's own
// network namespace path after Create, and they die with the pod.
package netns
