package netagent_test

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/podtest"
)

// TestMain lets the test binary be the programs the root tests run as pod
// containers through the process runtime: its init helper
// (/proc/self/exe runtime-init ...), netexec, and ignore-term.
func TestMain(m *testing.M) {
	podtest.Main(m, podtest.Options{ShutdownTimeout: time.Second, LogToStdout: false})
}
