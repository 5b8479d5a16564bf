package nftables

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"strings"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// Names of the table, and of the chains and sets every sync writes. They
// follow kube-proxy's nftables mode (pkg/proxy/nftables/proxier.go) where
// Skiff has the same object; the table is Skiff's own, so nothing needs a
// "skiff-" prefix.
const (
	// TableName is Skiff's table, in the ip family (and ip6 when a Service
	// has an IPv6 address).
	TableName = "skiff"

	servicesChain          = "services"
	serviceIPsMap          = "service-ips"
	serviceNodePortsMap    = "service-nodeports"
	serviceEndpointsCheck  = "service-endpoints-check"
	nodePortEndpointsCheck = "nodeport-endpoints-check"
	noEndpointServicesMap  = "no-endpoint-services"
	noEndpointNodePortsMap = "no-endpoint-nodeports"
	rejectChain            = "reject-chain"
	clusterIPsCheckChain   = "cluster-ips-check"
	firewallIPsMap         = "firewall-ips"
	firewallCheckChain     = "firewall-check"
	markMasqChain          = "mark-for-masquerade"
	masqueradingChain      = "masquerading"
	// hairpinSet holds "ep . ep" for every endpoint address: a DNATed
	// packet whose source is its own destination is masqueraded.
	hairpinSet = "hairpin"
	// endpointMapPrefix names the endpoint maps endpoints-0 ...
	// endpoints-(endpointShards-1).
	endpointMapPrefix = "endpoints-"

	// MasqueradeMark is the packet mark bit that asks for masquerade.
	MasqueradeMark uint32 = 0x4000
)

// Base chain priorities. Filter chains run before DNAT (-110, as
// kube-proxy's "dstnat - 10"), except the *-post-dnat ones (-90) which must
// see the DNATed address. nft rejects "priority dstnat" on the output
// hook (docs/platform.md, "nftables"), so every priority is a number.
const (
	prioFilterPreDNAT  = -110
	prioDNAT           = -100
	prioFilterPostDNAT = -90
	prioSNAT           = 100
)

// Prefixes of per-Service-port chains and sets (kube-proxy's).
const (
	chainNamePrefixLengthMax = 16
	// nameLengthMax is NFT_NAME_MAXLEN - 1.
	nameLengthMax          = 255
	chainNameBaseLengthMax = nameLengthMax - chainNamePrefixLengthMax

	clusterChainPrefix       = "service-"
	localChainPrefix         = "local-"
	externalChainPrefix      = "external-"
	firewallChainPrefix      = "firewall-"
	endpointChainPrefix      = "endpoint-"
	affinitySetPrefix        = "affinity-"
	serviceChainNameSentinel = "/"
)

// hashAndTruncate prefixes name with 8 base32 characters of its SHA-256
// and truncates the result to chainNameBaseLengthMax, as kube-proxy's
// nftables mode does. The hash keeps names unique when the end is cut off
// and makes names that differ in one character easy to tell apart.
func hashAndTruncate(name string) string {
	hash := sha256.Sum256([]byte(name))
	encoded := base32.StdEncoding.EncodeToString(hash[:])
	name = encoded[:8] + "-" + name
	if len(name) > chainNameBaseLengthMax {
		name = name[:chainNameBaseLengthMax-3] + "..."
	}
	return name
}

// servicePortChainNameBase is "HASH-namespace/name/protocol/port", e.g.
// "ULMVA6XW-ns1/svc1/tcp/p80". Namespace, Service and port names are
// [a-z0-9-], all allowed in nft names; "/" separates them and cannot occur
// inside them, so every per-Service name contains a "/" and no fixed name
// does.
func servicePortChainNameBase(n proxy.ServicePortName, proto Proto) string {
	return hashAndTruncate(fmt.Sprintf("%s/%s/%s/%s", n.Namespace, n.Name, proto, n.Port))
}

// isServiceObjectName reports whether a chain or set belongs to a Service
// port (and so may be stale).
func isServiceObjectName(name string) bool {
	return strings.Contains(name, serviceChainNameSentinel)
}

// servicePortEndpointChainNameBase is
// "HASH-namespace/name/protocol/port__ip/port" (":" in an IPv6 address
// becomes ".").
func servicePortEndpointChainNameBase(n proxy.ServicePortName, proto Proto, ep netip.AddrPort) string {
	ip := strings.ReplaceAll(ep.Addr().String(), ":", ".")
	return hashAndTruncate(fmt.Sprintf("%s/%s/%s/%s__%s/%d", n.Namespace, n.Name, proto, n.Port, ip, ep.Port()))
}

func endpointMapName(shard int) string {
	return fmt.Sprintf("%s%d", endpointMapPrefix, shard)
}
