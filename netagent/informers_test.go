package netagent_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
)

// TestProxyInformersRun: the informers the service proxy follows are
// running when it gets them, whatever other features of the agent read.
// The proxy takes them as RunProxy does, once the agent has started its
// informers: an informer first registered at that point would never run
// and the proxy would wait forever.
func TestProxyInformersRun(t *testing.T) {
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	type informers struct{ services, slices *client.Informer }
	got := make(chan informers, 1)
	proxyFn := func(ctx context.Context, p netagent.ProxyParams) error {
		opts := client.InformerOptions{}
		svcs, slices := p.Informers.For(resServices, opts), p.Informers.For(resSlices, opts)
		if svcs != p.Services || slices != p.EndpointSlices {
			return errors.New("ProxyParams.Services and EndpointSlices are not the shared informers")
		}
		got <- informers{svcs, slices}
		<-ctx.Done()
		return nil
	}
	log := netagent.NewCallLog()
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-i", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: t.TempDir(), Runtime: "fake", DNSListenAddr: "127.0.0.1:0", DNSUpstreams: []string{},
		PodRoutes: netagent.PodRoutesNone, // no node netns: no routes in the machine's namespace
	}
	ag := startAgent(t, s, cfg, netagent.Deps{Runtime: netagent.NewFakeRuntime(log), NewPodNetwork: netagent.NewFakeNetwork(log, nil), Proxy: proxyFn})
	var inf informers
	select {
	case inf = <-got:
	case <-ag.done:
		t.Fatalf("agent stopped: %v", ag.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy was not run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !client.WaitForCacheSync(ctx, inf.services.HasSynced, inf.slices.HasSynced) {
		t.Fatal("the proxy's Service and EndpointSlice informers never synced")
	}
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "seen", Namespace: "default"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
	if err := admin.Create(ctx, resServices, "default", svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the proxy's informer has the new Service", func() (bool, error) {
		_, ok := inf.services.Get("default", "seen")
		return ok, nil
	})
}
