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
