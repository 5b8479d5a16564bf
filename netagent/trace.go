package netagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/trace"
)

// proxyTracer is the proxy backend as the trace sees it.
type proxyTracer struct {
	mode   string
	tracer proxy.RuleTracer // nil when the backend cannot list its rules
	// egress reads the egress masquerade rules back (nil: no proxy runs).
	egress func(ctx context.Context) ([]string, error)
}

// setTracer is ProxyParams.OnBackend: the backend a proxy built (nil when
// the proxy stopped).
func (a *Agent) setTracer(mode string, backend any) {
	t, _ := backend.(proxy.RuleTracer)
	a.mu.Lock()
	a.tracer.mode, a.tracer.tracer = mode, t
	a.mu.Unlock()
}

// setEgressReader is ProxyParams.OnEgress.
func (a *Agent) setEgressReader(rules func(ctx context.Context) ([]string, error)) {
	a.mu.Lock()
	a.tracer.egress = rules
	a.mu.Unlock()
}

// maxConntrack caps the conntrack entries of a trace.
const maxConntrack = 200

// dnsQueryTimeout bounds each query of the trace's search expansion.
const dnsQueryTimeout = 2 * time.Second

// Trace follows a request from a pod of this node to rawURL, step by step
// (see api.Trace): the pod's resolv.conf and search expansion against the
// node DNS, the Service port the address belongs to, the proxy rules read
// from the kernel, the endpoints with the chance each gets, and the
// conntrack entries for the destination. A broken step is a warning, not
// an error; errors are for a pod that is not here or a bad URL.
func (a *Agent) Trace(ctx context.Context, namespace, name, rawURL string) (*api.Trace, error) {
	a.mu.Lock()
	pm, inf, pt, gw, podCIDR, svcCIDR := a.pm, a.inf, a.tracer, a.gateway, a.podCIDR, a.serviceCIDR
	a.mu.Unlock()
	if pm == nil || inf == nil {
		return nil, nodeAPIErrorf(http.StatusServiceUnavailable, "node %s is not ready yet", a.cfg.NodeName)
	}
	if namespace == "" || name == "" {
		return nil, nodeAPIErrorf(http.StatusBadRequest, "trace: namespace and pod are required")
	}
	obj, ok := pm.pods.Get(namespace, name)
	pod, _ := obj.(*api.Pod)
	if !ok || pod == nil {
		return nil, nodeAPIErrorf(http.StatusNotFound, "pod %s/%s is not on node %s", namespace, name, a.cfg.NodeName)
	}
	tg, err := trace.ParseTarget(rawURL)
	if err != nil {
		return nil, nodeAPIErrorf(http.StatusBadRequest, "%v", err)
	}
	tr := &api.Trace{
		TypeMeta: api.TypeMeta{Kind: "Trace", APIVersion: "skiff.dev/v1"},
		Pod:      api.TracePod{Namespace: namespace, Name: name, IP: pod.Status.PodIP, NodeName: a.cfg.NodeName},
		URL:      rawURL, Host: tg.Host, Port: tg.Port, Protocol: tg.Protocol,
	}
	warn := func(ws ...string) { tr.Warnings = append(tr.Warnings, ws...) }
	if pod.Status.PodIP == "" {
		warn(fmt.Sprintf("pod %s/%s has no IP yet: it cannot send anything", namespace, name))
	}
	services := typed[*api.Service](inf.services.List())
	slices := typed[*api.EndpointSlice](inf.slices.List())

	// 1. DNS.
	dst := tg.IP
	if !dst.IsValid() {
		dst = a.traceDNS(ctx, tr, pod, gw, services)
		if !dst.IsValid() {
			return tr, nil
		}
	}

	// 2. The Service port.
	m, ws := trace.MatchService(services, dst, tg.Port, tg.Protocol, a.cfg.NodeIPs, tg.Host)
	if m == nil {
		if hs, why := trace.Headless(services, slices, dst); hs != nil {
			hs.Port = tg.Port
			tr.Service = hs
			warn(why)
		} else {
			warn(ws...)
		}
	} else {
		tr.Service = &m.Trace
	}

	// 3. The rules.
	dstAP := netip.AddrPortFrom(dst, uint16(tg.Port))
	switch {
	case pt.mode == "":
		warn("no service proxy runs on this node: nothing rewrites a Service address")
	case pt.tracer == nil:
		warn(fmt.Sprintf("the %s proxy backend cannot list its rules", pt.mode))
	default:
		var entries []api.TraceRule
		err := a.deps.NodeNetNS.do(func() error {
			var err error
			entries, err = pt.tracer.TraceRules(ctx, dstAP, tg.Protocol)
			return err
		})
		if err != nil {
			warn(fmt.Sprintf("reading the %s rules failed: %v", pt.mode, err))
		} else {
			if entries == nil {
				entries = []api.TraceRule{}
			}
			tr.Rules = &api.TraceRules{Mode: pt.mode, Entries: entries}
			if len(entries) == 0 && m != nil {
				warn(fmt.Sprintf("no %s rule on this node matches %s/%s: the proxy has not programmed Service %s/%s (yet)",
					pt.mode, dstAP, tg.Protocol, m.Service.Namespace, m.Service.Name))
			}
		}
	}

	// 4. The endpoints.
	if m != nil {
		tr.Endpoints = trace.Endpoints(m, slices)
		ready := 0
		for _, e := range tr.Endpoints {
			if e.Ready {
				ready++
			}
		}
		switch {
		case len(tr.Endpoints) == 0:
			warn(fmt.Sprintf("Service %s/%s has no endpoints for port %s: its selector matches no pod with that port (the connection is rejected)",
				m.Service.Namespace, m.Service.Name, portLabel(m.Port)))
		case ready == 0:
			warn(fmt.Sprintf("none of the %d endpoints of Service %s/%s is ready: only serving, terminating ones are used, or the connection is rejected",
				len(tr.Endpoints), m.Service.Namespace, m.Service.Name))
		}
		if tr.Rules != nil {
			warn(trace.Probabilities(tr.Rules.Mode, tr.Rules.Entries, tr.Endpoints)...)
		}
	}

	// 4b. Out of the cluster: no Service, no pod, not a Service address.
	if tr.Service == nil && !clusterRange(a.cfg.ClusterCIDR, podCIDR).Contains(dst) && !svcCIDR.Contains(dst) {
		var w string
		tr.Egress, w = a.traceEgress(ctx, pt, dst)
		if w != "" {
			warn(w)
		}
		if !tr.Egress.Masquerade {
			warn(fmt.Sprintf("the packet to %s leaves the node with the pod's address %s as its source (--egress-masquerade=false): the answer comes back only if the network routes the pod range to this node",
				dst, pod.Status.PodIP))
		}
	}

	// 5. Conntrack.
	ct, err := a.traceConntrack(dstAP, tg.Protocol)
	if err != nil {
		warn(fmt.Sprintf("reading conntrack failed: %v", err))
	}
	if len(ct) > maxConntrack {
		warn(fmt.Sprintf("%d conntrack entries for %s; the trace shows the first %d", len(ct), dstAP, maxConntrack))
		ct = ct[:maxConntrack]
	}
	tr.Conntrack = ct
	return tr, nil
}

