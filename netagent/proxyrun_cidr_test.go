package netagent

import (
	"net/netip"
	"testing"
)

func TestProxyClusterCIDR(t *testing.T) {
	pod := netip.MustParsePrefix("10.244.3.0/24")
	cluster := netip.MustParsePrefix("10.244.0.0/16")
	if got := clusterCIDR(ProxyParams{PodCIDR: pod, ClusterCIDR: cluster}); got != cluster {
		t.Fatalf("with the cluster CIDR known: %s", got)
	}
	if got := clusterCIDR(ProxyParams{PodCIDR: pod}); got != pod {
		t.Fatalf("without it: %s, want the podCIDR", got)
	}
}
