package dns_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/dns"
)

// Example serves one Service on a loopback port and asks for it.
func Example() {
	store := dns.NewStore()
	_ = store.UpsertService(dns.Service{
		Namespace: "default", Name: "web", Type: dns.TypeClusterIP,
		ClusterIPs: []netip.Addr{netip.MustParseAddr("10.96.0.10")},
	})
	store.SetSynced(true) // the watch cache has listed everything

	srv, err := dns.NewServer(dns.Config{Upstreams: []string{}}, store)
	if err != nil {
		fmt.Println(err)
		return
	}
	udp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	tcp, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx, udp, tcp) }()

	q := new(mdns.Msg)
	q.SetQuestion("web.default.svc.cluster.local.", mdns.TypeA)
	r, _, err := new(mdns.Client).Exchange(q, udp.LocalAddr().String())
	if err != nil {
		fmt.Println(err)
	} else {
		fmt.Println(mdns.RcodeToString[r.Rcode], r.Answer[0])
	}

	cancel()
	fmt.Println("serve:", <-done)
	// Output:
	// NOERROR web.default.svc.cluster.local.	5	IN	A	10.96.0.10
	// serve: <nil>
}
