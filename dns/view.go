package dns

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"
)

// svcKind is how a Service's name answers.
type svcKind uint8

const (
	kindClusterIP svcKind = iota // A/AAAA are the ClusterIPs
	kindHeadless                 // A/AAAA are the ready endpoints
	kindExternal                 // a CNAME to the external name
)

// svcView is the derived, immutable DNS view of one Service and its
// EndpointSlices. The Store builds a new view whenever the Service or one of
// its slices changes and swaps the pointer under its write lock; a handler
// that got a view under the read lock may keep using it after unlocking.
//
// Names are relative: key is "<svc>.<ns>", the part of a query name before
// ".svc.<domain>.", so a lookup needs no string building.
type svcView struct {
	key    string // "<svc>.<ns>", lowercase
	kind   svcKind
	target string // kindExternal: lowercase FQDN of the CNAME target; "" if invalid

	// v4 and v6 are the address records at the Service name, sorted and
	// without duplicates: the ClusterIPs, or the ready endpoints' addresses.
	v4, v6 []netip.Addr

	// ports are the named Service ports (kindClusterIP only), sorted.
	ports []srvPort

	// hosts (kindHeadless only) are the ready endpoints' names and addresses,
	// one entry per (label, address), sorted by label then address. The label
	// is the endpoint's hostname, or its dashed address when it has none.
	hosts []hostAddr

	// srvs (kindHeadless only) are the SRV targets: one per ready endpoint
	// label and named endpoint port, sorted by (name, proto, label, port).
	srvs []srvTarget
}

type srvPort struct {
	name, proto string // lowercase, proto without the underscore ("tcp")
	port        uint16
}

type hostAddr struct {
	label string
	addr  netip.Addr
}

type srvTarget struct {
	name, proto string
	label       string
	port        uint16
}

// hasRecords reports whether the Service name has any record. A Service name
// without records (a headless Service without ready endpoints, a Service whose
// ClusterIP is not yet allocated) does not exist in DNS: the Kubernetes DNS
// specification (2.4.1) answers NXDOMAIN for it, and so for every name below it.
func (v *svcView) hasRecords() bool {
	if v.kind == kindExternal {
		return v.target != ""
	}
	return len(v.v4) > 0 || len(v.v6) > 0
}

// hostAddrs returns the entries of hosts with the given label.
func (v *svcView) hostAddrs(label string) []hostAddr {
	i, _ := slices.BinarySearchFunc(v.hosts, label, func(h hostAddr, l string) int { return strings.Compare(h.label, l) })
	j := i
	for j < len(v.hosts) && v.hosts[j].label == label {
		j++
	}
	return v.hosts[i:j]
}

// srvTargets returns the SRV targets of the named port and protocol.
func (v *svcView) srvTargets(name, proto string) []srvTarget {
	cmpKey := func(t srvTarget, _ struct{}) int {
		if c := strings.Compare(t.name, name); c != 0 {
			return c
		}
		return strings.Compare(t.proto, proto)
	}
	i, _ := slices.BinarySearchFunc(v.srvs, struct{}{}, cmpKey)
	j := i
	for j < len(v.srvs) && v.srvs[j].name == name && v.srvs[j].proto == proto {
		j++
	}
	return v.srvs[i:j]
}

// servicePort returns the named Service port (kindClusterIP).
func (v *svcView) servicePort(name, proto string) (srvPort, bool) {
	for _, p := range v.ports {
		if p.name == name && p.proto == proto {
			return p, true
		}
	}
	return srvPort{}, false
}

// hasProto reports whether _<proto>.<svc>.<ns>.svc.<domain> exists: some
// named port of that protocol has an SRV record.
func (v *svcView) hasProto(proto string) bool {
	if !v.hasRecords() {
		return false
	}
	switch v.kind {
	case kindClusterIP:
		for _, p := range v.ports {
			if p.proto == proto {
				return true
			}
		}
	case kindHeadless:
		for _, t := range v.srvs {
			if t.proto == proto {
				return true
			}
		}
	}
	return false
}

