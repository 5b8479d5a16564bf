package web_test

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/podtest"
)

// TestMain lets the test binary be the pods of the real-trace test: the
// process runtime re-executes it as its helper (process.InitCommand), and
// the pods run it as "skiff netexec" (skiff is this binary for the
// process runtime).
func TestMain(m *testing.M) {
	podtest.Main(m, podtest.Options{ShutdownTimeout: 5 * time.Second, LogToStdout: true})
}
