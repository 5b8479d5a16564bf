package podroutes

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"

	"github.com/vishvananda/netlink"
)

func newVX(t *testing.T, f *fakeNetlink, nodeIP string) *Reconciler {
	t.Helper()
	r, err := NewVXLANReconciler(f, VXLAN{NodeIP: netip.MustParseAddr(nodeIP), PodCIDR: netip.MustParsePrefix("10.244.0.0/24")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantTunnel(t *testing.T, f *fakeNetlink, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := f.tunnel(); !slices.Equal(got, want) {
		t.Fatalf("tunnel entries:\n got %q\nwant %q", got, want)
	}
}

func (f *fakeNetlink) device(t *testing.T) *netlink.Vxlan {
	t.Helper()
	l, err := f.LinkByName(VXLANDevice)
	if err != nil {
		t.Fatalf("no %s: %v", VXLANDevice, err)
	}
	return l.(*netlink.Vxlan)
}

func TestVtepMAC(t *testing.T) {
	if got := VtepMAC(netip.MustParsePrefix("10.244.3.0/24")).String(); got != "0e:5c:0a:f4:03:00" {
		t.Fatalf("VtepMAC: %s", got)
	}
}

func TestVXLANSyncBuildsTheTunnelAndIsIdempotent(t *testing.T) {
	// The peers are on other networks: vxlan needs no on-link gateway.
	f := newFake("192.0.2.0/24")
	r := newVX(t, f, "192.0.2.10")
	peers := []Peer{peer("b", "10.244.1.0/24", "198.51.100.11"), peer("c", "10.244.2.0/24", "203.0.113.12")}
	res, err := r.Sync(peers)
	if err != nil || len(res.Failed) > 0 || len(res.Added) != 2 {
		t.Fatalf("Sync: %+v %v", res, err)
	}
	d := f.device(t)
	if d.VxlanId != VXLANID || d.Port != VXLANPort || !d.SrcAddr.Equal(net.ParseIP("192.0.2.10")) || d.Learning ||
		d.MTU != DefaultVXLANMTU || d.HardwareAddr.String() != "0e:5c:0a:f4:00:00" || d.Flags&net.FlagUp == 0 {
		t.Fatalf("device: %+v", d)
	}
	if a := f.addrs[d.Index]; !slices.Equal(a, []netip.Prefix{netip.MustParsePrefix("10.244.0.0/32")}) {
		t.Fatalf("device addresses: %v", a)
	}
	idx := d.Index
	wantDump(t, f, "10.244.1.0/24 via 10.244.1.0 proto 92 dev "+itoa(idx)+" onlink", "10.244.2.0/24 via 10.244.2.0 proto 92 dev "+itoa(idx)+" onlink")
	wantTunnel(t, f,
		"10.244.1.0 lladdr 0e:5c:0a:f4:01:00", "0e:5c:0a:f4:01:00 dst 198.51.100.11",
		"10.244.2.0 lladdr 0e:5c:0a:f4:02:00", "0e:5c:0a:f4:02:00 dst 203.0.113.12")
	adds, dels, links := f.adds, f.dels, f.linkAdds
	for range 2 {
		if res, err := r.Sync(peers); err != nil || len(res.Added)+len(res.Deleted)+len(res.Failed) != 0 {
			t.Fatalf("repeated Sync: %+v %v", res, err)
		}
	}
	if f.adds != adds || f.dels != dels || f.linkAdds != links {
		t.Fatal("repeated Syncs changed routes or the device")
	}

	// c leaves, b moves: only their entries change.
	if _, err := r.Sync([]Peer{peer("b", "10.244.1.0/24", "198.51.100.99")}); err != nil {
		t.Fatal(err)
	}
	wantDump(t, f, "10.244.1.0/24 via 10.244.1.0 proto 92 dev "+itoa(idx)+" onlink")
	wantTunnel(t, f, "10.244.1.0 lladdr 0e:5c:0a:f4:01:00", "0e:5c:0a:f4:01:00 dst 198.51.100.99")
}

func TestVXLANReplacesAMismatchedDevice(t *testing.T) {
	f := newFake("192.0.2.0/24")
	if _, err := newVX(t, f, "192.0.2.10").Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11")}); err != nil {
		t.Fatal(err)
	}
	old := f.device(t).Index
	// The node's address changed: a new device, its routes rebuilt.
	if _, err := newVX(t, f, "192.0.2.20").Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11")}); err != nil {
		t.Fatal(err)
	}
	d := f.device(t)
	if d.Index == old || !d.SrcAddr.Equal(net.ParseIP("192.0.2.20")) {
		t.Fatalf("device not replaced: %+v", d)
	}
	wantDump(t, f, "10.244.1.0/24 via 10.244.1.0 proto 92 dev "+itoa(d.Index)+" onlink")
	wantTunnel(t, f, "10.244.1.0 lladdr 0e:5c:0a:f4:01:00", "0e:5c:0a:f4:01:00 dst 192.0.2.11")
}

func TestHostGWRemovesAnEarlierVXLANDevice(t *testing.T) {
	f := newFake("192.0.2.0/24")
	f.addForeign("10.99.0.0/16", "192.0.2.1")
	if _, err := newVX(t, f, "192.0.2.10").Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11")}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewReconciler(f, nil).Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.LinkByName(VXLANDevice); err == nil {
		t.Fatal("the vxlan device is still there")
	}
	wantDump(t, f, "10.244.1.0/24 via 192.0.2.11 proto 92", "10.99.0.0/16 via 192.0.2.1 proto 4")
	wantTunnel(t, f)
}

func TestNewVXLANReconcilerNeedsIPv4(t *testing.T) {
	if _, err := NewVXLANReconciler(newFake(), VXLAN{NodeIP: netip.MustParseAddr("2001:db8::1"), PodCIDR: netip.MustParsePrefix("10.244.0.0/24")}, nil); err == nil {
		t.Fatal("an IPv6 node address was accepted")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
