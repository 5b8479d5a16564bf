package ipvs

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"

	mobyipvs "github.com/moby/ipvs"

	"github.com/skiff-dev/skiff/api"
)

// TraceRules implements proxy.RuleTracer: the IPVS virtual service for
// dst and its real servers, read from the kernel, as `ipvsadm -Ln` lists
// them. The first entry is the virtual service (Chain "TCP
// 10.96.0.10:80", Text "TCP  10.96.0.10:80 rr" plus "persistent T"); one
// entry per real server follows, with Endpoint ip:port and Probability its
// weight share (weight / sum of weights: exact for rr and wrr, the
// long-run share for the other schedulers, which also weigh connection
// counts or hash the client). With no virtual service for dst the result
// is empty. Real servers are listed by address (ipvsadm lists them in the
// kernel's order, newest first).
func (b *Backend) TraceRules(ctx context.Context, dst netip.AddrPort, protocol string) ([]api.TraceRule, error) {
	proto := protoNumber(protocol)
	if proto == 0 {
		return nil, fmt.Errorf("ipvs: trace: unsupported protocol %q", protocol)
	}
	if !dst.Addr().Unmap().Is4() {
		return nil, nil // only IPv4 is programmed
	}
	k := vsKey{proto: proto, addr: dst.Addr().Unmap(), port: dst.Port()}
	svc, err := b.h.GetService(k.service("", 0, 0))
	if err != nil {
		if errors.Is(err, syscall.ESRCH) || errors.Is(err, syscall.ENOENT) {
			return nil, nil
		}
		return nil, fmt.Errorf("ipvs: trace: get %s: %w", k, err)
	}
	dests, err := b.h.GetDestinations(svc)
	if err != nil {
		return nil, fmt.Errorf("ipvs: trace: real servers of %s: %w", k, err)
	}
	return traceEntries(k, svc, dests), nil
}

// sortDests orders real servers by address and port (the kernel lists
// them newest first).
func sortDests(dests []*mobyipvs.Destination) {
	slices.SortFunc(dests, func(a, b *mobyipvs.Destination) int {
		ka, _ := destKey(a)
		kb, _ := destKey(b)
		return ka.Compare(kb)
	})
}

// traceEntries formats a virtual service and its real servers.
func traceEntries(k vsKey, svc *mobyipvs.Service, dests []*mobyipvs.Destination) []api.TraceRule {
	chain := k.String()
	text := fmt.Sprintf("%s  %s %s", ProtoName(k.proto), netip.AddrPortFrom(k.addr, k.port), svc.SchedName)
	if svc.Flags&FlagPersistent != 0 {
		text += " persistent " + strconv.Itoa(int(svc.Timeout))
	}
	out := []api.TraceRule{{Table: "ipvs", Chain: chain, Text: text}}
	sortDests(dests)
	total := 0
	for _, d := range dests {
		if d.Weight > 0 {
			total += d.Weight
		}
	}
	for _, d := range dests {
		ap, err := destKey(d)
		if err != nil {
			continue
		}
		r := api.TraceRule{
			Table: "ipvs",
			Chain: chain,
			Text: strings.TrimRight(fmt.Sprintf("  -> %-28s %-7s %-6d %-10d %-9d", ap.String(), forwardName(d.ConnectionFlags),
				d.Weight, d.ActiveConnections, d.InactiveConnections), " "),
			Endpoint: ap.String(),
		}
		if total > 0 && d.Weight > 0 {
			r.Probability = float64(d.Weight) / float64(total)
		}
		out = append(out, r)
	}
	return out
}

// forwardName is ipvsadm's name of a forwarding method.
func forwardName(flags uint32) string {
	switch flags & mobyipvs.ConnectionFlagFwdMask {
	case mobyipvs.ConnectionFlagMasq:
		return "Masq"
	case mobyipvs.ConnectionFlagLocalNode:
		return "Local"
	case mobyipvs.ConnectionFlagTunnel:
		return "Tunnel"
	case mobyipvs.ConnectionFlagDirectRoute:
		return "Route"
	}
	return "?"
}
