package e2e

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/podtest"
)

// TestMain lets the test binary be the programs pods run through the
// process runtime: its init helper (/proc/self/exe runtime-init ...) and,
// since the examples' command is `skiff netexec ...` and the runtime runs
// the command `skiff` as its own helper binary, netexec.
func TestMain(m *testing.M) {
	podtest.Main(m, podtest.Options{ShutdownTimeout: 5 * time.Second, LogToStdout: false})
}
