package proxytest

import "net/netip"

// Addresses of the simulated node, shared by the kernel tests (where they
// exist only inside the test's namespaces) and the Conformance table.
var (
	PodCIDR     = netip.MustParsePrefix("10.244.0.0/24")
	ClusterCIDR = netip.MustParsePrefix("10.244.0.0/16")
	ServiceCIDR = netip.MustParsePrefix("10.96.0.0/16")
	Gateway     = netip.MustParseAddr("10.244.0.1")
	NodeIP      = netip.MustParseAddr("192.168.77.1")
	ClientIP    = netip.MustParseAddr("192.168.77.2")
)

const (
	// PodHTTPPort and PodUDPPort: every pod answers its name on them.
	PodHTTPPort = 8080
	PodUDPPort  = 5353
	// NodeName is the simulated node's name.
	NodeName = "node-a"
)
