// Package process is the node agent's runtime for machines without
// containerd: each container is a child process of the agent, running the
// pod spec's command + args in the pod's network namespace. Images are
// ignored.
//
// # How a container starts
//
// Start forks the command from a thread of the agent that has entered the
// pod's namespaces (a child inherits the namespaces of the thread that
// forks it): a goroutine locks a new OS thread, setns(2)s it into the
// pod's netns, unshares a mount namespace and a UTS namespace, makes /
// rslave, remounts /sys, bind-mounts the pod's resolv.conf and hosts over
// /etc/resolv.conf and /etc/hosts and the container's Mounts at their
// destinations (a missing one is created, empty, on the node), sets the pod name as host name, chdirs
// and forks + execve(2)s the command found in the pod env's PATH (the
// command `skiff` is the agent's own binary, SelfCommand), in a new
// process group, with the pod's env, /dev/null as stdin (or, with the
// spec's stdin: true, a FIFO; see below) and the container's log file as
// stdout and stderr. The thread is never unlocked:
// it ends with its goroutine, so nothing else runs in those namespaces
// (the main thread, which Go would keep rather than end, is never used).
// Errors (a namespace, the directory, the command) are Start's error.
//
// Exec re-executes a helper binary (Config.HelperPath, by default
// /proc/self/exe: skiff itself) as `skiff runtime-init --join-pid=...
// -- argv...`. The helper (Init) locks its OS thread, enters the net, uts
// and mount namespaces of the container's process (/proc/<pid>/ns/*,
// checked against the recorded start time after opening them) and execs
// there; its errors come back on a close-on-exec pipe (fd 3): EOF means
// the exec happened, a message is Exec's error. Init also still takes the
// pod flags Start used to pass it (--netns, --resolv-conf, ...), which do
// what Start now does in the agent.
//
// # State and adoption
//
// Every container has a JSON file <StateDir>/<id>.json (id, pod UID and
// name, argv, env, log path, pid, the process's start time in clock ticks
// from /proc/<pid>/stat, state, exit code), written atomically (temporary
// file, rename) at start, at exit and on Remove. Not fsynced: only a crash
// of the machine loses unsynced data, and it also ends every process the
// files describe. New loads them all: a pid that is alive, not a zombie, and has
// the recorded start time is the container's process (a reused pid has
// another start time) and is adopted as running. No Pdeathsig is set, so
// pods survive the agent.
//
// # Stdin (attach -i)
//
// A container whose spec sets stdin: true gets as stdin a FIFO,
// <StateDir>/<id>.stdin (its path in the state file); AttachStdin writes
// an attach session's stdin into it, as the kubelet's attach does. The
// runtime keeps the FIFO's write end open, so the end of one session's
// stdin is not the container's: without stdinOnce the container's own
// end is opened read-write, so it never reads EOF and its stdin survives
// an agent restart too (the restarted agent opens the FIFO again at the
// next attach). With stdinOnce (upstream's rule) the container's end is
// read-only and the runtime's end is the only writer: the first attach
// session's stdin ending closes it (the container reads EOF); later
// sessions' stdin is dropped. An agent restart closes such a stdin too
// (the writer went with the old agent; New records it closed). tty: true
// is ignored: the process runtime starts no container on a terminal.
//
// # Exit codes
//
// A process this Runtime started is its child: its exit is reaped and
// recorded exactly (128+N for signal N). One reaper waits for all of them
// (their pidfds in an epoll set of its own, parked in Go's netpoller: one
// goroutine and no OS thread for every child, none while there is no
// child; a blocking wait(2) per child where pidfds are missing). An
// adopted process is not our
// child (it was re-parented when the old agent exited), so its status can
// never be read: its exit is noticed by polling /proc and recorded as
// ExitCodeUnknown (137) with "exitCodeUnknown": true in the state file, as
// the kubelet reports a container whose status was lost
// (ContainerStatusUnknown, exit code 137).
//
// # Invariants
//
//   - A signal goes to a recorded pid only if the pid still has the
//     recorded start time (adopted), or has not been reaped yet (child).
//   - Stop is SIGTERM to the process group, then SIGKILL after the grace
//     period; once the main process has exited, the rest of its process
//     group is killed too.
//   - The host's own /etc/resolv.conf, /etc/hosts and mount table are never
//     changed: every mount happens in the container's mount namespace,
//     made rslave before the first bind mount.
//   - Nothing here calls os.Exit; Init returns its error.
//
// # Limits
//
//   - No PID namespace: a container is an ordinary process of the node
//     with its own network, mount and UTS namespaces.
//   - Resources (cgroups.go): with Config.Cgroups and a pod cgroup
//     (Sandbox.CgroupParent) each container gets a cgroup of its own
//     under the pod's with its limits, which its process starts in (on
//     v1 the forking thread joins it; on v2 the clone places the child,
//     CLONE_INTO_CGROUP) and each exec's helper starts in; ContainerStats
//     reads it; an exit after its oom_kill count rose is reason OOMKilled
//     (exit code 137), kept in the state file; Remove kills what is left
//     in it and removes it. Without cgroups limits are not enforced.
//   - securityContext (security.go): the uid, gid and supplementary
//     groups are runAsUser (default 0), runAsGroup (default 0, there is
//     no image /etc/passwd) and supplementalGroups (SysProcAttr.Credential);
//     the capability bounding set is containerd's default set after
//     add/drop (runtime.Security.Capabilities), dropped with
//     PR_CAPBSET_DROP on the forking thread, so root gets exactly that
//     set as permitted and effective set and a non-root user none (no
//     ambient capabilities, as under runc with CRI); privileged keeps the
//     agent's whole set; allowPrivilegeEscalation: false sets
//     PR_SET_NO_NEW_PRIVS on that thread. readOnlyRootFilesystem makes
//     every mount of the container's mount namespace read-only
//     (mount_setattr MOUNT_ATTR_RDONLY, one mount at a time, after the
//     binds) except those at or under /dev, /proc, /sys and the
//     container's writable volume mounts; /etc/hosts and
//     /etc/resolv.conf become read-only. Every exec gets the same uid,
//     groups, bounding set and no_new_privs (the helper's --creds, from
//     the state file).
//   - Refused with a runtime.ConfigError (the pod waits in
//     CreateContainerConfigError): seccomp RuntimeDefault and Localhost
//     (there is no seccomp loader here; Unconfined is honoured),
//     runAsNonRoot with uid 0, an unknown capability name.
//   - A process that leaves its process group is not stopped with it.
//   - If the agent dies between fork and the first state save, that one
//     process is not recorded and will not be adopted.
package process
