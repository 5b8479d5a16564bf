package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/controller/deployment"
	"github.com/skiff-dev/skiff/controller/endpointslice"
	"github.com/skiff-dev/skiff/controller/gc"
	"github.com/skiff-dev/skiff/controller/namespace"
	"github.com/skiff-dev/skiff/controller/nodeipam"
	"github.com/skiff-dev/skiff/controller/nodelifecycle"
	"github.com/skiff-dev/skiff/controller/statefulset"
	"github.com/skiff-dev/skiff/scheduler"
)

// controllers run until stopControllers; their goroutines are tracked.
type controllers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	inf    *client.SharedInformers
}

// startControllers builds every built-in controller on shared informers
// (one list+watch per resource), starts the informers, then the
// controllers. Each talks to the API over loopback HTTPS like any client.
func (s *Server) startControllers(ctx context.Context, c *client.Client) {
	// The controllers outlive Start's ctx only until Stop: they get a
	// context of their own that Stop cancels.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	inf := client.NewSharedInformers(c)
	s.ctrl = &controllers{cancel: cancel, inf: inf}
	res := resourceTable(s.resource)
	logFor := func(name string) *slog.Logger { return s.log.With("informer", name) }
	pods := inf.For(res["pods"], client.InformerOptions{Logger: logFor("pods")})
	nodes := inf.For(res["nodes"], client.InformerOptions{Logger: logFor("nodes")})
	leases := inf.For(res["leases.coordination.k8s.io"], client.InformerOptions{
		Namespace: nodelifecycle.LeaseNamespace, Logger: logFor("leases")})

	var runs []func()
	add := func(name string, f func(context.Context) error) {
		if slices.Contains(s.cfg.DisabledControllers, name) {
			s.log.Info("controller disabled", "controller", name)
			return
		}
		runs = append(runs, func() {
			s.ctrl.wg.Add(1)
			go func() {
				defer s.ctrl.wg.Done()
				if err := f(cctx); err != nil {
					s.log.Error("controller stopped", "controller", name, "err", err)
				}
			}()
		})
	}
	// recorder returns an event recorder for a component; its sender runs
	// with the controllers.
	recorder := func(component string) *record.Recorder {
		r := record.NewRecorder(c, component, s.log.With("component", component))
		runs = append(runs, func() {
			s.ctrl.wg.Add(1)
			go func() {
				defer s.ctrl.wg.Done()
				_ = r.Run(cctx)
			}()
		})
		return r
	}
	svcs := inf.For(res["services"], client.InformerOptions{Logger: logFor("services")})
	slices := inf.For(res["endpointslices.discovery.k8s.io"], client.InformerOptions{Logger: logFor("endpointslices")})
	deploys := inf.For(res["deployments.apps"], client.InformerOptions{Logger: logFor("deployments")})
	sets := inf.For(res["statefulsets.apps"], client.InformerOptions{Logger: logFor("statefulsets")})

	g := gc.New(c, s.resource, s.log.With("component", "gc"))
	add("gc", func(ctx context.Context) error { return g.Run(ctx, 2) })
	ns := namespace.New(c, s.resource, s.log.With("component", "namespace"))
	add("namespace", func(ctx context.Context) error { return ns.Run(ctx, 2) })
	eps := endpointslice.New(c, svcs, pods, slices, endpointslice.Options{
		MaxEndpointsPerSlice: s.cfg.MaxEndpointsPerSlice,
		Recorder:             recorder("endpointslice-controller"),
	}, s.log.With("component", "endpointslice"))
	add("endpointslice", func(ctx context.Context) error { return eps.Run(ctx, 4) })
	dc := deployment.New(c, deploys, pods, deployment.Options{Recorder: recorder("deployment-controller")},
		s.log.With("component", "deployment"))
	add("deployment", func(ctx context.Context) error { return dc.Run(ctx, 4) })
	sc := statefulset.New(c, sets, pods, statefulset.Options{Recorder: recorder("statefulset-controller")},
		s.log.With("component", "statefulset"))
	add("statefulset", func(ctx context.Context) error { return sc.Run(ctx, 2) })
	sched := scheduler.New(c, pods, nodes, scheduler.Options{Recorder: recorder("default-scheduler")},
		s.log.With("component", "scheduler"))
	add("scheduler", func(ctx context.Context) error { return sched.Run(ctx, 16) })
	nl := nodelifecycle.New(c, nodes, pods, leases, nodelifecycle.Options{
		NodeMonitorGracePeriod: s.cfg.NodeMonitorGracePeriod,
		PodEvictionTimeout:     s.cfg.PodEvictionTimeout,
		Recorder:               recorder("node-controller"),
	}, s.log.With("component", "nodelifecycle"))
	add("nodelifecycle", func(ctx context.Context) error { return nl.Run(ctx, 2) })
	// nodeipam gives each Node its podCIDR (config.Parse validated the
	// mask against the cluster CIDR, so New cannot fail on flags).
	if ipam, err := nodeipam.New(c, nodes, nodeipam.Options{
		ClusterCIDR: s.parsed.ClusterCIDR, NodeMaskSize: s.cfg.NodeCIDRMaskSize,
		Recorder: recorder("node-ipam-controller"),
	}, s.log.With("component", "nodeipam")); err != nil {
		s.log.Error("nodeipam: not started", "err", err)
	} else {
		add("nodeipam", func(ctx context.Context) error { return ipam.Run(ctx, 2) })
	}
	if run := s.dnsRun(inf, res); run != nil { // server/dns.go; nil without --dns-listen
		add("dns", run)
	}

	inf.Start(cctx)
	for _, r := range runs {
		r()
	}
}

func (s *Server) stopControllers() {
	if s.ctrl == nil {
		return
	}
	s.ctrl.cancel()
	s.ctrl.wg.Wait()
	s.ctrl.inf.Wait()
	s.ctrl = nil
}
