package web_test

import (
	"encoding/json"
	"os"
	"testing"
)

// traceFixture is a Trace recorded from the shape api.Trace defines (the
// JSON `skiff trace -o json` prints): a client pod, a DNS search
// expansion, a ClusterIP, iptables rules choosing between two endpoints
// on two nodes. It stands in for the trace route, which computes it on
// the client pod's node, in the tests of the hook and of the drawing only.
func traceFixture(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/trace.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
