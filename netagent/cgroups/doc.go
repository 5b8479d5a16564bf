// Package cgroups puts pods and their containers in cgroups the way the
// kubelet lays them out with its cgroupfs driver, and reads back what the
// kernel counted there (CPU time, memory, OOM kills).
//
// # Layout
//
// Under the configured root (default "/", the root of each hierarchy):
//
//	/kubepods                      node-level parent of every pod
//	/kubepods/pod<uid>             a Guaranteed pod
//	/kubepods/burstable/pod<uid>   a Burstable pod
//	/kubepods/besteffort/pod<uid>  a BestEffort pod
//	<pod>/<container id>           each container (made by the runtime)
//
// # Values, as the kubelet computes them
//
//   - cpu.shares from requests.cpu: milli*1024/1000, at least 2 (a
//     container without a request gets 2); the pod gets the sum of its
//     containers' (init containers: the largest one, if larger), a
//     BestEffort pod 2. On cgroup v2, weight = 1 + (shares-2)*9999/262142
//     (the conversion runc and the kubelet use).
//   - CFS quota from limits.cpu: milli*100000/1000 µs per 100000 µs period,
//     at least 1000 µs; the pod gets the sum, only when every container has
//     a CPU limit (else none).
//   - memory limit from limits.memory; the pod gets the sum, only when
//     every container has a memory limit.
//
// These are upstream's pkg/kubelet/cm helpers (MilliCPUToShares,
// MilliCPUToQuota, ResourceConfigForPod) and pkg/kubelet/cm/qos_container
// _manager_linux.go's layout, without the node allocatable reservations
// (Skiff reserves nothing) and without the QoS-level memory
// reservations.
//
// # Hierarchies
//
// Detect reads /proc/self/mountinfo: when any cgroup v1 hierarchy holds
// the cpu or memory controller, the node is v1 (a hybrid node, with an
// empty v2 mount at /sys/fs/cgroup/unified, is v1: its controllers are
// all bound to v1); else a cgroup2 mount is v2, with cpu, memory and pids
// enabled down the tree through cgroup.subtree_control. On v1 Skiff makes
// its cgroups in the cpu, cpuacct, memory and pids hierarchies (wherever
// each is mounted, together or apart) and leaves cpuset, devices,
// freezer and blkio to their roots.
//
// # Why not a library
//
// github.com/containerd/cgroups/v3 (cgroup1 and cgroup2) does this and
// more, but brings cilium/ebpf (for v2 device filters), go-systemd's dbus
// client and godbus into every build: a program importing both packages
// is 10.4 MB against 2.4 MB for an empty one (docs/performance.md).
// Skiff writes six kinds of file and reads four, which this package does
// in a few hundred lines.
package cgroups