// buildView derives the DNS view of svc from its slices. slices must be
// sorted by name so that the view, and so the answers, are deterministic.
func buildView(key string, svc *Service, eps []*EndpointSlice) *svcView {
	v := &svcView{key: key}
	switch {
	case svc.Type == TypeExternalName:
		v.kind = kindExternal
		if t := lowerName(mdns.Fqdn(svc.ExternalName)); validHostname(t) {
			v.target = t
		}
	case svc.Headless:
		v.kind = kindHeadless
		buildHeadless(v, svc, eps)
	default:
		v.kind = kindClusterIP
		for _, ip := range svc.ClusterIPs {
			v.addAddr(ip)
		}
		for _, p := range svc.Ports {
			if p.Name == "" {
				continue
			}
			v.ports = append(v.ports, srvPort{name: strings.ToLower(p.Name), proto: protoLabel(p.Protocol), port: p.Port})
		}
		slices.SortFunc(v.ports, func(a, b srvPort) int {
			return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.proto, b.proto), cmp.Compare(a.port, b.port))
		})
		v.ports = slices.CompactFunc(v.ports, func(a, b srvPort) bool { return a.name == b.name && a.proto == b.proto })
	}
	v.v4 = sortAddrs(v.v4)
	v.v6 = sortAddrs(v.v6)
	return v
}

func buildHeadless(v *svcView, svc *Service, eps []*EndpointSlice) {
	for _, es := range eps {
		for i := range es.Endpoints {
			ep := &es.Endpoints[i]
			if !ep.Ready && !svc.PublishNotReady {
				continue
			}
			host := strings.ToLower(ep.Hostname)
			for _, a := range ep.Addresses {
				a = a.Unmap().WithZone("")
				if !a.IsValid() {
					continue
				}
				label := host
				if label == "" {
					label = dashedAddr(a)
				}
				v.addAddr(a)
				v.hosts = append(v.hosts, hostAddr{label: label, addr: a})
				for _, p := range es.Ports {
					if p.Name == "" {
						continue
					}
					v.srvs = append(v.srvs, srvTarget{name: strings.ToLower(p.Name), proto: protoLabel(p.Protocol), label: label, port: p.Port})
				}
			}
		}
	}
	slices.SortFunc(v.hosts, func(a, b hostAddr) int {
		return cmp.Or(strings.Compare(a.label, b.label), a.addr.Compare(b.addr))
	})
	v.hosts = slices.Compact(v.hosts)
	slices.SortFunc(v.srvs, func(a, b srvTarget) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.proto, b.proto),
			strings.Compare(a.label, b.label), cmp.Compare(a.port, b.port))
	})
	v.srvs = slices.Compact(v.srvs)
	v.hosts = slices.Clip(v.hosts)
	v.srvs = slices.Clip(v.srvs)
}

func (v *svcView) addAddr(a netip.Addr) {
	a = a.Unmap().WithZone("")
	switch {
	case a.Is4():
		v.v4 = append(v.v4, a)
	case a.Is6():
		v.v6 = append(v.v6, a)
	}
}

func sortAddrs(a []netip.Addr) []netip.Addr {
	if len(a) == 0 {
		return nil
	}
	slices.SortFunc(a, netip.Addr.Compare)
	return slices.Clip(slices.Compact(a))
}

// validHostname reports whether the absolute lowercase name is made of
// labels of letters, digits, '-' and '_' (1-63 bytes each, 254 in all with
// the final dot): a name that packs and needs no escaping.
func validHostname(name string) bool {
	if len(name) < 2 || len(name) > 254 || name[len(name)-1] != '.' {
		return false
	}
	l := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '.':
			if l == 0 || l > 63 {
				return false
			}
			l = 0
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			l++
		default:
			return false
		}
	}
	return true
}

// protoLabel is the SRV protocol label of a Kubernetes protocol: "tcp",
// "udp", "sctp" (without the underscore).
func protoLabel(p string) string {
	switch p {
	case "", "TCP", "tcp":
		return "tcp"
	case "UDP", "udp":
		return "udp"
	case "SCTP", "sctp":
		return "sctp"
	}
	return strings.ToLower(p)
}
