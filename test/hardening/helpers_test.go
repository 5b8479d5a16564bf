package hardening

import (
	"testing"

	"github.com/skiff-dev/skiff/server/servertest"
)

// startServer is a server on a fresh data dir, without an agent, for one
// test; opts changes servertest's defaults.
func startServer(t *testing.T, opts servertest.Options) *servertest.Server {
	t.Helper()
	return servertest.Start(t, opts)
}
