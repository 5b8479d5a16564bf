package server

import (
	"context"
	"slices"
	"sync"

	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/gc"
	"github.com/skiff-dev/skiff/controller/namespace"
)

// controllers run until stopControllers; their goroutines are tracked.
type controllers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *Server) startControllers(ctx context.Context, c *client.Client) {
	// The controllers outlive Start's ctx only until Stop: they get a
	// context of their own that Stop cancels.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.ctrl = &controllers{cancel: cancel}
	run := func(name string, f func(context.Context) error) {
		if slices.Contains(s.cfg.DisabledControllers, name) {
			s.log.Info("controller disabled", "controller", name)
			return
		}
		s.ctrl.wg.Add(1)
		go func() {
			defer s.ctrl.wg.Done()
			if err := f(cctx); err != nil {
				s.log.Error("controller stopped", "controller", name, "err", err)
			}
		}()
	}
	g := gc.New(c, s.resource, s.log.With("component", "gc"))
	run("gc", func(ctx context.Context) error { return g.Run(ctx, 2) })
	ns := namespace.New(c, s.resource, s.log.With("component", "namespace"))
	run("namespace", func(ctx context.Context) error { return ns.Run(ctx, 2) })
}

func (s *Server) stopControllers() {
	if s.ctrl == nil {
		return
	}
	s.ctrl.cancel()
	s.ctrl.wg.Wait()
	s.ctrl = nil
}
