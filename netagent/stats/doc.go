// Package stats measures what the node agent reports on GET
// /metrics/resource (netagent/resourcemetrics.go): the cumulative CPU time
// and the memory working set of a container's processes and of the node,
// read from the kernel's own files, as cAdvisor does for the kubelet.
//
// # Sources
//
//   - Proc reads /proc (Proc.Root, "/proc" by default) for the process
//     runtime, whose containers are process trees without a cgroup of
//     their own: a container is the process its runtime started (the
//     leader, a process group leader: runtime/process starts every
//     container with Setpgid) and every live process that is in the
//     leader's process group or descends from the leader (by ppid). Its
//     CPU is the sum of utime+stime+cutime+cstime (fields 14 to 17 of
//     /proc/<pid>/stat, in USER_HZ ticks, 100 a second on Linux) of
//     those processes: cutime+cstime carry the time of children that
//     exited and were reaped inside the tree, as a cgroup's cpuacct keeps
//     the time of processes that left it. Its working set is the sum of
//     their RSS (field 24, in pages). A process that exits between two
//     reads takes its own time with it unless a process of the tree reaps
//     it, so the counter can go back; the server treats that as a reset.
//   - Cgroup1 reads a cgroup v1 hierarchy (Cgroup1.Root, "/sys/fs/cgroup"
//     by default; controllers under Root/<controller>): CPU is
//     cpuacct/<path>/cpuacct.usage (nanoseconds), the working set is
//     memory/<path>/memory.usage_in_bytes minus total_inactive_file of
//     memory/<path>/memory.stat (0 when inactive_file exceeds the usage),
//     as cAdvisor computes container_memory_working_set_bytes. The node
//     is the root cgroup (path "/"), as the kubelet's node summary.
//   - WorkingSet does the same subtraction for the cgroup v1 metrics
//     containerd's task.Metrics returns (runtime/containerd).
//
// Nothing here caches or keeps state: each call reads the files anew.
package stats
