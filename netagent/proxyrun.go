package netagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/egress"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/nftables"
)

// RunProxy is the ProxyFunc of `skiff agent` and the built-in agent: it
// builds the backend p.Mode names (iptables by default, nftables or ipvs:
// refused at once, with the reason, where the kernel has no usable IPVS),
// programming the node's network namespace (p.NetNS; nil is the
// agent's own), and runs the proxy core on the agent's Service and
// EndpointSlice informers until ctx ends.
//
// The masquerade range (proxy.Config.ClusterCIDR) is p.ClusterCIDR (the
// server's --cluster-cidr); when the agent was not told it, the node's
// podCIDR, and then traffic from other nodes' pods to a ClusterIP is
// masqueraded too (it works; only the client IP is lost).
func RunProxy(ctx context.Context, p ProxyParams) error {
	mode := p.Mode
	if mode == "" {
		mode = "iptables"
	}
	switch mode {
	case "iptables", "nftables":
	case "ipvs":
		// moby/ipvs does nothing, silently, without IPVS: refuse at once.
		if err := ipvs.Available(); err != nil {
			return fmt.Errorf("--proxy-mode ipvs: %w", err)
		}
	default:
		return fmt.Errorf("--proxy-mode %q: want iptables, nftables or ipvs", p.Mode)
	}
	if p.Informers == nil && (p.Services == nil || p.EndpointSlices == nil) {
		return errors.New("netagent: proxy: no informers")
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	// A handle on the node's namespace, for the netlink sockets (nftables,
	// conntrack) and, as /proc/self/fd/N, for the iptables tools.
	ns := vnetns.None()
	if p.NetNS != nil {
		if err := p.NetNS(func() error {
			h, err := vnetns.Get()
			ns = h
			return err
		}); err != nil {
			return fmt.Errorf("netagent: proxy: node netns: %w", err)
		}
		defer ns.Close()
	}

	var backend proxy.Backend
	var eg egressRules // in the same packet filter as the proxy's rules
	switch mode {
	case "iptables":
		ex := iptables.OSExec{}
		if ns.IsOpen() {
			ex.NetNS = fmt.Sprintf("/proc/self/fd/%d", int(ns))
		}
		b, err := iptables.New(ctx, iptables.Config{Exec: ex, Logger: log})
		if err != nil {
			return fmt.Errorf("netagent: proxy: %w", err)
		}
		backend = b
		eg = egress.IPTables{Exec: ex, Mode: b.Mode()}
	case "nftables":
		opts := nftables.NetlinkOptions{}
		if ns.IsOpen() {
			opts.NetNSFd = int(ns)
		}
		k, err := nftables.NewNetlink(opts)
		if err != nil {
			return fmt.Errorf("netagent: proxy: %w", err)
		}
		defer k.Close()
		b, err := nftables.New(nftables.Config{Kernel: k, Logger: log})
		if err != nil {
			return fmt.Errorf("netagent: proxy: %w", err)
		}
		backend = b
		eg = egress.NFTables{Kernel: k}
	case "ipvs":
		nsPath := ""
		if ns.IsOpen() {
			nsPath = fmt.Sprintf("/proc/self/fd/%d", int(ns))
		}
		k, err := ipvs.OpenKernel(ipvs.KernelOptions{NetNS: nsPath})
		if err != nil {
			return fmt.Errorf("--proxy-mode ipvs: %w", err)
		}
		defer k.Close()
		ex := iptables.OSExec{NetNS: nsPath}
		ipt, err := iptables.Detect(ctx, ex)
		if err != nil {
			return fmt.Errorf("netagent: proxy: %w", err)
		}
		eg = egress.IPTables{Exec: ex, Mode: ipt}
		b, err := ipvs.New(ctx, ipvs.Config{
			IPVS:      k.IPVS,
			Addrs:     k.Addrs,
			Exec:      ex,
			Mode:      ipt, // detected once, for both
			Scheduler: p.IPVSScheduler,
			Sysctl: func(key, value string) error {
				return p.NetNS.do(func() error { return ipvs.WriteSysctl(key, value) })
			},
			Logger: log,
		})
		if err != nil {
			return fmt.Errorf("netagent: proxy: %w", err)
		}
		backend = b
	}

	var egressDone sync.WaitGroup
	egressDone.Go(func() { keepEgress(ctx, eg, p, log) })
	defer egressDone.Wait() // before the backends' handles close
	if p.OnEgress != nil {
		p.OnEgress(eg.Rules)
		defer p.OnEgress(nil)
	}

	if p.OnBackend != nil {
		p.OnBackend(mode, backend)
		defer p.OnBackend("", nil) // the backend is gone with this function
	}

	ct := proxy.NetlinkConntrack{}
	if ns.IsOpen() {
		// NETLINK_NETFILTER only: with no families given the handle also
		// opens xfrm, which kernels without xfrm_user refuse (docs/platform.md, "A real kernel with ip_vs, under qemu").
		h, err := netlink.NewHandleAt(ns, unix.NETLINK_NETFILTER)
		if err != nil {
			return fmt.Errorf("netagent: proxy: netlink handle in the node netns: %w", err)
		}
		defer h.Close()
		ct.Handle = h
	}

	services, slices := p.Services, p.EndpointSlices
	res := lookupResources()
	opts := func(name string) client.InformerOptions {
		return client.InformerOptions{Logger: log.With("informer", name)}
	}
	if services == nil {
		services = p.Informers.For(res.services, opts("services"))
	}
	if slices == nil {
		slices = p.Informers.For(res.slices, opts("endpointslices"))
	}
	px, err := proxy.New(proxy.Config{
		NodeName:    p.NodeName,
		NodeIPs:     p.NodeIPs,
		ClusterCIDR: clusterCIDR(p),
		ServiceCIDR: p.ServiceCIDR,
		Conntrack:   ct,
		Registerer:  p.Registerer,
		Listen: func(ctx context.Context, network, address string) (ln net.Listener, err error) {
			err = p.NetNS.do(func() error {
				var lc net.ListenConfig
				ln, err = lc.Listen(ctx, network, address)
				return err
			})
			return ln, err
		},
	}, backend, services, slices, log)
	if err != nil {
		return fmt.Errorf("netagent: proxy: %w", err)
	}
	if p.OnHealthz != nil {
		p.OnHealthz(px.Healthz())
		defer p.OnHealthz(nil)
	}
	log.Info("service proxy running", "mode", mode, "node", p.NodeName)
	return px.Run(ctx)
}

// egressRules is what RunProxy needs of package egress's backends.
type egressRules interface {
	Ensure(ctx context.Context, c egress.Config) error
	Remove(ctx context.Context) error
	Rules(ctx context.Context) ([]string, error)
}

// egressResync is how often the egress rules are written again, so that
// a flushed nat table (a firewall reload) heals by itself, as the proxy's
// own rules do at their full sync.
const egressResync = time.Minute

// keepEgress programs the masquerade of pod traffic leaving the cluster
// (or, with p.EgressMasquerade off, removes leftover rules once) and
// rewrites it every egressResync until ctx ends. A failure is logged: the
// Service flow does not depend on it.
func keepEgress(ctx context.Context, eg egressRules, p ProxyParams, log *slog.Logger) {
	if !p.EgressMasquerade {
		if err := eg.Remove(ctx); err != nil {
			log.Warn("removing the egress masquerade failed", "err", err)
		}
		return
	}
	c := egress.Config{PodCIDR: p.PodCIDR, ClusterCIDR: p.ClusterCIDR}
	t := time.NewTicker(egressResync)
	defer t.Stop()
	for first := true; ; first = false {
		if err := eg.Ensure(ctx, c); err != nil && ctx.Err() == nil {
			log.Error("egress masquerade not programmed: pods cannot reach addresses outside the cluster", "err", err)
		} else if first && err == nil {
			log.Info("egress masquerade programmed", "podCIDR", c.PodCIDR, "clusterCIDR", clusterCIDR(p))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// clusterCIDR is the masquerade range: the cluster's pod range when known,
// else the node's own podCIDR.
func clusterCIDR(p ProxyParams) netip.Prefix { return clusterRange(p.ClusterCIDR, p.PodCIDR) }

// clusterRange is cluster when known, else the node's pod range.
func clusterRange(cluster, pod netip.Prefix) netip.Prefix {
	if cluster.IsValid() {
		return cluster
	}
	return pod
}
