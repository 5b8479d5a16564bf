// Package ipvs is the ipvs proxy mode: a proxy.Backend (and
// proxy.RuleTracer) that load-balances Services with the kernel's IP
// Virtual Server through github.com/moby/ipvs, as kube-proxy's ipvs mode
// does, with iptables only for what IPVS cannot do.
//
// # What is programmed
//
//   - One IPVS virtual server (masquerading forwarding, the scheduler of
//     --ipvs-scheduler, rr by default) per ClusterIP:port, per external
//     IP:port, per load balancer ingress IP:port and, for a NodePort, per
//     node address:nodePort. Only IPv4; TCP and UDP (SCTP and other
//     protocols get nothing).
//   - Real servers are the endpoints proxy.CategorizeEndpoints picks, all
//     with weight 1: ready ones, else serving and terminating ones; this
//     node's only for internalTrafficPolicy Local (ClusterIP servers) and
//     externalTrafficPolicy Local (NodePort, external and load balancer
//     servers). An endpoint no longer picked is deleted from its servers
//     at once (kube-proxy instead sets weight 0 and deletes it when its
//     connections are gone); net.ipv4.vs.expire_nodest_conn=1 then ends
//     its connections at their next packet, which is what lets a UDP flow
//     move to a new endpoint (the other modes delete its conntrack entry).
//   - sessionAffinity ClientIP is the persistent flag with the affinity
//     timeout (netmask /32).
//   - The ClusterIPs, external IPs and load balancer IPs are bound, as /32,
//     to the interface skiff-ipvs0, so that the kernel delivers them
//     locally, where IPVS takes them (node addresses are not bound again).
//
// # The address interface
//
// kube-proxy binds its virtual IPs to a dummy interface (kube-ipvs0);
// this machine's kernel has no dummy module. skiff-ipvs0 is a bridge with
// no ports, kept down: bridges exist on every kernel that runs pods
// (the pod network is one), and the kernel adds the local route of an
// address (table local, "local 10.96.0.10 dev skiff-ipvs0") whatever the
// link state. Measured in TestDeviceAndRulesInNetNS, here and in the qemu
// VM: with the bridge down a VIP is delivered locally from the node
// itself, from a pod and from another namespace routed through the node;
// a down link adds no other route and has no neighbours. The interface is
// created at the first full sync and deleted by Cleanup.
//
// # iptables (only what IPVS cannot do)
//
// The rules go through netagent/proxy/iptables's Exec (the same
// iptables-nft or iptables-legacy the iptables mode detects), one
// iptables-restore --noflush per change, into chains of this mode's own,
// so that switching modes never mixes layouts:
//
//	nat    PREROUTING, OUTPUT -> KUBE-IPVS-SERVICES: mark for masquerade (0x4000, via
//	         KUBE-IPVS-MARK-MASQ) the service CIDR from outside the cluster CIDR, ClusterIPs
//	         outside the service CIDR likewise, and, for externalTrafficPolicy Cluster, every
//	         packet to a NodePort, external IP or load balancer IP
//	       POSTROUTING -> KUBE-IPVS-POSTROUTING: hairpin (-s ep -d ep, for this node's
//	         endpoints) and marked packets are masqueraded
//	filter INPUT, FORWARD, OUTPUT (ctstate NEW) -> KUBE-IPVS-FILTER: RETURN for Service
//	         ports with endpoints; REJECT (icmp-port-unreachable) for ports without any, and
//	         for anything else sent to the service CIDR or a bound external address;
//	         KUBE-IPVSFW-<hash> drops load balancer traffic outside loadBalancerSourceRanges
//
// Filter INPUT runs before IPVS (LOCAL_IN, priority 98+), so the filter
// rules see the virtual address. A locally sent packet meets IPVS first
// (LOCAL_OUT, -98): when IPVS has balanced it, filter OUTPUT sees the pod
// address. net.ipv4.vs.conntrack=1 (set by New) lets the nat table
// masquerade IPVS traffic.
//
// # Invariants
//
//   - IPVS must really be there: Available checks /proc/net/ip_vs and the
//     IPVS generic netlink family, because moby/ipvs returns nil and does
//     nothing without them (docs/platform.md, "Kernel"). RunProxy refuses the mode with
//     that error at start.
//   - A full sync reads the kernel (virtual servers with their real
//     servers, the interface's addresses) and reconciles: it creates,
//     updates and deletes servers and real servers, binds and unbinds
//     addresses. Servers on an address of skiff-ipvs0 or of the node are
//     the mode's own: stale ones are deleted; others (another program's)
//     are left alone. The first full sync also deletes KUBE-IPVS chains an
//     earlier run left.
//   - A partial sync touches only the changed Service ports, diffing
//     against what the backend last wrote (it does not read the kernel):
//     their servers, real servers and addresses; the iptables chains are
//     rewritten only when a changed port's rules changed, and then only the
//     chains whose content changed.
//   - Any failure makes the next sync full.
//   - A restart needs no flush: the first full sync changes only what
//     differs, so established connections keep their servers.
//
// # Trace
//
// TraceRules reads the virtual server of a destination and its real
// servers from the kernel and returns them as `ipvsadm -Ln` prints them;
// each real server's Probability is its weight share (exact for rr and
// wrr; for lc, sh and the others the long-run share, as those also weigh
// connection counts or hash the client).
package ipvs
