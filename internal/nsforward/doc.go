// Package nsforward forwards TCP connections from a loopback address in
// the caller's network namespace to a loopback address inside another
// network namespace. The demo (hack/demo.sh) runs `skiff server` in a
// namespace of its own; `skiff netns-forward` makes its API and dashboard
// reachable from the host's browser without any route or rule between the
// two namespaces.
//
// # Invariants
//
//   - Both addresses are loopback (127.0.0.0/8 or ::1); anything else is
//     refused before a socket is opened, so the forwarder can never expose
//     a namespace to the network.
//   - The dial happens on a locked OS thread that has setns(2)ed into the
//     target namespace (netagent/netns.Do); the listener and every other
//     goroutine stay in the caller's namespace.
//   - Run returns when ctx ends, after closing the listener and every
//     connection it opened.
package nsforward
