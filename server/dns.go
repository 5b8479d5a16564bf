package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/dns"
	"github.com/skiff-dev/skiff/dns/source"
)

// clusterDNS is the embedded DNS of `skiff server --dns-listen`: a
// dns.Server answering from a dns.Store that a dns/source.Source feeds from
// the server's shared informers.
type clusterDNS struct {
	store *dns.Store
	srv   *dns.Server
	udp   net.PacketConn
	tcp   net.Listener
	addr  string // host:port, the same port for UDP and TCP

	closeOnce sync.Once
}

// listenDNS builds the DNS server and binds its UDP and TCP listeners when
// --dns-listen is set, so that Start fails on a busy port. It does not
// serve yet: dnsRun does, once the informers are registered.
func (s *Server) listenDNS(reg prometheus.Registerer) error {
	if s.cfg.DNSListen == "" {
		return nil
	}
	allowed := []netip.Prefix{s.parsed.ClusterCIDR}
	for _, a := range s.parsed.NodeIPs {
		allowed = append(allowed, netip.PrefixFrom(a, a.BitLen()))
	}
	store := dns.NewStore()
	cfg := dns.Config{
		Domain:      s.cfg.ClusterDomain,
		TTL:         s.cfg.DNSTTL,
		Upstreams:   s.cfg.DNSUpstream, // nil: /etc/resolv.conf
		AllowedNets: allowed,           // loopback is always allowed
		ReverseNets: []netip.Prefix{s.parsed.ServiceCIDR, s.parsed.ClusterCIDR},
		Logger:      s.log,
		Registerer:  reg,
	}
	udp, tcp, err := dns.ListenUDPTCP(s.cfg.DNSListen)
	if err != nil {
		return fmt.Errorf("server: --dns-listen: %w", err)
	}
	d := &clusterDNS{store: store, udp: udp, tcp: tcp, addr: udp.LocalAddr().String()}
	if ap, err := netip.ParseAddrPort(d.addr); err == nil && !ap.Addr().IsUnspecified() {
		cfg.NameserverAddrs = []netip.Addr{ap.Addr()}
	} else {
		cfg.NameserverAddrs = s.parsed.NodeIPs
	}
	d.srv, err = dns.NewServer(cfg, store)
	if err != nil {
		d.close()
		return fmt.Errorf("server: %w", err)
	}
	s.dns = d
	return nil
}

// dnsRun registers the DNS informers on inf (before inf.Start) and returns
// the DNS's run function, or nil when the server has no DNS. The run
// function serves until ctx ends.
func (s *Server) dnsRun(inf *client.SharedInformers, res map[string]*api.ResourceInfo) func(context.Context) error {
	d := s.dns
	if d == nil {
		return nil
	}
	logFor := func(name string) client.InformerOptions {
		return client.InformerOptions{Logger: s.log.With("informer", name)}
	}
	src := source.New(d.store,
		inf.For(res["services"], logFor("services")),
		inf.For(res["endpointslices.discovery.k8s.io"], logFor("endpointslices")),
		inf.For(res["pods"], logFor("pods")),
		s.log)
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := src.Run(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("dns source stopped", "err", err)
			}
		})
		err := d.srv.Serve(ctx, d.udp, d.tcp) // closes the listeners
		wg.Wait()
		return err
	}
}

// DNSAddr is the address (host:port) the cluster DNS serves on, UDP and
// TCP; "" without --dns-listen.
func (s *Server) DNSAddr() string {
	if s.dns == nil {
		return ""
	}
	return s.dns.addr
}

// close closes the listeners if they were never served (Serve closes them
// itself).
func (d *clusterDNS) close() {
	d.closeOnce.Do(func() {
		d.udp.Close()
		d.tcp.Close()
	})
}
