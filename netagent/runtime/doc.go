// Package runtime is the contract between the node agent and the things
// that run a pod's containers: the Runtime interface, the Sandbox a pod
// gives its containers and the ContainerStatus a runtime reports. The
// implementations live in runtime/process (child processes in the pod's
// network namespace) and runtime/containerd; runtime/logtail is the
// Logs(follow) loop both use.
//
// # Invariants
//
//   - Every container a runtime started is reported by List until Remove,
//     across an agent restart: a runtime persists what it needs to find its
//     containers again, and never restarts or kills one because the agent
//     restarted.
//   - Stop sends SIGTERM, waits up to the grace period, then SIGKILL; it
//     returns once the container has exited (or ctx is done). Stopping an
//     exited container is not an error.
//   - A container's ExitCode is meaningful only in StateExited; a process
//     killed by signal N reports 128+N, as Kubernetes shows it.
//   - Errors wrap ErrNotFound and ErrNotRunning where they apply.
package runtime
