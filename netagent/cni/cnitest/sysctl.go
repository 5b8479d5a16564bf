package cnitest

import (
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"sync"
)

// Sysctl is a fake cni.Sysctl holding the keys of a fresh network
// namespace.
type Sysctl struct {
	mu     sync.Mutex
	values map[string]string
	sets   []string // "name=value", in order
}

// BoolKeys are the keys whose values must be 0 or 1.
var boolKeys = map[string]bool{
	"net/ipv4/ip_forward":                  true,
	"net/bridge/bridge-nf-call-iptables":   true,
	"net/bridge/bridge-nf-call-ip6tables":  true,
	"net/ipv4/conf/all/send_redirects":     true,
	"net/ipv4/conf/default/send_redirects": true,
}

// NewSysctl returns the sysctls of a fresh namespace on a kernel with
// br_netfilter: ip_forward 0, bridge-nf-call-iptables 1.
func NewSysctl() *Sysctl {
	return &Sysctl{values: map[string]string{
		"net/ipv4/ip_forward":                  "0",
		"net/bridge/bridge-nf-call-iptables":   "1",
		"net/bridge/bridge-nf-call-ip6tables":  "1",
		"net/ipv4/conf/all/send_redirects":     "1",
		"net/ipv4/conf/default/send_redirects": "1",
	}}
}

// Get implements cni.Sysctl.
func (s *Sysctl) Get(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[name]
	if !ok {
		return "", fmt.Errorf("sysctl %s: %w", name, fs.ErrNotExist)
	}
	return v, nil
}

// Set implements cni.Sysctl.
func (s *Sysctl) Set(name, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values[name]; !ok && !isInterfaceKey(name) {
		return fmt.Errorf("sysctl %s: %w", name, fs.ErrNotExist)
	}
	if (boolKeys[name] || isInterfaceKey(name)) && value != "0" && value != "1" {
		return fmt.Errorf("sysctl %s=%q: invalid argument", name, value)
	}
	if false && value != "0" && value != "1" {
		return fmt.Errorf("sysctl %s=%q: invalid argument", name, value)
	}
	s.values[name] = value
	s.sets = append(s.sets, name+"="+value)
	return nil
}

// Remove drops a key, as on a kernel without the feature (no
// br_netfilter: no net/bridge/*).
func (s *Sysctl) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.values, name)
}

// Values is a copy of every key's value.
func (s *Sysctl) Values() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.values)
}

// Sets lists the writes made, "name=value", in order.
func (s *Sysctl) Sets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sets...)
}

// isInterfaceKey reports a per-interface key (net/ipv4/conf/<if>/send_redirects).
// The fake does not know which links exist, so it accepts any interface.
func isInterfaceKey(name string) bool {
	rest, ok := strings.CutPrefix(name, "net/ipv4/conf/")
	if !ok {
		return false
	}
	ifname, key, ok := strings.Cut(rest, "/")
	return ok && ifname != "" && key == "send_redirects"
}
