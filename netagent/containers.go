package netagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Applying a plan (podactions.go): the sandbox, and each container's
// start, kill, restart and back-off.

// ensureSandbox gives the pod its network (or adopts it) and writes its
// resolv.conf and hosts.
func (w *podWorker) ensureSandbox(ctx context.Context, pod *api.Pod) error {
	if pod.Spec.HostNetwork {
		w.m.event(pod, api.EventTypeWarning, "HostNetworkUnsupported", "hostNetwork is not supported by skiff: the pod gets its own network namespace")
	}
	dir := w.m.podDir(w.uid)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return fmt.Errorf("pod dir: %w", err)
	}
	if err := w.ensurePodCgroup(pod); err != nil {
		return err
	}
	rc, err := podResolvConf(pod, w.m.nodeDNS, w.m.cfg.ClusterDomain, w.m.hostRC)
	if err != nil {
		return err
	}
	var ports []cni.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, cni.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: string(p.Protocol), HostIP: p.HostIP})
			}
		}
	}
	var pn cni.PodNetwork
	add := func() error {
		return w.m.netns.do(func() error {
			var err error
			pn, err = w.m.net.AddPod(ctx, w.uid, pod.Namespace, pod.Name, ports)
			return err
		})
	}
	// The first AddPod of the agent runs alone: libcni (v1.3.1) sets up
	// its plugin executor lazily on first use, unsynchronised, and
	// concurrent first calls race on it. Later calls find it set.
	first := false
	w.m.firstAdd.Do(func() { first, err = true, add() })
	if !first {
		select {
		case w.m.sandboxes <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		err = add()
		<-w.m.sandboxes
	}
	if err != nil {
		return fmt.Errorf("pod network: %w", err)
	}
	if err := applyNetSysctls(pod, pn.NetNSPath); err != nil { // sysctls.go
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "resolv.conf"), []byte(rc.String()), 0o644); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, "hosts"), []byte(podHosts(pod, pn.IP, w.m.cfg.ClusterDomain)), 0o644); err != nil {
		return fmt.Errorf("hosts: %w", err)
	}
	w.net = &pn
	w.setNetNSPath(pn.NetNSPath)
	w.sandboxErr = ""
	w.sandboxBO = 0
	return nil
}

func (w *podWorker) sandbox(pod *api.Pod) runtime.Sandbox {
	dir := w.m.podDir(w.uid)
	return runtime.Sandbox{
		PodUID: w.uid, Namespace: pod.Namespace, Name: pod.Name,
		NetNSPath:  w.net.NetNSPath,
		ResolvConf: filepath.Join(dir, "resolv.conf"),
		Hosts:      filepath.Join(dir, "hosts"),
		LogDir:     filepath.Join(dir, "logs"),
		// Set once ensureSandbox made it; a container started before
		// (none is) would get none.
		CgroupParent: w.cgroup,
	}
}

// configRetryBase is the first retry of a container whose env or volumes
// could not be built (CreateContainerConfigError).
const configRetryBase = time.Second

// applyContainer does what plan says for c. It returns when c next
// needs a look (zero: only on events).
func (w *podWorker) applyContainer(ctx context.Context, pod *api.Pod, c *ctr, now time.Time, plan containerActions) time.Time {
	if c.id != "" && c.st.State == runtime.StateRunning {
		c.everStarted = true
		w.ensureProbes(ctx, pod, c)
	}
	if c.id != "" && c.st.State == runtime.StateExited {
		w.stopProbes(c)
	}
	if s := plan.Schedule; s != nil {
		c.notBefore, c.backoff = s.NotBefore, s.Backoff
	}
	switch plan.Action {
	case actNone:
		return time.Time{}
	case actRecheck:
		return plan.At
	case actKill:
		w.killForProbe(ctx, pod, c, plan)
		return time.Time{}
	case actBackOff:
		if c.id != "" {
			// An exited instance waits for its restart.
			c.waitReason = reasonCrashLoop
			c.waitMsg = fmt.Sprintf("back-off %v restarting failed container=%s pod=%s_%s(%s)",
				c.notBefore.Sub(now).Round(time.Second), c.spec.Name, pod.Name, pod.Namespace, w.uid)
		} else {
			w.pullBackOff(pod, c)
		}
		return plan.At
	case actRestart:
		c.last = w.terminatedState(c)
		old := c.id
		c.id, c.st, c.killed = "", runtime.ContainerStatus{}, false
		c.restarts++
		w.m.removeContainer(ctx, old)
		w.forgetProbes(old)
	}
	// actRestart and actStart: start an instance.
	if err := w.startContainer(ctx, pod, c); err != nil {
		if errors.As(err, new(errEnvConfig)) || errors.As(err, new(errVolume)) {
			// A missing ConfigMap or Secret (or one the node may not read
			// yet: the node authorizer learns of a pod as the agent does)
			// is looked for again after 1s, 2s, 4s ... up to the resync
			// period, not the crash-loop back-off.
			c.configBO = min(max(2*c.configBO, configRetryBase), w.m.cfg.ResyncPeriod)
			c.notBefore = now.Add(c.configBO)
			return c.notBefore
		}
		if c.backoff == 0 {
			c.backoff = w.m.cfg.BackoffBase
		}
		c.notBefore = now.Add(c.backoff)
		c.backoff = min(2*c.backoff, w.m.cfg.BackoffMax)
		return c.notBefore
	}
	c.notBefore, c.configBO = time.Time{}, 0
	return time.Time{}
}

