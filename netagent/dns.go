package netagent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"

	"github.com/skiff-dev/skiff/dns"
	"github.com/skiff-dev/skiff/dns/source"
)

// listenDNS binds the node DNS (UDP and TCP) on the gateway's port
// DNSListenPort inside the node's network namespace (or on DNSListenAddr),
// reads the Service, EndpointSlice and Pod informers of inf, and
// returns the function that serves it. The DNS answers from the agent's
// own watch cache, so cluster names keep resolving while the server is
// away; until the caches have synced it answers SERVFAIL.
func (a *Agent) listenDNS(inf *agentInformers, gw netip.Addr, podCIDR, svcCIDR netip.Prefix) (func(context.Context) error, error) {
	addr := a.cfg.DNSListenAddr
	if addr == "" {
		addr = net.JoinHostPort(gw.String(), strconv.Itoa(a.cfg.DNSListenPort))
	}
	allowed := []netip.Prefix{podCIDR}
	for _, ip := range a.cfg.NodeIPs {
		allowed = append(allowed, netip.PrefixFrom(ip, ip.BitLen()))
	}
	store := dns.NewStore()
	srv, err := dns.NewServer(dns.Config{
		Domain:          a.cfg.ClusterDomain,
		Upstreams:       a.cfg.DNSUpstreams,
		ResolvConf:      a.cfg.HostResolvConf,
		AllowedNets:     allowed,
		ReverseNets:     []netip.Prefix{svcCIDR, podCIDR},
		NameserverAddrs: []netip.Addr{gw},
		Logger:          a.log.With("component", "dns"),
	}, store)
	if err != nil {
		return nil, fmt.Errorf("netagent: node DNS: %w", err)
	}
	var udp net.PacketConn
	var tcp net.Listener
	if err := a.deps.NodeNetNS.do(func() error {
		var err error
		udp, tcp, err = dns.ListenUDPTCP(addr)
		return err
	}); err != nil {
		return nil, fmt.Errorf("netagent: node DNS on %s: %w", addr, err)
	}
	a.mu.Lock()
	a.dnsAddr = udp.LocalAddr().String()
	a.mu.Unlock()
	log := a.log.With("component", "dns")
	src := source.New(store, inf.services, inf.slices, inf.pods, log)
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := src.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("dns source stopped", "err", err)
			}
		})
		err := srv.Serve(ctx, udp, tcp) // closes the listeners
		wg.Wait()
		return err
	}, nil
}
