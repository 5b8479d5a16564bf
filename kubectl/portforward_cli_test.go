package kubectl_test

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// TestPortForwardCommandErrors: `skiff port-forward` against a server
// whose node publishes no node API (the test kubelet): usage errors, a
// missing pod, a pod that is not running, a port the Service lacks, and
// the server's answer to the upgrade as kubectl words it.
func TestPortForwardCommandErrors(t *testing.T) {
	h := newHarness(t)
	h.fails(1, "TYPE/NAME and list of ports are required for port-forward", "port-forward", "pod/x")
	h.fails(1, `Error from server (NotFound): pods "ghost" not found`, "port-forward", "pod/ghost", "80")
	h.ok("run", "pending", "--image=nginx", "--port=80")
	h.fails(1, "unable to forward port because pod is not running. Current status=Pending", "port-forward", "pending", "80")
	h.kubelet()
	h.ok("run", "web", "--image=nginx", "--port=80")
	eventually(t, "web running", 20*time.Second, func() (bool, string) {
		var p api.Pod
		h.getObj(resPods, "web", &p)
		return p.Status.Phase == api.PodRunning, string(p.Status.Phase)
	})
	h.ok("expose", "pod", "web", "--port=8080", "--target-port=80")
	h.fails(1, "Service web does not have a service port 81", "port-forward", "svc/web", "81")
	h.fails(1, "Pod 'web' does not have a named port 'metrics'", "port-forward", "pod/web", "metrics")
	h.fails(1, `Error from server (ServiceUnavailable): node "node-1" publishes no node API`, "port-forward", "svc/web", ":8080", "--address", "127.0.0.1")
}
