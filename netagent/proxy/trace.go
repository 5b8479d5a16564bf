package proxy

import (
	"context"
	"net/netip"

	"github.com/skiff-dev/skiff/api"
)

// RuleTracer is implemented by every backend: the rules a new connection
// to dst (protocol TCP or UDP) meets on this node, in order, read back from
// the kernel (not from the backend's memory), so that `skiff trace` shows
// what is really programmed. It is called on demand, never in the sync
// loop. An empty result with a nil error means no rule matches dst.
type RuleTracer interface {
	TraceRules(ctx context.Context, dst netip.AddrPort, protocol string) ([]api.TraceRule, error)
}
