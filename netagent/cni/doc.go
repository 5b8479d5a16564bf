// Package cni wires pods onto the node's bridge with the real CNI plugins,
// through libcni: bridge (with host-local IPAM), portmap for hostPorts and
// loopback, from Debian's containernetworking-plugins (/usr/lib/cni) or
// /opt/cni/bin.
//
// # Model
//
// A Network serves one node. Setup prepares the node's namespace once
// (idempotently, at every agent start):
//
//   - sysctls: net/ipv4/ip_forward=1 and net/bridge/bridge-nf-call-iptables=1,
//     each read back;
//   - the bridge (default skiff0), created with a fixed MAC derived from the
//     gateway, holding the gateway (the pod CIDR's first IP) as its only
//     IPv4 address, up;
//   - the service route: <service CIDR> dev skiff0 src <gateway>, so a
//     ClusterIP never follows the default route out of the node when a
//     proxy rule is missing;
//   - the conflist at DataDir/cni/10-skiff.conflist: bridge (isGateway,
//     hairpinMode, ipMasq off: masquerade is the proxy's job), host-local
//     over the pod CIDR from the IP after the gateway, portmap with the
//     portMappings capability, loopback.
//
// AddPod creates the pod's network namespace (DataDir/netns/skiff-<uid>
// by default) and runs CNI ADD in it with the pod UID as container ID and
// eth0 as interface; the pod's IP is read from the result (types100). A
// pod without hostPorts is added with the list minus portmap (whose ADD
// without mappings only hands the previous result on: one plugin process
// less per pod); DEL always runs the whole list.
// DelPod runs CNI DEL with the pod's namespace, the port mappings and args
// it was added with (from libcni's cache), then removes the namespace.
//
// # Invariants
//
//   - A pod holds an IP only while it has a namespace file or a cached CNI
//     result: AddPod creates the namespace before ADD, DelPod removes it
//     after DEL succeeded, and a failed AddPod runs DEL and removes the
//     namespace before returning. So Pods (the union of both) lists every
//     pod that can hold an IP, and DelPod on each leaks nothing.
//   - AddPod for a pod with a live namespace and a cached result returns
//     that result without running the plugins: an agent restart keeps every
//     pod's IP and veth. Any other leftover is torn down first.
//   - DelPod is idempotent: for a pod already gone, a missing or stale
//     namespace file (after a reboot; DEL then runs without a namespace and
//     only releases the IP), or a missing or unreadable cache.
//   - Calls for one pod UID are serialized; different pods run in parallel
//     (host-local locks its own directory).
//   - AddPod refuses to run before Setup succeeded, so no pod ever makes the
//     bridge itself (without its MAC and the service route).
//
// # Namespaces
//
// Everything happens in the network namespace of the calling goroutine's
// thread. Each method locks its OS thread for its whole run, and libcni
// forks the plugins from that thread, so a caller that entered a node
// namespace on a locked thread (netns.Do, as the root tests do) keeps the
// bridge, the routes, the sysctls, the iptables rules of portmap and the
// plugins' work inside it. The agent itself calls from its own namespace.
//
// # Caveats
//
//   - IPv4 only.
//   - If the CNI cache of a pod with hostPorts is lost, DEL cannot tell
//     portmap the mappings and its iptables chains for that pod stay.
//   - An adopted pod keeps the ports it was added with; AddPod's ports only
//     apply to a fresh ADD.
//   - The bridge plugin's DEL (deleting the veth) dominates DelPod: about
//     20-35 ms on a 2-core VM.
//
// All kernel-facing parts are behind interfaces in Config (Sysctl, Links,
// Namespaces, Plugins); package cnitest has stateful, validating fakes.
package cni
