package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/skiff-dev/skiff/dns"
	"github.com/skiff-dev/skiff/dns/source"
)

// loadStore fills a Store with p's objects through the same conversion the
// server's informers use (dns/source), one Service at a time, so the API
// objects are garbage once converted (in `skiff server` the informers keep
// them too; this measures the DNS alone).
func loadStore(p params) (*dns.Store, error) {
	store := dns.NewStore()
	var err error
	p.each(func(g generated) {
		if err != nil {
			return
		}
		if e := store.UpsertService(source.ServiceFrom(g.svc)); e != nil {
			err = e
			return
		}
		for _, s := range g.slices {
			d, ok := source.EndpointSliceFrom(s)
			if !ok {
				err = fmt.Errorf("slice %s without service", s.Name)
				return
			}
			if e := store.UpsertEndpointSlice(d); e != nil {
				err = e
				return
			}
		}
		for _, pod := range g.pods {
			d, ok := source.PodFrom(pod)
			if !ok {
				err = fmt.Errorf("pod %s without IP", pod.Name)
				return
			}
			if e := store.UpsertPod(d); e != nil {
				err = e
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	store.SetSynced(true)
	return store, nil
}

// newBenchServer is the dns.Server as `skiff server` configures it, minus
// forwarding (no upstreams: nothing may leave 127.0.0.1).
func newBenchServer(store *dns.Store) (*dns.Server, error) {
	return dns.NewServer(dns.Config{
		Domain:          "cluster.local",
		TTL:             5 * time.Second,
		Upstreams:       []string{},
		AllowedNets:     []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")},
		ReverseNets:     []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("10.244.0.0/16")},
		NameserverAddrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")},
	}, store)
}

// serve is the child process: it loads the Store, listens on addr (UDP and
// TCP, one port), prints "listening <addr>" and serves until SIGTERM or
// SIGINT.
func serve(p params, addr string) error {
	start := time.Now()
	store, err := loadStore(p)
	if err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := store.Stats()
	fmt.Fprintf(os.Stderr, "skiff dns: loaded %d services, %d slices, %d pods in %v; heap in use %.1f MiB\n",
		st.Services, st.EndpointSlices, st.Pods, time.Since(start).Round(time.Millisecond), float64(ms.HeapInuse)/(1<<20))
	srv, err := newBenchServer(store)
	if err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	bound := udp.LocalAddr().String()
	tcp, err := net.Listen("tcp", bound)
	if err != nil {
		udp.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Printf("listening %s\n", bound)
	return srv.Serve(ctx, udp, tcp)
}