// killForProbe stops c's instance for a failed liveness or startup probe
// (plan.Probe) within plan.Grace; the exit is seen by the relist and the
// restart follows the policy. The stop runs on a goroutine of the
// manager's (it blocks for up to the grace), so the worker keeps syncing.
func (w *podWorker) killForProbe(ctx context.Context, pod *api.Pod, c *ctr, plan containerActions) {
	ps := w.probeSnapshot(c.id)
	w.m.event(pod, api.EventTypeWarning, "Unhealthy", "%s probe failed: %s", plan.Probe, ps.msg)
	w.m.event(pod, api.EventTypeNormal, "Killing", "Container %s failed %s probe, will be restarted", c.spec.Name, strings.ToLower(plan.Probe))
	w.log.Info("killing container for a failed probe", "container", c.spec.Name, "probe", plan.Probe)
	c.killed = true
	w.stopProbes(c)
	id, grace := c.id, plan.Grace
	// The stop outlives an agent shutdown, as a termination's does: the
	// container is not left half-stopped.
	w.m.wg.Go(func() {
		if err := w.m.rt.Stop(context.WithoutCancel(ctx), id, grace); err != nil {
			w.log.Warn("stopping the container failed", "id", id, "err", err)
		}
		w.poke()
	})
}

func (w *podWorker) startContainer(ctx context.Context, pod *api.Pod, c *ctr) error {
	ec := envContext{podIP: w.net.IP, hostIPs: w.m.cfg.NodeIPs, nodeName: w.m.cfg.NodeName, serviceEnv: w.m.kubernetesServiceEnv()}
	env, warns, err := containerEnv(ctx, pod, &c.spec, ec, w.m.objects)
	for _, wn := range warns {
		w.m.event(pod, api.EventTypeWarning, wn.reason, "%s", wn.msg)
	}
	if err != nil {
		c.waitReason, c.waitMsg = reasonConfigError, err.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Error: %v", err)
		return err
	}
	mounts, err := w.containerMounts(ctx, pod, &c.spec)
	if err != nil {
		c.waitReason, c.waitMsg = reasonCreating, err.Error()
		w.m.event(pod, api.EventTypeWarning, "FailedMount", "%v", err)
		return err
	}
	if err := w.ensureImage(ctx, pod, c); err != nil {
		return err
	}
	spec := runtime.ContainerSpec{
		Name: c.spec.Name, Image: c.spec.Image,
		Command: expandArgs(c.spec.Command, env), Args: expandArgs(c.spec.Args, env),
		Env: env, WorkingDir: c.spec.WorkingDir, Mounts: mounts,
		Stdin: c.spec.Stdin, StdinOnce: c.spec.StdinOnce, TTY: c.spec.TTY,
		Resources: w.containerResources(&c.spec),
		Sysctls:   ipcSysctls(pod), // the net.* ones are the sandbox's
	}
	spec.Security = effectiveSecurity(pod, &c.spec, filepath.Join(w.m.cfg.DataDir, "seccomp"))
	st, err := w.m.rt.Start(ctx, w.sandbox(pod), spec)
	if ce := (*runtime.ConfigError)(nil); errors.As(err, &ce) {
		// A securityContext the runtime cannot honour, or that the image
		// breaks (runAsNonRoot): CreateContainerConfigError, retried as
		// a missing ConfigMap is.
		c.waitReason, c.waitMsg = reasonConfigError, ce.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Error: %v", ce)
		w.log.Warn("container refused by the runtime", "container", c.spec.Name, "err", err)
		return errEnvConfig{msg: ce.Error()}
	}
	if err != nil {
		c.waitReason, c.waitMsg = reasonRunError, err.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Error: %v", err)
		w.log.Warn("container start failed", "container", c.spec.Name, "err", err)
		return err
	}
	c.id, c.st, c.everStarted, c.killed = st.ID, st, true, false
	c.waitReason, c.waitMsg = "", ""
	w.m.event(pod, api.EventTypeNormal, "Started", "Started container %s", c.spec.Name)
	w.log.Debug("container started", "container", c.spec.Name, "id", st.ID)
	w.ensureProbes(ctx, pod, c)
	return nil
}