// traceEgress is the step out of the cluster: the masquerade, with its
// rules read back from the node's kernel, and a warning when they are not
// there.
func (a *Agent) traceEgress(ctx context.Context, pt proxyTracer, dst netip.Addr) (*api.TraceEgress, string) {
	e := &api.TraceEgress{Masquerade: !a.cfg.NoEgressMasquerade}
	switch {
	case !e.Masquerade:
		return e, ""
	case pt.egress == nil:
		return e, "no service proxy runs on this node, and with it no egress masquerade: the packet keeps the pod's address"
	}
	if err := a.deps.NodeNetNS.do(func() error {
		var err error
		e.Rules, err = pt.egress(ctx)
		return err
	}); err != nil {
		return e, fmt.Sprintf("reading the egress rules failed: %v", err)
	}
	if len(e.Rules) == 0 {
		return e, fmt.Sprintf("no egress rule in the node's kernel (yet): a packet to %s keeps the pod's address and its answer may not come back", dst)
	}
	return e, ""
}

func portLabel(p api.ServicePort) string {
	if p.Name != "" {
		return fmt.Sprintf("%q (%d)", p.Name, p.Port)
	}
	return strconv.Itoa(int(p.Port))
}

func typed[T api.Object](objs []api.Object) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// traceDNS reads the pod's resolv.conf (the file the agent wrote) and runs
// the search expansion against its nameserver, from the node's netns.
func (a *Agent) traceDNS(ctx context.Context, tr *api.Trace, pod *api.Pod, gw netip.Addr, services []*api.Service) netip.Addr {
	a.mu.Lock()
	pm := a.pm
	a.mu.Unlock()
	path := filepath.Join(pm.podDir(string(pod.UID)), "resolv.conf")
	b, err := os.ReadFile(path)
	if err != nil {
		tr.Warnings = append(tr.Warnings, fmt.Sprintf("the pod's resolv.conf is not readable (%v): the pod has not started yet?", err))
		return netip.Addr{}
	}
	rc := trace.ParseResolvConf(b)
	if len(rc.Nameservers) == 0 {
		tr.DNS = &api.TraceDNS{Queries: []api.TraceDNSQuery{}}
		tr.Warnings = append(tr.Warnings, "the pod's resolv.conf names no nameserver: names do not resolve")
		return netip.Addr{}
	}
	server := net.JoinHostPort(rc.Nameservers[0], "53")
	if ns, err := netip.ParseAddr(rc.Nameservers[0]); err == nil && ns == gw && a.DNSAddr() != "" {
		server = a.DNSAddr() // the node DNS, wherever the agent bound it
	}
	ex := func(ctx context.Context, m *dns.Msg) (*dns.Msg, error) {
		var conn net.Conn
		if err := a.deps.NodeNetNS.do(func() error {
			var d net.Dialer
			c, err := d.DialContext(ctx, "udp", server)
			conn = c
			return err
		}); err != nil {
			return nil, err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(dnsQueryTimeout))
		co := &dns.Conn{Conn: conn}
		if err := co.WriteMsg(m); err != nil {
			return nil, err
		}
		for {
			r, err := co.ReadMsg()
			if err != nil {
				return nil, err
			}
			if r.Id == m.Id {
				return r, nil
			}
		}
	}
	d, ws := trace.Resolve(ctx, ex, tr.Host, rc)
	tr.DNS = d
	tr.Warnings = append(tr.Warnings, ws...)
	for _, q := range d.Queries {
		if q.CNAME == "" {
			continue
		}
		if _, why := trace.ExternalName(services, q.Name, a.cfg.ClusterDomain); why != "" {
			tr.Warnings = append(tr.Warnings, why)
		}
	}
	ip, err := netip.ParseAddr(d.Answer)
	if err != nil {
		return netip.Addr{}
	}
	return ip
}

