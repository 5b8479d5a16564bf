package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneAgentGC(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})

	tuneAgentGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != agentGCPercent {
		t.Errorf("GC percent %d, want %d", got, agentGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != agentMemoryLimit {
		t.Errorf("memory limit %d, want %d", got, agentMemoryLimit)
	}

	// The user's GOGC and GOMEMLIMIT win (the runtime has applied them).
	tuneAgentGC(func(k string) string { return map[string]string{"GOGC": "200", "GOMEMLIMIT": "1GiB"}[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it left alone (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it left alone", got)
	}
}
