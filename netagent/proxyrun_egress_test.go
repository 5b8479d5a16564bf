package netagent

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/egress"
)

// fakeEgress records what keepEgress asks for.
type fakeEgress struct {
	mu      sync.Mutex
	ensured []egress.Config
	removed int
	fail    error
}

func (f *fakeEgress) Ensure(_ context.Context, c egress.Config) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ensured = append(f.ensured, c)
	return f.fail
}

func (f *fakeEgress) Rules(context.Context) ([]string, error) { return nil, nil }

func (f *fakeEgress) Remove(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed++
	return nil
}

func TestKeepEgress(t *testing.T) {
	pod, cluster := netip.MustParsePrefix("10.244.3.0/24"), netip.MustParsePrefix("10.244.0.0/16")
	log := slog.New(slog.DiscardHandler)

	t.Run("off removes once and returns", func(t *testing.T) {
		f := &fakeEgress{}
		keepEgress(context.Background(), f, ProxyParams{PodCIDR: pod, ClusterCIDR: cluster}, log)
		if f.removed != 1 || len(f.ensured) != 0 {
			t.Fatalf("removed %d, ensured %v", f.removed, f.ensured)
		}
	})

	t.Run("on ensures until ctx ends, even after a failure", func(t *testing.T) {
		f := &fakeEgress{fail: errors.New("no nat table")}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			keepEgress(ctx, f, ProxyParams{PodCIDR: pod, ClusterCIDR: cluster, EgressMasquerade: true}, log)
			close(done)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for {
			f.mu.Lock()
			n := len(f.ensured)
			f.mu.Unlock()
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Ensure was never called")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("keepEgress did not return after ctx ended")
		}
		if got := f.ensured[0]; got.PodCIDR != pod || got.ClusterCIDR != cluster {
			t.Fatalf("Ensure(%+v), want podCIDR %s, cluster %s", got, pod, cluster)
		}
		if f.removed != 0 {
			t.Fatal("Remove called with the masquerade on")
		}
	})
}
