package netagent

import (
	"errors"
	"fmt"
	"os"
	"path"
	goruntime "runtime"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Cgroup modes (--cgroups).
const (
	CgroupsAuto = "auto" // on when the agent is root and a cgroup file system with cpu or memory is mounted
	CgroupsOn   = "on"   // on, or an error saying why not
	CgroupsOff  = "off"  // no cgroups: pods' limits are not enforced
)

// NodeCgroups is the node's cgroup file systems for mode (CgroupsAuto,
// CgroupsOn, CgroupsOff; "" is off): nil when off, and for auto when the
// agent is not root or finds no usable hierarchy (why goes into reason).
func NodeCgroups(mode string) (fs *cgroups.FS, reason string, err error) {
	switch mode {
	case "", CgroupsOff:
		return nil, "--cgroups off", nil
	case CgroupsAuto, CgroupsOn:
	default:
		return nil, "", fmt.Errorf("--cgroups %q: want auto, on or off", mode)
	}
	if os.Geteuid() != 0 {
		if mode == CgroupsOn {
			return nil, "", errors.New("--cgroups on: the agent must run as root to make cgroups")
		}
		return nil, "the agent is not root", nil
	}
	fs, err = cgroups.Detect()
	if err != nil {
		if mode == CgroupsOn {
			return nil, "", fmt.Errorf("--cgroups on: %w", err)
		}
		return nil, err.Error(), nil
	}
	return fs, "", nil
}

// PodCgroups is what the agent needs of the node's cgroups (*cgroups.FS):
// the pod cgroup made before its containers, removed after them.
type PodCgroups interface {
	Ensure(cg string, r runtime.Resources) error
	Remove(cg string) error
}

// ensurePodCgroup makes the pod's cgroup with the kubelet's values
// (netagent/cgroups) and remembers it for the sandbox; a no-op without
// cgroups (Deps.Cgroups nil).
func (w *podWorker) ensurePodCgroup(pod *api.Pod) error {
	cg := w.m.cg
	if cg == nil {
		return nil
	}
	qos := api.PodQOSClass(&pod.Spec)
	parent := cgroups.PodParent(w.m.cfg.CgroupRoot, qos, w.uid)
	// kubepods: the node's allocatable CPU as its weight, as the
	// kubelet gives it (Skiff reserves nothing: every CPU).
	kubepods := path.Join("/", w.m.cfg.CgroupRoot, "kubepods")
	if err := cg.Ensure(kubepods, runtime.Resources{CPUShares: cgroups.MilliCPUToShares(int64(goruntime.NumCPU()) * 1000)}); err != nil {
		return fmt.Errorf("pod cgroup: %w", err)
	}
	if qos != api.PodQOSGuaranteed {
		// The QoS level cgroup; BestEffort's gets the least share, as
		// the kubelet gives it.
		var r runtime.Resources
		if qos == api.PodQOSBestEffort {
			r.CPUShares = cgroups.MinShares
		}
		if err := cg.Ensure(path.Dir(parent), r); err != nil {
			return fmt.Errorf("pod cgroup: %w", err)
		}
	}
	if err := cg.Ensure(parent, cgroups.PodResources(&pod.Spec, qos)); err != nil {
		return fmt.Errorf("pod cgroup: %w", err)
	}
	w.cgroup = parent
	return nil
}

// containerResources is what c's own cgroup gets, zero without cgroups.
func (w *podWorker) containerResources(c *api.Container) runtime.Resources {
	if w.m.cg == nil {
		return runtime.Resources{}
	}
	return cgroups.ContainerResources(c)
}

// removePodCgroup removes the pod's cgroup once its containers are gone.
func (w *podWorker) removePodCgroup() {
	if w.m.cg == nil {
		return
	}
	for _, qos := range []string{api.PodQOSGuaranteed, api.PodQOSBurstable, api.PodQOSBestEffort} {
		// Every class: an agent restarted since the pod started knows its
		// uid, not where its cgroup was made.
		if err := w.m.cg.Remove(cgroups.PodParent(w.m.cfg.CgroupRoot, qos, w.uid)); err != nil {
			w.log.Warn("removing the pod cgroup failed", "err", err)
		}
	}
	w.cgroup = ""
}
