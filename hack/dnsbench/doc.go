// Command dnsbench compares Skiff's cluster DNS with CoreDNS serving the
// same records, side by side in one run, with dnsperf on 127.0.0.1.
//
//	go run ./hack/dnsbench [-services 10000] [-endpoints 50000] [-duration 10s] [-clients 4]
//
// # What it does
//
//  1. Generates a cluster (Services in 100 namespaces: 1 in 10 headless
//     with StatefulSet hostnames, 1 in 100 ExternalName aliasing another
//     Service, the rest ClusterIP with a named port; the endpoints spread
//     over them, one pod each), deterministically from the flags.
//  2. Writes CoreDNS zone files with the records Skiff serves for those
//     objects (cluster.local: A, SRV, CNAME, pod A; 10.in-addr.arpa: PTR),
//     a Corefile using the file plugin alone, and a dnsperf query file: the
//     queries pods with ndots:5 send (A and AAAA per search-list
//     candidate, so most lookups begin with NXDOMAINs), headless names, SRV,
//     PTR and names that do not exist.
//  3. Starts two child processes: itself as `dnsbench serve` (a dns.Store
//     filled through dns/source's conversion of the generated API objects,
//     served by the real dns.Server, as `skiff server --dns-listen` does,
//     without forwarding) and CoreDNS.
//  4. Compares the answers of both to a few thousand distinct queries
//     (rcode, TC, answer records) and stops if they differ.
//  5. Runs dnsperf against each for the same duration, alternating which
//     goes first: saturated throughput, then latency at a fixed offered
//     load (-Q, half the lower throughput) with every query timed (-v).
//  6. Prints the table, with the RSS of both processes, and stops the
//     children by PID.
//
// # Invariants
//
//   - Traffic stays on 127.0.0.1: the Skiff child has no upstreams and
//     CoreDNS has no forward plugin; the query mix never asks a name the
//     servers would forward.
//   - Both children are stopped (SIGTERM, then SIGKILL) on every exit path,
//     including Ctrl-C.
package main
