package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
)

// serveServer is the child of -mode server: a whole `skiff server` (API on
// HTTPS, bbolt, controllers, informers) with --dns-listen on 127.0.0.1,
// filled through its API with p's objects (pods get their status written,
// as there is no agent), so the DNS answers from the real informer path.
// It prints "listening <dns addr>" once the last object resolves, and runs
// until SIGTERM or SIGINT.
func serveServer(p params) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	dir, err := os.MkdirTemp("", "dnsbench-server-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := config.ServerDefaults()
	cfg.DataDir = dir
	cfg.Listen = "127.0.0.1:0"
	cfg.DisableAgent = true
	cfg.NoSync = true
	cfg.DNSListen = "127.0.0.1:0"
	cfg.DNSUpstream = []string{} // nothing leaves 127.0.0.1
	// The benchmark writes the EndpointSlices itself; with no nodes the
	// scheduler would retry every pod for ever (a cluster's pods are
	// scheduled once and then quiet), so it is off too.
	cfg.DisabledControllers = []string{"endpointslice", "scheduler"}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start := time.Now()
	s, err := server.Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.Stop()
	c, err := s.Client()
	if err != nil {
		return err
	}
	res := api.Resources()
	resNS := api.Lookup(res, "v1", "namespaces")
	resSvc := api.Lookup(res, "v1", "services")
	resSlice := api.Lookup(res, "discovery.k8s.io/v1", "endpointslices")
	resPod := api.Lookup(res, "v1", "pods")
	for i := range p.Namespaces {
		if err := c.Create(ctx, resNS, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: p.nsOf(i)}}); err != nil {
			return fmt.Errorf("namespace: %w", err)
		}
	}

	// 16 writers; each takes whole Services (Service, slices, pods, status).
	work := make(chan generated, 64)
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	var written atomic.Int64
	for range 16 {
		wg.Go(func() {
			for g := range work {
				if firstErr.Load() != nil {
					continue
				}
				if err := writeGenerated(ctx, c, g, resSvc, resSlice, resPod); err != nil {
					firstErr.CompareAndSwap(nil, &err)
				}
				written.Add(int64(1 + len(g.slices) + 2*len(g.pods)))
			}
		})
	}
	var last generated
	p.each(func(g generated) {
		last = g
		select {
		case work <- g:
		case <-ctx.Done():
		}
	})
	close(work)
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return *e
	}
	fmt.Fprintf(os.Stderr, "skiff server: %d API writes in %v\n", written.Load(), time.Since(start).Round(time.Millisecond))

	// Wait for the informers: the last Service and pod resolve.
	want := []string{p.fqdn(last.idx)}
	if len(last.eps) > 0 {
		want = append(want, dashed(last.eps[len(last.eps)-1])+"."+p.nsOf(last.idx)+".pod.cluster.local.")
	}
	dc := &mdns.Client{Timeout: time.Second}
	for _, name := range want {
		for {
			m := new(mdns.Msg)
			m.SetQuestion(name, mdns.TypeA)
			if r, _, err := dc.Exchange(m, s.DNSAddr()); err == nil && r.Rcode == mdns.RcodeSuccess && len(r.Answer) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	fmt.Fprintf(os.Stderr, "skiff server: DNS caught up after %v\n", time.Since(start).Round(time.Millisecond))
	fmt.Printf("listening %s\n", s.DNSAddr())
	<-ctx.Done()
	return nil
}

func writeGenerated(ctx context.Context, c *client.Client, g generated, resSvc, resSlice, resPod *api.ResourceInfo) error {
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.Create(wctx, resSvc, g.svc.Namespace, g.svc); err != nil {
		return fmt.Errorf("service %s/%s: %w", g.svc.Namespace, g.svc.Name, err)
	}
	for _, sl := range g.slices {
		if err := c.Create(wctx, resSlice, sl.Namespace, sl); err != nil {
			return fmt.Errorf("endpointslice %s: %w", sl.Name, err)
		}
	}
	for _, pod := range g.pods {
		status := pod.Status
		pod.Status = api.PodStatus{}
		pod.Spec.Containers = []api.Container{{Name: "app", Image: "registry.example/app:1"}}
		if err := c.Create(wctx, resPod, pod.Namespace, pod); err != nil {
			return fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		// The scheduler may write the status too (Unschedulable: there are
		// no nodes): on a conflict, take the latest and set the IPs again.
		for attempt := 0; ; attempt++ {
			pod.Status.Phase, pod.Status.PodIP, pod.Status.PodIPs = status.Phase, status.PodIP, status.PodIPs
			err := c.UpdateStatus(wctx, resPod, pod.Namespace, pod)
			if err == nil {
				break
			}
			if !client.IsConflict(err) || attempt == 5 {
				return fmt.Errorf("pod status %s: %w", pod.Name, err)
			}
			if err := c.Get(wctx, resPod, pod.Namespace, pod.Name, pod); err != nil {
				return fmt.Errorf("pod %s: %w", pod.Name, err)
			}
		}
	}
	return nil
}
