package netagent

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/nodeip"
	"github.com/skiff-dev/skiff/netagent/podroutes"
)

// Pod route modes (Config.PodRoutes).
const (
	PodRoutesHostGW = "host-gw"
	PodRoutesVXLAN  = "vxlan"
	PodRoutesNone   = "none"
)

// podMTU is the pods' MTU: room for the encapsulation in mode vxlan, else
// the CNI default.
func (a *Agent) podMTU() int {
	if a.cfg.PodRoutes == PodRoutesVXLAN {
		return podroutes.DefaultVXLANMTU
	}
	return 0
}

// startPodRoutes keeps, in the node's namespace, a route to every other
// node's podCIDR via its InternalIP, or through the vxlan device in mode
// vxlan (netagent/podroutes), following the Node
// informer nodes (nil in mode none). Mode none does nothing (an
// agent under test without a node namespace is given it, so that it never
// routes in the machine's own namespace).
func (a *Agent) startPodRoutes(ctx context.Context, wg *sync.WaitGroup, nodes *client.Informer, podCIDR netip.Prefix) error {
	if a.cfg.PodRoutes == PodRoutesNone { // Config.defaults checked the mode
		return nil
	}
	log := a.log.With("component", "podroutes")
	var h *netlink.Handle
	if err := a.deps.NodeNetNS.do(func() error {
		var err error
		// A socket opened here stays in the node's namespace.
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
		return err
	}); err != nil {
		return fmt.Errorf("netagent: pod routes: netlink: %w", err)
	}
	rec := podroutes.NewReconciler(h, log)
	if a.cfg.PodRoutes == PodRoutesVXLAN {
		ip, ok := nodeip.FirstIPv4(a.cfg.NodeIPs) // the tunnel's local end
		if !ok {
			h.Close()
			return fmt.Errorf("netagent: pod routes vxlan: the node has no IPv4 address (--node-ip)")
		}
		var err error
		if rec, err = podroutes.NewVXLANReconciler(h, podroutes.VXLAN{NodeIP: ip, PodCIDR: podCIDR}, log); err != nil {
			h.Close()
			return fmt.Errorf("netagent: %w", err)
		}
	}
	changed := make(chan struct{}, 1)
	kick := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	nodes.AddEventHandler(client.HandlerFuncs{
		AddFunc:    func(api.Object) { kick() },
		UpdateFunc: func(api.Object, api.Object) { kick() },
		DeleteFunc: func(api.Object) { kick() },
	})
	ctrl := &podroutes.Controller{
		Self: a.cfg.NodeName, SelfCIDR: podCIDR, SelfIPs: a.cfg.NodeIPs, Reconciler: rec, Logger: log,
		Nodes: func() []*api.Node {
			objs := nodes.List()
			out := make([]*api.Node, 0, len(objs))
			for _, o := range objs {
				if n, ok := o.(*api.Node); ok {
					out = append(out, n)
				}
			}
			return out
		},
	}
	wg.Go(func() {
		defer h.Close()
		if !client.WaitForCacheSync(ctx, nodes.HasSynced) {
			return
		}
		ctrl.Run(ctx, changed)
	})
	return nil
}
