package process

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// InitCommand is the hidden subcommand the runtime re-executes its helper
// binary with (`skiff runtime-init ...`). A binary that serves as the helper
// must hand os.Args[2:] to Init when os.Args[1] is InitCommand.
const InitCommand = "runtime-init"

// syncFD is the descriptor of the pipe the helper reports failures on; it is
// close-on-exec, so a successful execve closes it and the parent reads EOF.
const syncFD = 3

// SelfCommand is the command name that runs the helper binary itself
// (skiff): a pod whose command is `skiff netexec ...` runs the very binary
// the agent runs, found through /proc/self/exe rather than PATH, so the
// examples work without installing skiff anywhere (and a test binary that
// serves as the helper serves as `skiff` too).
const SelfCommand = "skiff"

// lookPath finds a command as execve needs it: SelfCommand is this binary.
func lookPath(name string) (string, error) {
	if name == SelfCommand {
		self, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("resolve %s to this binary: %w", name, err)
		}
		return self, nil
	}
	return exec.LookPath(name)
}

// initOptions are the helper's flags.
type initOptions struct {
	netns      string          // join this network namespace (a file, e.g. /run/netns/x)
	resolvConf string          // bind-mounted over /etc/resolv.conf
	hosts      string          // bind-mounted over /etc/hosts
	hostname   string          // a new UTS namespace with this host name
	workdir    string          // chdir here before exec; "" means /
	joinPid    int             // Exec: join this process's net, uts and mount namespaces instead
	joinTicks  uint64          // ... if its start time (in clock ticks) is still this
	syncFD     int             // report errors here; -1: none
	mounts     []runtime.Mount // bind mounts after resolv.conf and hosts (Start only, not the helper)
	creds      *creds          // user, capabilities, no_new_privs, read-only root (nil: the agent's)
	// cgroup, for Start only (not the helper), puts the child into the
	// container's cgroup from the forking thread (Runtime.intoCgroup);
	// it returns what to run after the start. Nil: no cgroup.
	cgroup func(*exec.Cmd) (func(), error)
}

// helperArgs builds the helper's command line (without the binary).
func (o initOptions) args(argv []string) []string {
	a := []string{InitCommand, "--sync-fd=" + strconv.Itoa(o.syncFD)}
	add := func(name, v string) {
		if v != "" {
			a = append(a, "--"+name+"="+v)
		}
	}
	add("netns", o.netns)
	add("resolv-conf", o.resolvConf)
	add("hosts", o.hosts)
	add("hostname", o.hostname)
	add("workdir", o.workdir)
	if o.joinPid > 0 {
		a = append(a, "--join-pid="+strconv.Itoa(o.joinPid), "--join-start="+strconv.FormatUint(o.joinTicks, 10))
	}
	if o.creds != nil {
		b, _ := json.Marshal(o.creds) // plain numbers and bools: cannot fail
		a = append(a, "--creds="+string(b))
	}
	return append(append(a, "--"), argv...)
}

func parseInitArgs(args []string) (initOptions, []string, error) {
	o := initOptions{syncFD: -1}
	fs := flag.NewFlagSet(InitCommand, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&o.netns, "netns", "", "network namespace file to join")
	fs.StringVar(&o.resolvConf, "resolv-conf", "", "file bind-mounted over /etc/resolv.conf")
	fs.StringVar(&o.hosts, "hosts", "", "file bind-mounted over /etc/hosts")
	fs.StringVar(&o.hostname, "hostname", "", "host name (in a new UTS namespace)")
	fs.StringVar(&o.workdir, "workdir", "", "working directory")
	fs.IntVar(&o.joinPid, "join-pid", 0, "join the namespaces of this process (exec)")
	fs.Uint64Var(&o.joinTicks, "join-start", 0, "the start time (clock ticks) --join-pid must have")
	fs.IntVar(&o.syncFD, "sync-fd", -1, "close-on-exec pipe to report errors on")
	fs.Func("creds", "the container's user, capabilities and no_new_privs (JSON)", func(v string) error {
		o.creds = new(creds)
		return json.Unmarshal([]byte(v), o.creds)
	})
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return o, nil, errors.New("no command")
	}
	return o, argv, nil
}

// Init is the body of the hidden `skiff runtime-init` helper. On the one
// locked OS thread that will exec, it joins the pod's network namespace,
// unshares a mount namespace (made rslave, so nothing propagates back to
// the host), remounts /sys for the pod's netns, bind-mounts the pod's
// resolv.conf and hosts files, sets the host name in a new UTS namespace,
// changes to the working directory and execs the command (looked up in the
// environment's PATH). With --join-pid (Exec) it joins that process's
// net, uts and mount namespaces instead.
//
// Init returns only on failure; the error is also written to the sync pipe
// so that the runtime's Start or Exec returns it.
func Init(args []string) error {
	// skiff's main catches SIGTERM for a graceful shutdown; the helper must
	// die of it as the workload would.
	signal.Reset()
	// Never unlocked: namespaces are per thread, and this thread execs.
	goruntime.LockOSThread()
	o, argv, err := parseInitArgs(args)
	var sync *os.File
	if o.syncFD >= 0 {
		if _, e := unix.FcntlInt(uintptr(o.syncFD), unix.F_SETFD, unix.FD_CLOEXEC); e == nil {
			sync = os.NewFile(uintptr(o.syncFD), "sync")
		}
	}
	if err == nil {
		err = setupAndExec(o, argv)
	}
	err = fmt.Errorf("runtime-init: %w", err)
	if sync != nil {
		_, _ = sync.WriteString(err.Error())
		sync.Close()
	}
	return err
}

