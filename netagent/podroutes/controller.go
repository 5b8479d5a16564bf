package podroutes

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// DefaultResync is how often Controller syncs without a Node change.
const DefaultResync = 30 * time.Second

// Controller keeps a node's pod routes in step with the cluster's Nodes.
type Controller struct {
	// Self is this node's name, SelfCIDR its podCIDR and SelfIPs its
	// addresses.
	Self     string
	SelfCIDR netip.Prefix
	SelfIPs  []netip.Addr
	// Nodes lists the cluster's Nodes (an informer's cache).
	Nodes func() []*api.Node
	// Reconciler is bound to the node's namespace.
	Reconciler *Reconciler
	// Resync: default DefaultResync.
	Resync time.Duration
	Logger *slog.Logger
	// OnSync, when set, is called after each sync (tests).
	OnSync func(Result, error)
}

// Run syncs at once, then on every signal of changed (coalesced) and every
// Resync, until ctx ends.
func (c *Controller) Run(ctx context.Context, changed <-chan struct{}) {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	period := c.Resync
	if period <= 0 {
		period = DefaultResync
	}
	t := time.NewTicker(period)
	defer t.Stop()
	var lastSkipped []string
	for {
		peers, skipped := Peers(c.Self, c.SelfCIDR, c.SelfIPs, c.Nodes())
		if !slices.Equal(skipped, lastSkipped) {
			for _, s := range skipped {
				log.Warn("no pod route to node", "reason", s)
			}
			lastSkipped = skipped
		}
		res, err := c.Reconciler.Sync(peers)
		if err != nil {
			log.Error("pod routes sync", "err", err)
		}
		if c.OnSync != nil {
			c.OnSync(res, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-t.C:
		}
	}
}
