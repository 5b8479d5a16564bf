package server

import "context"

// builtinAgent is the node agent `skiff server` runs for its own machine
// unless --disable-agent.
type builtinAgent struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *Server) startAgent(ctx context.Context) error { return nil }

func (s *Server) stopAgent() {
	if s.agent == nil {
		return
	}
	s.agent.cancel()
	<-s.agent.done
	s.agent = nil
}
