// Package proxylatency holds the network programming latency benchmark of
// the service proxy (docs/performance.md): a pod's Ready condition written through
// the API (pods/status, as a node writes it) until the rule is in the
// kernel of a node network namespace, with every part real (server.Start
// with its endpointslice controller, the agent's RunProxy in iptables or
// nftables mode, kernel rules in namespaces the benchmark creates).
//
// # Invariants
//
//   - Only network namespaces the benchmark creates are programmed; the
//     machine's own rules are never touched (it needs root, and skips
//     without it).
//   - Wall-clock figures are reported (b.ReportMetric), never asserted;
//     the benchmark fails only when a rule never arrives or a probe
//     reaches the wrong pod.
package proxylatency
