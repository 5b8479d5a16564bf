package cni

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sysctl reads and writes kernel parameters of the calling thread's
// network namespace. Names are slash-separated paths under /proc/sys
// ("net/ipv4/ip_forward").
type Sysctl interface {
	Get(name string) (string, error)
	Set(name, value string) error
}

// ProcSysctl is the real Sysctl: files under /proc/sys. Network sysctls
// there resolve against the namespace of the thread that opens them, so
// callers lock their OS thread (Network does) to hit a given namespace.
type ProcSysctl struct{}

func (ProcSysctl) path(name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if name == "" || clean != "/"+name || strings.Contains(name, "..") {
		return "", fmt.Errorf("cni: sysctl %q: invalid name", name)
	}
	return filepath.Join("/proc/sys", clean), nil
}

// Get returns the value with the trailing newline trimmed.
func (s ProcSysctl) Get(name string) (string, error) {
	p, err := s.path(name)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("cni: sysctl get %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Set writes value.
func (s ProcSysctl) Set(name, value string) error {
	p, err := s.path(name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cni: sysctl set %s: %w", name, err)
	}
	_, werr := f.WriteString(value)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("cni: sysctl set %s=%s: %w", name, value, werr)
	}
	if cerr != nil {
		return fmt.Errorf("cni: sysctl set %s=%s: %w", name, value, cerr)
	}
	return nil
}
