package process

import (
	"fmt"
	"os/exec"
	"path"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Cgroups is what the runtime needs of the node's cgroup file systems
// (*cgroups.FS): a cgroup per container under the pod's, which the
// container's process starts in, its counters, its removal.
type Cgroups interface {
	Version() cgroups.Version
	Ensure(cg string, r runtime.Resources) error
	JoinThread(cg string) error
	V2Dir(cg string) string
	Stats(cg string) (cgroups.Stats, error)
	Pids(cg string) ([]int, error)
	Remove(cg string) error
}

// containerCgroup is container id's cgroup under the pod's, "" when the
// runtime or the pod has none.
func (r *Runtime) containerCgroup(sb runtime.Sandbox, id string) string {
	if r.cfg.Cgroups == nil || sb.CgroupParent == "" {
		return ""
	}
	return path.Join(sb.CgroupParent, id)
}

// intoCgroup arranges for cmd, started next from the calling locked
// thread, to begin life in cgroup cg: on v1 the thread itself joins it
// (a forked child inherits the forking thread's cgroups; the thread is
// never reused, startInPod); on v2, where a thread cannot leave its
// process's cgroup, the clone places the child there (CLONE_INTO_CGROUP
// through SysProcAttr.CgroupFD). The returned func closes what it opened,
// after cmd.Start.
func (r *Runtime) intoCgroup(cg string, cmd *exec.Cmd) (func(), error) {
	if cg == "" {
		return func() {}, nil
	}
	if r.cfg.Cgroups.Version() == cgroups.V1 {
		return func() {}, r.cfg.Cgroups.JoinThread(cg)
	}
	fd, err := unix.Open(r.cfg.Cgroups.V2Dir(cg), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", cg, err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = fd
	return func() { _ = unix.Close(fd) }, nil
}

// startInCgroup starts cmd in cgroup cg ("": where the agent is) from a
// throwaway thread, as startInPod does, so that the child is in the
// cgroup before it runs a single instruction (a helper that execs a short
// command would otherwise be done before a later move).
func (r *Runtime) startInCgroup(cg string, cmd *exec.Cmd) error {
	if cg == "" {
		return cmd.Start()
	}
	return onThrowawayThread(func() error {
		done, err := r.intoCgroup(cg, cmd)
		if err != nil {
			return err
		}
		defer done()
		return cmd.Start()
	})
}

// oomKilled says whether the kernel's OOM killer ended a process in
// container cgroup cg: its oom_kill count is above zero.
func (r *Runtime) oomKilled(cg string) bool {
	if cg == "" {
		return false
	}
	s, err := r.cfg.Cgroups.Stats(cg)
	return err == nil && s.OOMKills > 0
}

// removeCgroup kills what is left in a container's cgroup (a process
// that left the container's process group, which Stop signals) and
// removes the cgroup, as runc does on delete.
func (r *Runtime) removeCgroup(cg string) error {
	if cg == "" || r.cfg.Cgroups == nil {
		return nil
	}
	if pids, err := r.cfg.Cgroups.Pids(cg); err == nil {
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	if err := r.cfg.Cgroups.Remove(cg); err != nil {
		return fmt.Errorf("runtime/process: %w", err)
	}
	return nil
}
