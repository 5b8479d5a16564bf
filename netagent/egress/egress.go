package egress

import (
	"errors"
	"fmt"
	"net/netip"
)

// Config is what to masquerade.
type Config struct {
	// PodCIDR is this node's pod range: the sources that are masqueraded.
	PodCIDR netip.Prefix
	// ClusterCIDR holds every node's pods: destinations in it are never
	// masqueraded. When it is not known, PodCIDR (then traffic to other
	// nodes' pods is masqueraded too: it works, the source is lost).
	ClusterCIDR netip.Prefix
}

// multicast destinations are left alone, as the bridge plugin's ipMasq
// does.
var (
	multicast4 = netip.MustParsePrefix("224.0.0.0/4")
	multicast6 = netip.MustParsePrefix("ff00::/8")
)

// normalize checks c and fills ClusterCIDR.
func (c Config) normalize() (Config, error) {
	if !c.PodCIDR.IsValid() {
		return c, errors.New("egress: no podCIDR")
	}
	c.PodCIDR = c.PodCIDR.Masked()
	if !c.ClusterCIDR.IsValid() {
		c.ClusterCIDR = c.PodCIDR
	}
	c.ClusterCIDR = c.ClusterCIDR.Masked()
	if c.PodCIDR.Addr().Is4() != c.ClusterCIDR.Addr().Is4() {
		return c, fmt.Errorf("egress: podCIDR %s and cluster CIDR %s are of different families", c.PodCIDR, c.ClusterCIDR)
	}
	return c, nil
}

func (c Config) multicast() netip.Prefix {
	if c.PodCIDR.Addr().Is4() {
		return multicast4
	}
	return multicast6
}
