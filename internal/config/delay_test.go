package config

import (
	"testing"
	"time"
)

func TestPodTerminationDelay(t *testing.T) {
	s := ServerDefaults()
	a := AgentDefaults()
	a.Server = "https://127.0.0.1:6443"
	a.Token = "t"
	if s.PodTerminationDelay != 2*time.Second || a.TerminationDelay != 2*time.Second {
		t.Fatalf("defaults %v %v, want 2s", s.PodTerminationDelay, a.TerminationDelay)
	}
	s.PodTerminationDelay, a.TerminationDelay = 0, 0
	if _, err := s.Parse(); err != nil {
		t.Fatalf("server, delay 0: %v", err)
	}
	if _, err := a.Parse(); err != nil {
		t.Fatalf("agent, delay 0: %v", err)
	}
	s.PodTerminationDelay, a.TerminationDelay = -time.Second, -time.Second
	if _, err := s.Parse(); err == nil {
		t.Error("server: a negative delay was accepted")
	}
	if _, err := a.Parse(); err == nil {
		t.Error("agent: a negative delay was accepted")
	}
}
