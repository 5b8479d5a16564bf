package netagent

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// Limits of a resolv.conf, as the kubelet applies them.
const (
	maxNameservers = 3
	maxSearches    = 32
)

// resolvConf is a parsed or planned resolv.conf.
type resolvConf struct {
	nameservers []string
	searches    []string
	options     []string // "name" or "name:value"
}

// parseResolvConf reads nameserver, search/domain and options lines.
func parseResolvConf(data []byte) resolvConf {
	var rc resolvConf
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.nameservers = append(rc.nameservers, f[1])
		case "search", "domain":
			rc.searches = append(rc.searches[:0], f[1:]...)
		case "options":
			rc.options = append(rc.options, f[1:]...)
		}
	}
	return rc
}

// podResolvConf plans a pod's resolv.conf (Kubernetes' rules):
//
//   - ClusterFirst (and the empty default): nameserver = the node DNS,
//     search <ns>.svc.<d> svc.<d> <d>, options ndots:5. A hostNetwork pod
//     with ClusterFirst gets Default, as in Kubernetes.
//   - ClusterFirstWithHostNet: as ClusterFirst.
//   - Default: the node's resolv.conf.
//   - None: only dnsConfig.
//
// dnsConfig is then merged: nameservers and searches appended (duplicates
// dropped), options merged by name with dnsConfig winning; at most 3
// nameservers and 32 search domains are kept.
func podResolvConf(pod *api.Pod, nodeDNS netip.Addr, domain string, host resolvConf) (resolvConf, error) {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = api.DNSClusterFirst
	}
	if policy == api.DNSClusterFirst && pod.Spec.HostNetwork {
		policy = api.DNSDefault
	}
	var rc resolvConf
	switch policy {
	case api.DNSClusterFirst, api.DNSClusterFirstWithHostNet:
		if !nodeDNS.IsValid() {
			return rc, fmt.Errorf("dnsPolicy %s: the node has no DNS address", policy)
		}
		ns := pod.Namespace
		rc = resolvConf{
			nameservers: []string{nodeDNS.String()},
			searches:    []string{ns + ".svc." + domain, "svc." + domain, domain},
			options:     []string{"ndots:5"},
		}
	case api.DNSDefault:
		rc = resolvConf{
			nameservers: slices.Clone(host.nameservers),
			searches:    slices.Clone(host.searches),
			options:     slices.Clone(host.options),
		}
	case api.DNSNone:
		if pod.Spec.DNSConfig == nil {
			return rc, fmt.Errorf("dnsPolicy None needs dnsConfig")
		}
	default:
		return rc, fmt.Errorf("unsupported dnsPolicy %q", policy)
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		for _, n := range dc.Nameservers {
			if !slices.Contains(rc.nameservers, n) {
				rc.nameservers = append(rc.nameservers, n)
			}
		}
		for _, s := range dc.Searches {
			if !slices.Contains(rc.searches, s) {
				rc.searches = append(rc.searches, s)
			}
		}
		for _, o := range dc.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			rc.options = slices.DeleteFunc(rc.options, func(s string) bool {
				name, _, _ := strings.Cut(s, ":")
				return name == o.Name
			})
			rc.options = append(rc.options, opt)
		}
	}
	if len(rc.nameservers) > maxNameservers {
		rc.nameservers = rc.nameservers[:maxNameservers]
	}
	if len(rc.searches) > maxSearches {
		rc.searches = rc.searches[:maxSearches]
	}
	return rc, nil
}

func (rc resolvConf) String() string {
	var b strings.Builder
	for _, n := range rc.nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", n)
	}
	if len(rc.searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(rc.searches, " "))
	}
	if len(rc.options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(rc.options, " "))
	}
	return b.String()
}

// podHostname is the pod's host name: spec.hostname, else its name, cut
// to 63 characters (without a trailing dash or dot), as the kubelet.
func podHostname(pod *api.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// podHosts renders the pod's /etc/hosts: the localhost lines, the pod's
// IP with its host name (preceded by its FQDN when it has a subdomain:
// <hostname>.<subdomain>.<ns>.svc.<domain>), then its hostAliases.
func podHosts(pod *api.Pod, ip netip.Addr, domain string) string {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (written by the skiff agent).\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	if ip.IsValid() {
		h := podHostname(pod)
		if pod.Spec.Subdomain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", ip, h, pod.Spec.Subdomain, pod.Namespace, domain, h)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, h)
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.String()
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so a container never reads a half-written file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
