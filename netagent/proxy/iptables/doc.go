// Package iptables is the iptables proxy mode: a proxy.Backend that
// programs kube-proxy's iptables layout with one iptables-restore per sync.
//
// # Layout (kube-proxy's)
//
//	nat    PREROUTING, OUTPUT -> KUBE-SERVICES
//	         -d <ClusterIP> --dport <port>      -> KUBE-SVC-<hash> (or KUBE-SVL-<hash> for internalTrafficPolicy Local)
//	         -d <externalIP|LB IP> --dport ...  -> KUBE-EXT-<hash> (or KUBE-FW-<hash> with loadBalancerSourceRanges)
//	         last: -m addrtype --dst-type LOCAL -> KUBE-NODEPORTS -> KUBE-EXT-<hash>
//	       KUBE-SVC-<hash>: ! -s <cluster CIDR> -> KUBE-MARK-MASQ; then one rule per endpoint,
//	         -m statistic --mode random --probability 1/n, 1/(n-1), ... (10 decimals), the last unconditional
//	         (ClientIP affinity first: -m recent --name KUBE-SEP-... --rcheck --seconds T --reap)
//	       KUBE-SEP-<hash>: -s <endpoint> -> KUBE-MARK-MASQ (hairpin); DNAT --to-destination ip:port
//	         (affinity: -m recent --name KUBE-SEP-... --set)
//	       KUBE-EXT-<hash>: Cluster policy: -> KUBE-MARK-MASQ, -> KUBE-SVC; Local policy: pods and the node
//	         itself -> KUBE-SVC (masquerading the node), others -> KUBE-SVL without masquerade
//	       POSTROUTING -> KUBE-POSTROUTING: MASQUERADE what KUBE-MARK-MASQ marked (0x4000)
//	filter INPUT/FORWARD/OUTPUT -> KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-NODEPORTS,
//	       KUBE-PROXY-FIREWALL, KUBE-FORWARD: REJECT (icmp-port-unreachable) for ports without endpoints,
//	       DROP for Local policies without a local endpoint, DROP for LB traffic outside the source ranges,
//	       ACCEPT for health check node ports, and a last rule rejecting anything else sent to the
//	       service CIDR (docs/networking.md: a packet for a ClusterIP never leaves the node).
//
// Chain names are kube-proxy's: "KUBE-SVC-" + the first 16 characters of
// base32(sha256("ns/name:port" + "tcp")), and KUBE-SEP- with the endpoint
// "ip:port" appended to the hashed string; so a Skiff node's chains carry
// the same names a kube-proxy node's would.
//
// # Invariants
//
//   - One iptables-restore --noflush per sync; rules of other software in
//     the same tables are never touched. The jumps from the built-in
//     chains are checked (iptables -S of those chains, which is cheap) on
//     every full sync and inserted when missing, so they are never
//     duplicated.
//   - The rules are never read back in the sync loop (iptables-save costs
//     seconds on the nft backend at scale): the backend keeps what it
//     wrote. The only reads are the chain names left by an earlier run, once
//     at the first full sync, Cleanup, and TraceRules (`skiff trace`, on
//     demand: iptables-save of the filter and nat tables).
//   - A full sync rewrites everything Skiff owns. A partial sync rewrites
//     the chains of the changed Service ports only, deletes their endpoint
//     chains that went away, and edits the shared chains (KUBE-SERVICES,
//     KUBE-NODEPORTS) instead of rewriting them: a missing rule is
//     inserted (-I, before the NodePort tail rule); a rule of a port that
//     lost its endpoints stays, its target chain flushed so it matches
//     nothing, until the next full sync deletes both; the rules of a
//     deleted Service port, and a rule that would still lead to a chain in
//     use (a port number changed), are deleted with -D (then the chains).
//   - Any failed restore makes the next sync full. A restart needs no
//     flush: the first full sync replaces every chain in place.
//   - Only IPv4 is programmed (ip6tables is not done).
//
// # Why a full sync is split (nft mode)
//
// iptables-nft 1.8.9 keeps the names of the chains a --noflush transaction
// mentions in a sorted linked list, inserting each command's chain and
// jump target with a linear walk (nft-cache.c, cache_chain_list_insert):
// a walk stops at the first name not smaller. A 10,000-Service full sync in
// one transaction (40k chains, 150k rules) spends about 60 s of CPU there,
// against 3 s for the same rules without --noflush (where the table flush
// makes iptables cache every chain instead). So the nat table is committed
// in several transactions, in an order that keeps each walk short:
//
//  1. all KUBE-SEP chains, in descending name order, each declared just
//     before its rules: every new name is the smallest so far, so each
//     insertion stops at once (KUBE-MARK-MASQ, their only target, sorts
//     before them);
//  2. the other per-service chains, in transactions of about
//     MaxChainsPerTransaction chains, services in descending order;
//  3. KUBE-SERVICES and KUBE-NODEPORTS, rules in descending target order,
//     then the deletions.
//
// Each transaction commits atomically and every intermediate state is
// consistent (a chain is never seen half written, and the shared chains
// only point to complete chains), but a full sync is not atomic as a whole.
// Each commit that adds a rule also makes the kernel validate the whole
// table (~0.1 s at 10k Services), so the chunks are not made smaller. The
// legacy backend has no such list but replaces the whole table on every
// commit, so it is never split.
package iptables
