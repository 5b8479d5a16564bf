package server

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/netip"
	"testing"

	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns"
)

// builtinAgent is the node agent `skiff server` runs for its own machine
// unless --disable-agent. It is an ordinary agent: it joins over the
// server's own HTTPS URL with the join token, like `skiff agent` on another
// machine, and keeps its state in the server's data dir.
type builtinAgent struct {
	agent  *netagent.Agent
	cancel context.CancelFunc
	done   chan struct{}
}

// startAgent starts the built-in agent in the background (Start does not
// wait for it to be Ready; see Agent). A test binary never runs it in the
// machine's own network namespace: without Config.AgentNetNS it is skipped
// with a warning, so a test that forgets DisableAgent cannot touch the
// host's network.
func (s *Server) startAgent(ctx context.Context) error {
	if s.cfg.DisableAgent {
		return nil
	}
	if testing.Testing() && s.cfg.AgentNetNS == "" {
		s.log.Warn("built-in agent not started: a test must set AgentNetNS (a netns it created) or DisableAgent")
		return nil
	}
	log := s.log.With("component", "agent")
	cg, why, err := netagent.NodeCgroups(s.cfg.Cgroups)
	if err != nil {
		return fmt.Errorf("server: built-in agent: %w", err)
	}
	if cg == nil {
		log.Info("no pod cgroups: resources.limits and requests are not enforced", "why", why)
	}
	rt, rtName, err := netagent.SelectRuntime(ctx, s.cfg.Runtime, netagent.RuntimeOptions{DataDir: s.cfg.DataDir, ContainerdSocket: s.cfg.ContainerdSocket, ContainerdLogger: s.cfg.ContainerdLogger, InsecureRegistries: s.cfg.InsecureRegistries, Cgroups: cg, Logger: log})
	if err != nil {
		return fmt.Errorf("server: built-in agent: %w", err)
	}
	ips := s.parsed.NodeIPs
	if len(ips) == 0 {
		if a, ok := s.advertiseAddr(); ok {
			ips = []netip.Addr{a}
		}
	}
	cfg := netagent.Config{
		Server:               s.url,
		CAPEM:                s.bundle.CACertPEM,
		Token:                s.bundle.NodeToken,
		NodeName:             s.cfg.AgentNodeName,
		NodeIPs:              ips,
		DataDir:              s.cfg.DataDir,
		CgroupRoot:           s.cfg.CgroupRoot,
		AllowedUnsafeSysctls: s.cfg.AllowedUnsafeSysctls,
		Runtime:              rtName,
		ProxyMode:            s.cfg.ProxyMode,
		IPVSScheduler:        s.cfg.IPVSScheduler,
		ClusterCIDR:          s.parsed.ClusterCIDR,
		PodRoutes:            s.cfg.PodRoutes,
		NoEgressMasquerade:   !s.cfg.EgressMasquerade,
		ClusterDomain:        s.cfg.ClusterDomain,
		DNSUpstreams:         s.cfg.DNSUpstream,
		Logger:               log,
		// The proxy's kube-proxy metrics join the API server's /metrics;
		// the built-in agent opens no metrics or healthz listener.
		Registerer: s.reg,
		// 0 asks netagent for its default; --pod-termination-delay 0 means none.
		TerminationDelay: cmp.Or(s.cfg.PodTerminationDelay, -1),
	}
	deps := netagent.Deps{Runtime: rt, Proxy: s.proxyFunc()}
	if cg != nil {
		deps.Cgroups = cg
	}
	if p := s.cfg.AgentNetNS; p != "" {
		deps.NodeNetNS = func(fn func() error) error { return netns.Do(p, fn) }
	}
	closeRuntime := func() {
		if cl, ok := rt.(io.Closer); ok {
			// Stops a containerd the agent started; pods keep running.
			if err := cl.Close(); err != nil {
				log.Warn("closing the runtime", "err", err)
			}
		}
	}
	a, err := netagent.New(cfg, deps)
	if err != nil {
		closeRuntime()
		return fmt.Errorf("server: built-in agent: %w", err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.agent = &builtinAgent{agent: a, cancel: cancel, done: make(chan struct{})}
	s.nodeAPI.builtin.Store(a) // logs and traces of its pods are read in-process
	go func() {
		defer close(s.agent.done)
		defer closeRuntime()
		if err := a.Run(actx); err != nil && actx.Err() == nil {
			log.Error("built-in agent stopped", "err", err)
		}
	}()
	log.Info("built-in agent started", "node", a.NodeName(), "runtime", rtName)
	return nil
}

// proxyFunc is the service proxy the built-in agent runs (--proxy-mode),
// in the agent's node namespace.
func (s *Server) proxyFunc() netagent.ProxyFunc { return netagent.RunProxy }

// Agent is the built-in agent (nil with --disable-agent).
func (s *Server) Agent() *netagent.Agent {
	if s.agent == nil {
		return nil
	}
	return s.agent.agent
}

// stopAgent stops the built-in agent (its pods keep running).
func (s *Server) stopAgent() {
	if s.agent == nil {
		return
	}
	if s.nodeAPI != nil {
		s.nodeAPI.builtin.Store(nil)
	}
	s.agent.cancel()
	<-s.agent.done
	s.agent = nil
}
