package server_test

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// A test binary never runs the built-in agent in the machine's own
// network namespace: without AgentNetNS it is skipped even when
// DisableAgent is false.
func TestBuiltinAgentNeedsANetNSInTests(t *testing.T) {
	cfg := testConfig(t)
	cfg.DisableAgent = false
	cfg.AgentNetNS = ""
	cfg.AgentNodeName = "must-not-register"
	ts := startServer(t, cfg)
	if ts.Agent() != nil {
		t.Fatal("the built-in agent runs in a test without AgentNetNS")
	}
	time.Sleep(500 * time.Millisecond)
	var n api.Node
	if err := ts.c.Get(ctxT(t, 5*time.Second), resNodes, "", "must-not-register", &n); !client.IsNotFound(err) {
		t.Fatalf("a node registered: %v", err)
	}
}
