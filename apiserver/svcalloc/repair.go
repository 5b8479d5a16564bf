package svcalloc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

// RepairReport says what Repair found and fixed.
type RepairReport struct {
	Services        int      // Services read
	IPs             int      // ClusterIPs indexed
	Ports           int      // NodePorts indexed
	FreedIPAddrs    []string // IPAddress objects deleted: their Service is gone or holds another IP
	RestoredIPAddrs []string // IPAddress objects recreated for Services that lacked one
	Conflicts       []string // Services whose IP or port another Service already held
}

// Repair rebuilds the allocators' indexes from the store, in one store
// transaction, before the API serves: every Service's ClusterIP and
// NodePorts are marked taken, IPAddress objects without a live parent are
// deleted and missing ones are recreated. It is idempotent.
func (h *Hook) Repair(ctx context.Context, st store.Interface) (RepairReport, error) {
	var rep RepairReport
	_, err := st.Update(ctx, func(tx store.Txn) error {
		rep = RepairReport{}
		svcKVs, err := tx.List(strings.TrimSuffix(apiserver.KeyFor(h.svcInfo, "x", "x"), "x/x"))
		if err != nil {
			return err
		}
		ipKVs, err := tx.List(strings.TrimSuffix(apiserver.KeyFor(h.ipInfo, "", "x"), "x"))
		if err != nil {
			return err
		}
		var ips []netip.Addr
		var ports []int
		ipOwner := map[netip.Addr]string{} // ip -> ns/name
		portOwner := map[int]string{}
		var services []*api.Service
		for _, kv := range svcKVs {
			var svc api.Service
			if err := json.Unmarshal(kv.Value, &svc); err != nil {
				return fmt.Errorf("svcalloc: repair: decode %s: %w", kv.Key, err)
			}
			rep.Services++
			id := svc.Namespace + "/" + svc.Name
			if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && wantsIP(&svc) && h.ips.InRange(ip) {
				if other, dup := ipOwner[ip]; dup {
					rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("%s: ClusterIP %s also held by %s", id, ip, other))
				} else {
					ipOwner[ip] = id
					ips = append(ips, ip)
					services = append(services, &svc)
				}
			}
			for _, p := range servicePorts(&svc) {
				if p < h.ports.Base() || p >= h.ports.Base()+h.ports.Size() {
					continue
				}
				if other, dup := portOwner[p]; dup && other != id {
					rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("%s: NodePort %d also held by %s", id, p, other))
					continue
				}
				if _, dup := portOwner[p]; !dup {
					portOwner[p] = id
					ports = append(ports, p)
				}
			}
		}
		have := map[netip.Addr]bool{}
		for _, kv := range ipKVs {
			var ipa api.IPAddress
			if err := json.Unmarshal(kv.Value, &ipa); err != nil {
				return fmt.Errorf("svcalloc: repair: decode %s: %w", kv.Key, err)
			}
			ip, err := netip.ParseAddr(ipa.Name)
			if err != nil || !h.ips.InRange(ip) {
				continue
			}
			ref := ipa.Spec.ParentRef
			owned := ref != nil && ref.Resource == "services" && ipOwner[ip] == ref.Namespace+"/"+ref.Name
			managed := ipa.Labels[LabelManagedBy] == ManagedBy
			if !owned && managed {
				if err := h.w.DeleteObject(tx, h.ipInfo, "", ipa.Name); err != nil && !isNotFound(err) {
					return err
				}
				rep.FreedIPAddrs = append(rep.FreedIPAddrs, ipa.Name)
				continue
			}
			have[ip] = true
			if !owned {
				ips = append(ips, ip) // a user's own IPAddress keeps its IP reserved
			}
		}
		for _, svc := range services {
			ip := netip.MustParseAddr(svc.Spec.ClusterIP)
			if have[ip] {
				continue
			}
			if err := h.w.PutObject(tx, h.ipInfo, ipAddressFor(ip, svc)); err != nil {
				return err
			}
			rep.RestoredIPAddrs = append(rep.RestoredIPAddrs, ip.String())
		}
		if err := h.ips.Restore(ips); err != nil {
			return fmt.Errorf("svcalloc: repair: %w", err)
		}
		if err := h.ports.Restore(ports); err != nil {
			return fmt.Errorf("svcalloc: repair: %w", err)
		}
		rep.IPs, rep.Ports = len(ips), len(ports)
		return nil
	})
	return rep, err
}
