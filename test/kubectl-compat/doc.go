// Package kubectlcompat tests that kubectl and client-go work against a real
// Skiff server. It is a module of its own (replace ../.. for Skiff) so that
// k8s.io/kubectl and k8s.io/client-go stay out of Skiff's module and binary.
//
// # What runs
//
// TestMain starts one control plane with server.Start on 127.0.0.1 (no node
// agent: the tests act as the node where pods must run) and builds kubectl
// from its Go module (./cmd/kubectl, the k8s.io/kubectl version in go.mod)
// into the user cache directory; $KUBECTL names another kubectl to test
// instead (Debian's kubernetes-client, say). Every kubectl runs with the
// server's admin kubeconfig and a HOME of its own, so no cache or config
// of the machine is read.
//
// TestPortForward (root, CNI plugins) starts a second server with its
// built-in agent on the process runtime, whose pods run this test binary
// (TestMain dispatches internal/podtest's programs first), and runs
// `kubectl port-forward` (the current kubectl: SPDY over WebSocket;
// Debian's 1.20: plain SPDY) and client-go's SPDY and tunnelling dialers
// through it.
//
// # Invariants
//
// Each test uses its own namespace, so tests do not see each other's
// objects. Every wait is bounded; a kubectl that hangs fails its test.
package kubectlcompat
