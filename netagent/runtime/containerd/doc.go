// Package containerd is the node agent's runtime on containerd, through
// the v2 Go client (github.com/containerd/containerd/v2/client). It works
// against Debian's containerd 1.6 and against 2.x, with runc.
//
// # Containers
//
// Everything lives in a containerd namespace of Skiff's own (default
// "skiff"), so `ctr -n skiff ...` shows it and nothing else is touched.
// Start creates a container from an image already in the store (the agent
// pulls first, see PullImage and netagent's ImagePuller) with a fresh
// snapshot named like the container, a spec from the image config
// (withImageConfig: what oci.WithImageConfig does, without reaching the
// text/template of containerd's internal/fsview, which would keep every
// exported method in the skiff binary; the image's USER is resolved in
// the snapshot mounted read-only, by containerd's rules) and then the
// pod's: argv as the kubelet computes
// it (command replaces ENTRYPOINT and drops CMD; args replace CMD), env
// merged over the image's, the working dir, the pod's network namespace
// by path (oci.WithLinuxNamespace), the pod name as host name, and the
// pod's resolv.conf and hosts bind-mounted read-only.
//
// # Logs
//
// The task's stdout and stderr go to <LogDir>/<container>/<id>.log,
// appended raw as the process runtime writes them, so Logs reads both
// runtimes alike. They go through containerd's binary logging protocol
// (cio.BinaryIO, a binary:// URI): the shim starts the logging binary,
// Config.LoggerBinary (the skiff binary itself, default os.Executable()),
// as `skiff containerd-log <log file>` (package logdriver) with the
// task's two pipes as fds 3 and 4; it opens the file (O_APPEND, 0644),
// reports ready on fd 5, and appends both streams through one file with a
// mutex per write until both pipes close (the shim closes its ends when
// the task is deleted, then sends SIGTERM: what is left in the pipes is
// written first, for at most 5 s). The shim owns the logger, so logs keep
// flowing while the agent or containerd restarts. The shim's own file://
// logging (cio.LogFile) is not used: its copyPipes hands the stdout copier
// the raw shared file, which it closes when stdout ends first, and a
// stderr line still in the pipe is lost.
//
// # Stdin (attach -i)
//
// A container whose spec sets stdin: true gets a stdin FIFO,
// <LogRoot>/.stdin/<id> (label skiff.dev/stdin), in its task's IO; the
// shim reads it and holds a write end (for CloseIO), so the container
// never reads EOF when an attach session's writer goes, nor when the
// agent restarts. AttachStdin opens it per session. With stdinOnce
// (label skiff.dev/stdin-once) the first session's end is CloseIO, as the
// CRI plugin does, and label skiff.dev/stdin-closed drops later
// sessions' stdin. With tty: true too, the process runs on a terminal
// (oci.WithTTY); the shim's console copier takes stdin and gives the
// output to the logging binary as above, and ResizeTerminal is the
// task's Resize. Without a terminal the binary scheme gives the process
// no stdin (the shim copies stdin only for fifo:// and file:// URIs), so
// such a container is logged by the shim's file:// logging, with its
// lost-last-stderr-line caveat above; the CRI plugin instead has
// containerd's own process copy through FIFOs, which Skiff would have to
// do in the agent, losing logs while it restarts.
//
// # State and adoption
//
// Nothing is kept outside containerd: the labels skiff.dev/pod-uid,
// pod-namespace, pod-name, container-name, log-path and started-at carry
// what List and Status report, and the task (in its shim) carries the
// state, pid and exit status. A new Runtime, even on a restarted daemon,
// lists the same containers; the shims, and so the pods, survive both the
// agent and containerd.
//
// # The managed daemon
//
// StartDaemon runs containerd the way k3s does: a generated config
// (version 2, read by 1.6 to 2.x) with root, state and the socket under
// one directory and the CRI plugin disabled, in a process group of its
// own, its PID in containerd.pid; Stop ends it by PID (SIGTERM, then
// SIGKILL). AdoptDaemon finds one an earlier, killed agent left running
// (the PID file, checked against the process's command line and the
// socket). netagent.SelectRuntime uses both for --runtime containerd when
// no other containerd answers.
//
// # Images
//
// PullImage fetches and unpacks through the docker resolver, over HTTPS
// except for the hosts Config.PlainHTTP names (default: loopback;
// PlainHTTPHosts adds --insecure-registry's), and reports each blob it
// dispatches and the bytes of those in flight. A credential given to it
// answers the registry's challenge (Basic or Bearer) for the image's own
// registry host only; one pull, one credential (the agent tries a pod's
// in turn). ImportImages reads OCI layouts and
// docker-save archives (see package ociarchive for writing them).
//
// # Invariants
//
//   - Only containers labelled skiff.dev/pod-uid are Skiff's: List,
//     Status, Stop, Exec and Remove ignore (ErrNotFound) any other.
//   - Stop is SIGTERM to the task's init, SIGKILL after the grace period;
//     init is PID 1 of the container's PID namespace, so SIGKILL ends every
//     process of the container. Exit codes are the shim's (128+N for
//     signal N); a task whose shim is gone reports ExitCodeUnknown.
//   - A failed Start leaves no container, snapshot or log file behind
//     (the client leaves the snapshot of a spec that failed, e.g. an
//     image USER its /etc/passwd lacks: Start removes it).
//   - Start returns only once the logging binary has opened the log file
//     (it checks: with the binary scheme a logger that failed looks ready
//     to the shim).
//   - A line a process writes with one write(2) of up to PIPE_BUF (4 KiB)
//     reaches the log whole, never interleaved with the other stream;
//     longer writes may interleave at chunk boundaries.
//   - Remove deletes the task (killing it), the container and its
//     snapshot, never the log file (it belongs to the pod's log dir).
//   - Close never stops containers; it stops a daemon only if it was
//     registered with OnClose (SelectRuntime does that for the daemon it
//     started).
//
// # Limits
//
//   - Resources: with a pod cgroup (Sandbox.CgroupParent) runc makes the
//     container's cgroup under it from the spec's cgroupsPath and
//     linux.resources (cgroups.go); a stopped task whose cgroup counted
//     an OOM kill is reported with reason OOMKilled (Config.Cgroups).
//   - securityContext (security.go, runtime.Security) is applied as CRI
//     does: runAsUser/runAsGroup over the image's USER, supplementary
//     groups, a read-only rootfs, the capability set (containerd's
//     default, then add/drop, "ALL" as CRI), privileged (all
//     capabilities and host devices, no masked paths, no seccomp),
//     no_new_privs only with allowPrivilegeEscalation: false, and
//     seccomp RuntimeDefault (containerd's default profile) or
//     Localhost (the node's JSON file). Refused with a
//     runtime.ConfigError: runAsNonRoot with a root or non-numeric
//     user, an unknown capability, a missing Localhost profile.
//   - What a process writes just before exiting may reach the log file a
//     moment after the exit is reported (two pipes copied by the logging
//     binary); Logs(follow) waits one poll interval after the exit.
//   - The order of lines written to stdout and stderr close together is
//     the order the logger reads them, not necessarily the order written.
//   - Pull progress is per blob dispatched, plus the bytes of blobs in
//     flight polled from the content store's ingests (every
//     Config.PullProgressInterval), not a stream of every write.
package containerd