func setupAndExec(o initOptions, argv []string) error {
	if o.joinPid > 0 {
		if err := joinContainer(o.joinPid, o.joinTicks); err != nil {
			return err
		}
	} else if err := setupPod(o); err != nil {
		return err
	}
	dir := o.workdir
	if dir == "" {
		dir = "/"
	}
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("chdir %s: %w", dir, err)
	}
	path, err := lookPath(argv[0])
	if err != nil {
		return err
	}
	if o.creds != nil {
		// This thread execs: its bounding set, no_new_privs and user
		// become the command's.
		if err := applyThread(*o.creds); err != nil {
			return err
		}
		if err := setUser(*o.creds); err != nil {
			return err
		}
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil // not reached
}

// setupPod prepares the namespaces of a new container.
func setupPod(o initOptions) error {
	if o.netns != "" {
		if err := setnsPath(o.netns, unix.CLONE_NEWNET); err != nil {
			return err
		}
	}
	flags := unix.CLONE_NEWNS
	if o.hostname != "" {
		flags |= unix.CLONE_NEWUTS
	}
	if err := unix.Unshare(flags); err != nil {
		return fmt.Errorf("unshare: %w", err)
	}
	// Mounts made here stay here; the host's later mounts still show up.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make / rslave: %w", err)
	}
	if o.netns != "" {
		// As `ip netns exec` does: a sysfs of the pod's netns, so that
		// /sys/class/net shows the pod's links. Mounted over the old one,
		// so a failure leaves the host's /sys in place; best effort.
		_ = unix.Mount("sysfs", "/sys", "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	for _, b := range []struct{ src, dst string }{{o.resolvConf, "/etc/resolv.conf"}, {o.hosts, "/etc/hosts"}} {
		if b.src == "" {
			continue
		}
		if err := unix.Mount(b.src, b.dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mount %s over %s: %w", b.src, b.dst, err)
		}
	}
	for _, m := range o.mounts {
		if err := bindMount(m); err != nil {
			return err
		}
	}
	if o.hostname != "" {
		if err := unix.Sethostname([]byte(o.hostname)); err != nil {
			return fmt.Errorf("sethostname %q: %w", o.hostname, err)
		}
	}
	if o.creds != nil && o.creds.ReadOnly {
		if err := makeRootReadOnly(readOnlyKeep(o.mounts)); err != nil {
			return err
		}
	}
	return nil
}

// bindMount mounts m.Source at m.Destination in the current mount
// namespace. A missing destination is created first (a directory, or an
// empty file for a file source) in the node's file system, which the
// process runtime shares with its containers: it stays there, empty, after
// the container.
func bindMount(m runtime.Mount) error {
	if !filepath.IsAbs(m.Destination) {
		return fmt.Errorf("mount %s: destination %q is not absolute", m.Source, m.Destination)
	}
	st, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	if _, err := os.Lstat(m.Destination); errors.Is(err, fs.ErrNotExist) {
		if st.IsDir() {
			err = os.MkdirAll(m.Destination, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(m.Destination), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(m.Destination, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("mount point %s: %w", m.Destination, err)
		}
	}
	if err := unix.Mount(m.Source, m.Destination, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s at %s: %w", m.Source, m.Destination, err)
	}
	if m.ReadOnly {
		if err := unix.Mount("", m.Destination, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", m.Destination, err)
		}
	}
	return nil
}

// joinContainer enters the namespaces of a running container's process.
func joinContainer(pid int, ticks uint64) error {
	// setns into a mount namespace needs an fs_struct of our own; Go's
	// threads share one.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare fs: %w", err)
	}
	kinds := []struct {
		name string
		flag int
	}{{"net", unix.CLONE_NEWNET}, {"uts", unix.CLONE_NEWUTS}, {"mnt", unix.CLONE_NEWNS}}
	fds := make([]int, 0, len(kinds))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, k := range kinds {
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, k.name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s namespace of pid %d: %w", k.name, pid, err)
		}
		fds = append(fds, fd)
	}
	// The descriptors are open: if the pid still has its start time now,
	// they are that process's namespaces and not a reused pid's.
	if st, err := readStat(pid); err != nil || st.startTicks != ticks {
		return fmt.Errorf("pid %d is no longer the container's process", pid)
	}
	for i, k := range kinds {
		if err := unix.Setns(fds[i], k.flag); err != nil {
			return fmt.Errorf("setns %s of pid %d: %w", k.name, pid, err)
		}
	}
	return nil
}

func setnsPath(path string, flag int) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, flag); err != nil {
		return fmt.Errorf("setns %s: %w", path, err)
	}
	return nil
}

// podHostname is the host name a pod's containers get: the pod name cut to
// 63 bytes, without a trailing '-' or '.', as the kubelet does.
func podHostname(name string) string {
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "-.")
}
