package runtime

import (
	"context"
	"io"
	"time"
)

// Sandbox is what a pod gives each of its containers: the pod's identity,
// its network namespace, the files that become the container's
// /etc/resolv.conf and /etc/hosts, and the directory its logs go to.
type Sandbox struct {
	PodUID, Namespace, Name string
	NetNSPath               string
	ResolvConf, Hosts       string /* file paths */
	LogDir                  string
	// CgroupParent is the pod's cgroup, relative to the root of each
	// hierarchy ("/kubepods/burstable/pod<uid>", as the kubelet lays it
	// out; netagent/cgroups makes it): a runtime puts each container in
	// a cgroup of its own under it. Empty: no cgroups (the runtime puts
	// the container nowhere special, as before).
	CgroupParent string
}

// ContainerSpec is one container of a pod. A runtime that has no images
// (runtime/process) ignores Image and runs Command + Args.
type ContainerSpec struct {
	Name, Image        string
	Command, Args, Env []string
	WorkingDir         string
	Mounts             []Mount
	// Stdin, StdinOnce and TTY are the pod spec's: Stdin starts the
	// container with an open stdin an attach can write to (a runtime
	// that cannot ignores them; see its package doc); StdinOnce closes
	// it when the first attach session's stdin ends.
	Stdin, StdinOnce, TTY bool
	// Resources is what the container's own cgroup is given (only with
	// Sandbox.CgroupParent set).
	Resources Resources
	// Sysctls are the pod's IPC sysctls (kernel.shm*, kernel.msg*,
	// kernel.sem, fs.mqueue.*), dot form, for the container's IPC
	// namespace; the agent sets the net.* ones in the pod's network
	// namespace itself. A runtime without an IPC namespace of the
	// container's own fails Start with a *ConfigError.
	Sysctls map[string]string
	// Security is the container's effective security context (the
	// pod's merged with the container's, as the kubelet does). A
	// runtime that cannot honour a field, or whose image breaks it
	// (runAsNonRoot), fails Start with a *ConfigError (security.go).
	Security Security
}

// Resources are a container cgroup's limits, computed from the pod
// spec as the kubelet does (netagent/cgroups). Zero means unset.
type Resources struct {
	// CPUShares is cpu.shares (v1) from requests.cpu (milli*1024/1000,
	// at least 2); a v2 runtime converts it to cpu.weight.
	CPUShares uint64
	// CPUQuota and CPUPeriod (µs) are cpu.cfs_quota_us/cfs_period_us
	// (v1) or cpu.max (v2) from limits.cpu.
	CPUQuota  int64
	CPUPeriod uint64
	// MemoryLimit is memory.limit_in_bytes (v1) or memory.max (v2), in
	// bytes, from limits.memory.
	MemoryLimit int64
}

// Security is a container's effective security context. Nil pointers
// and empty fields are the runtime's defaults (root, the default
// capability set, a writable root file system).
type Security struct {
	RunAsUser, RunAsGroup *int64
	RunAsNonRoot          bool
	SupplementalGroups    []int64 // with the pod's fsGroup, as the kubelet adds it
	ReadOnlyRootFS        bool
	Privileged            bool
	CapAdd, CapDrop       []string // "NET_ADMIN" or "ALL", without CAP_
	NoNewPrivs            bool     // allowPrivilegeEscalation: false
	// Seccomp is "" or "Unconfined" (none), "RuntimeDefault", or
	// "Localhost/<path>".
	Seccomp string
}

// Mount bind-mounts Source (a directory or file of the node) at
// Destination in the container, in order (a later mount may cover an
// earlier one), read-only if ReadOnly.
type Mount struct {
	Source, Destination string
	ReadOnly            bool
}

// State is a container's lifecycle state.
type State string

// The states a container can be in.
const (
	StateCreated State = "created"
	StateRunning State = "running"
	StateExited  State = "exited"
	StateUnknown State = "unknown"
)

// ContainerStatus is what a runtime knows about one container.
type ContainerStatus struct {
	ID, PodUID, Name      string
	State                 State
	ExitCode              int
	StartedAt, FinishedAt time.Time
	Pid                   int
	LogPath               string
	// Reason is the runtime's word on an exit: "OOMKilled" when the
	// kernel's OOM killer ended the container (its cgroup's oom_kill
	// count went up), else empty (the agent says Completed or Error).
	Reason string
}

// Runtime runs a pod's containers. Implementations: runtime/process and
// runtime/containerd.
type Runtime interface {
	Name() string
	Start(ctx context.Context, sb Sandbox, c ContainerSpec) (ContainerStatus, error)
	Stop(ctx context.Context, id string, grace time.Duration) error // SIGTERM, then SIGKILL after grace
	Remove(ctx context.Context, id string) error
	List(ctx context.Context) ([]ContainerStatus, error) // every container it knows (survives an agent restart)
	Status(ctx context.Context, id string) (ContainerStatus, error)
	Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (exitCode int, output []byte, err error)
	Logs(ctx context.Context, id string, follow bool, w io.Writer) error
}
