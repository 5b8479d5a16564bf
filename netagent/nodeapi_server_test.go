package netagent_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent"
)

// TestAgentUnderNodeAuthorization: what the agent reads and serves keeps
// working under the server's node authorization. The server reaches the
// agent's node API (on loopback, the address the agent joined from) for a
// pod's log; the node DNS answers the pod record of a pod on another node,
// which the agent sees only through the server's narrowed view of pods
// that are not its own.
func TestAgentUnderNodeAuthorization(t *testing.T) {
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := netagent.NewCallLog()
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-n", NodeIPs: []netip.Addr{netip.MustParseAddr("127.0.0.1")},
		DataDir: t.TempDir(), Runtime: "fake", DNSListenAddr: "127.0.0.1:0", DNSUpstreams: []string{},
		PodRoutes: netagent.PodRoutesNone, NodeAPIListen: "127.0.0.1:0",
		LeaseRenewInterval: 500 * time.Millisecond, RelistPeriod: 100 * time.Millisecond,
	}
	ag := startAgent(t, s, cfg, netagent.Deps{Runtime: netagent.NewFakeRuntime(log), NewPodNetwork: netagent.NewFakeNetwork(log, nil)})

	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "logged"}, Spec: api.PodSpec{NodeName: "node-n",
		Containers: []api.Container{{Name: "app", Image: "netexec", Command: []string{"netexec"}}}}}
	if err := admin.Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	var p api.Pod
	eventually(t, 20*time.Second, "pod running", func() (bool, error) {
		err := admin.Get(ctx, resPods, "default", "logged", &p)
		return err == nil && p.Status.Phase == api.PodRunning, err
	})
	eventually(t, 10*time.Second, "the log through the node API", func() (bool, error) {
		var out []byte
		err := admin.Do(ctx, "GET", "/api/v1/namespaces/default/pods/logged/log?container=app", nil, &out)
		return err == nil, err
	})

	// A pod of another node, with an address.
	other := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "elsewhere"}, Spec: api.PodSpec{NodeName: "node-z",
		Containers: []api.Container{{Name: "app", Image: "netexec", Env: []api.EnvVar{{Name: "K", Value: "v"}}}}}}
	if err := admin.Create(ctx, resPods, "default", other); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "status of the other node's pod", func() (bool, error) {
		var o api.Pod
		if err := admin.Get(ctx, resPods, "default", "elsewhere", &o); err != nil {
			return false, err
		}
		o.Status.Phase, o.Status.PodIP, o.Status.PodIPs = api.PodRunning, "10.244.9.9", []api.PodIP{{IP: "10.244.9.9"}}
		err := admin.Update(ctx, resPods, "default", &o, "status")
		return err == nil, err
	})
	eventually(t, 10*time.Second, "the node DNS answers 10-244-9-9.default.pod", func() (bool, error) {
		m := new(mdns.Msg)
		m.SetQuestion("10-244-9-9.default.pod.cluster.local.", mdns.TypeA)
		r, err := mdns.Exchange(m, ag.DNSAddr())
		if err != nil || r.Rcode != mdns.RcodeSuccess || len(r.Answer) != 1 {
			return false, err
		}
		return r.Answer[0].(*mdns.A).A.String() == "10.244.9.9", nil
	})
}
