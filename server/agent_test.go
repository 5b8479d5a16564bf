package server_test

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server/servertest"
)

// A test binary never runs the built-in agent in the machine's own
// network namespace: without AgentNetNS it is skipped even when
// DisableAgent is false.
func TestBuiltinAgentNeedsANetNSInTests(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ""
		cfg.AgentNodeName = "must-not-register"
	}})
	if ts.Server().Agent() != nil {
		t.Fatal("the built-in agent runs in a test without AgentNetNS")
	}
	time.Sleep(500 * time.Millisecond)
	var n api.Node
	if err := ts.Client().Get(ctxT(t, 5*time.Second), resNodes, "", "must-not-register", &n); !client.IsNotFound(err) {
		t.Fatalf("a node registered: %v", err)
	}
}
