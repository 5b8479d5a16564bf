// Package cnitest holds stateful, validating fakes of what cni.Network
// drives: the sysctls, the links and routes, the pod namespaces and the
// CNI plugins. They keep state the way the kernel and the plugins do and
// refuse what those would refuse, so unit tests of the Network (and of
// its callers) exercise its logic without root.
//
// # Invariants
//
//   - Every fake is safe for concurrent use.
//   - Sysctl knows only the keys it was given: a write to an unknown key
//     fails as the missing /proc/sys file would, and boolean keys accept
//     only 0 and 1.
//   - Links refuses an address on a missing link, a duplicate address, a
//     route over a missing or down link, and a route whose source is no
//     local address, as the kernel does.
//   - Plugins allocates IPs like host-local (round robin from rangeStart,
//     no duplicates per container), requires a live namespace for ADD and
//     the bridge set up with the gateway, and, like the bridge plugin,
//     fails DEL for a namespace file that exists but holds no namespace.
package cnitest
