package netagent

import (
	"context"
	"net/netip"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Test fakes for the external tests (package netagent_test).

// CallLog is the fakes' shared call log.
type CallLog = callLog

// NewCallLog starts a log now.
func NewCallLog() *CallLog { return &callLog{start: time.Now()} }

// Calls returns the log.
func (l *callLog) Calls() []string { return l.all() }

// Find is callLog.find.
func (l *callLog) Find(s string, from int) int { return l.find(s, from) }

// FakeRuntime is the stateful in-memory runtime.
type FakeRuntime = fakeRuntime

// NewFakeRuntime returns an empty one.
func NewFakeRuntime(l *CallLog) *FakeRuntime { return newFakeRuntime(l) }

// Running returns the running containers of a pod (by name).
func (r *fakeRuntime) Running(pod string) []runtime.ContainerStatus { return r.running(pod) }

// Starts counts the container starts.
func (r *fakeRuntime) Starts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.starts)
}

// SetHealth sets a probe flag.
func (r *fakeRuntime) SetHealth(pod, container, flag string, ok bool) {
	r.setHealth(pod, container, flag, ok)
}

// FakeNet is the stateful in-memory pod network.
type FakeNet = fakeNet

// NewFakeNetwork returns a Deps.NewPodNetwork that builds (once) a fake
// network on the podCIDR it is given and hands it to got.
func NewFakeNetwork(l *CallLog, got func(*FakeNet)) func(context.Context, NetworkParams) (PodNetwork, error) {
	var n *fakeNet
	return func(_ context.Context, p NetworkParams) (PodNetwork, error) {
		if n == nil {
			n = newFakeNet(l)
			n.gw = p.PodCIDR.Masked().Addr().Next()
			if got != nil {
				got(n)
			}
		}
		return n, nil
	}
}

// Has reports whether the pod has a network.
func (n *fakeNet) Has(uid string) bool { return n.has(uid) }

// IP returns a pod's IP.
func (n *fakeNet) IP(uid string) netip.Addr {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ips[uid]
}
