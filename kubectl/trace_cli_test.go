package kubectl_test

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// TestTraceCommandErrors: `skiff trace` against a server whose node
// publishes no node API (the test kubelet): the server's errors as
// kubectl prints them, and the usage errors.
func TestTraceCommandErrors(t *testing.T) {
	h := newHarness(t)
	h.fails(1, `Error from server (NotFound): pods "ghost" not found`, "trace", "ghost", "http://backend")
	h.ok("run", "web", "--image=nginx", "--port=80")
	eventually(t, "web scheduled", 20*time.Second, func() (bool, string) {
		var p api.Pod
		h.getObj(resPods, "web", &p)
		return p.Spec.NodeName != "", p.Spec.NodeName
	})
	h.fails(1, "Error from server (ServiceUnavailable): node", "trace", "web", "http://backend")
	h.fails(1, "expected POD and URL", "trace", "web")
	h.fails(1, `unable to match a printer suitable for the output format "wide"`, "trace", "web", "http://x", "-o", "wide")
}