// tcpStates are conntrack's TCP states (nf_conntrack_tcp.h).
var tcpStates = []string{"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"}

// traceConntrack lists the node netns's conntrack entries whose original
// destination is dst (netlink, in the node's netns).
func (a *Agent) traceConntrack(dst netip.AddrPort, protocol string) ([]api.TraceConntrack, error) {
	fam := netlink.InetFamily(unix.AF_INET)
	if dst.Addr().Is6() {
		fam = unix.AF_INET6
	}
	proto := uint8(unix.IPPROTO_TCP)
	if protocol == "UDP" {
		proto = unix.IPPROTO_UDP
	}
	var flows []*netlink.ConntrackFlow
	err := a.deps.NodeNetNS.do(func() error {
		h, err := netlink.NewHandle(unix.NETLINK_NETFILTER)
		if err != nil {
			return err
		}
		defer h.Close()
		flows, err = h.ConntrackTableList(netlink.ConntrackTable, fam)
		return err
	})
	if err != nil {
		if errors.Is(err, unix.ENOENT) { // nf_conntrack not loaded: no entries
			return nil, nil
		}
		return nil, err
	}
	var out []api.TraceConntrack
	for _, f := range flows {
		d, ok := netip.AddrFromSlice(f.Forward.DstIP)
		if !ok || f.Forward.Protocol != proto || d.Unmap() != dst.Addr() || f.Forward.DstPort != dst.Port() {
			continue
		}
		src, _ := netip.AddrFromSlice(f.Forward.SrcIP)
		rsrc, _ := netip.AddrFromSlice(f.Reverse.SrcIP)
		e := api.TraceConntrack{
			Protocol: protocol,
			Src:      netip.AddrPortFrom(src.Unmap(), f.Forward.SrcPort).String(),
			Dst:      dst.String(),
			ReplySrc: netip.AddrPortFrom(rsrc.Unmap(), f.Reverse.SrcPort).String(),
			Timeout:  int(f.TimeOut),
		}
		if ti, ok := f.ProtoInfo.(*netlink.ProtoInfoTCP); ok && int(ti.State) < len(tcpStates) {
			e.State = tcpStates[ti.State]
		}
		out = append(out, e)
	}
	return out, nil
}
