// Package e2e is Skiff's end-to-end suite: the behaviours docs/architecture.md
// describes, run against the real thing. Each mode (iptables, nftables)
// gets a `skiff server` (server.Start, real HTTPS on 127.0.0.1, bbolt in a
// temp dir) whose built-in agent runs in a node network namespace the test
// made: real CNI plugins, the process runtime (the test binary serves as
// `skiff`: runtime-init and netexec), real probes, the node DNS, and the
// real service proxy programming the namespace's kernel. A second
// namespace joined to the node by a veth is a machine outside the node.
// Workloads are the repository's examples/, applied with the in-process
// `skiff apply -f`. TestContainerdRuntime runs the cases where the runtime
// matters again with --runtime containerd: the built-in agent starts its
// own containerd under the data dir, and the image examples/ name
// (skiff.local/netexec:dev) is a static skiff built from testdata/skiff,
// so the same manifests run on both runtimes.
//
// TestMultiNodeHostGW (multinode_test.go) is a two-node cluster instead: a
// server without its built-in agent, two in-process agents in node
// namespaces on a test-made LAN bridge (its own namespace) with an outside
// namespace on it, checking the host-gw pod routes (netagent/podroutes).
//
// # Invariants
//
//   - Root only: without root (or the CNI plugins, iptables, nft; for
//     the containerd runtime containerd, its runc shim and runc) every
//     test skips saying what is missing.
//   - Traffic goes only to loopback and to the namespaces the test made;
//     rules are written only inside them. Every pod process, pod network
//     and namespace is removed at the end, by PID and by path; with
//     containerd also every container, shim, the agent's containerd and
//     every mount under the data dir (any left is an error).
//   - Nothing asserts wall-clock times; figures are logged (go test -v).
package e2e
