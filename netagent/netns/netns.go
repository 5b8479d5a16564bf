package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// DefaultDir is where iproute2 keeps named network namespaces.
const DefaultDir = "/run/netns"

// ErrInvalidName is returned for a name that cannot be a file name in the
// directory (empty, ".", "..", or holding a slash or a NUL).
var ErrInvalidName = errors.New("netns: invalid name")

// Manager creates and deletes named network namespaces in one directory.
// Its methods are safe for concurrent use on different names.
type Manager struct {
	dir string
}

// NewManager returns a Manager for dir ("" means DefaultDir). The
// directory is created on the first Create.
func NewManager(dir string) *Manager {
	if dir == "" {
		dir = DefaultDir
	}
	return &Manager{dir: dir}
}

// Dir is the directory holding the namespace files.
func (m *Manager) Dir() string { return m.dir }

// Path is the file of the namespace called name (it may not exist).
func (m *Manager) Path(name string) string { return filepath.Join(m.dir, name) }

// ValidName reports whether name can name a namespace file.
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 &&
		!strings.ContainsAny(name, "/\x00")
}

// Create makes a new network namespace and bind-mounts it on
// Dir()/name, returning that path. The new namespace has only a loopback
// interface, down.
func (m *Manager) Create(name string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return "", fmt.Errorf("netns: create %s: %w", name, err)
	}
	path := m.Path(name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", fmt.Errorf("netns: create %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("netns: create %s: %w", name, err)
	}
	if err := newAt(path); err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("netns: create %s: %w", name, err)
	}
	return path, nil
}

// newAt unshares a new network namespace on a locked thread, bind-mounts
// it on path and switches the thread back.
func newAt(path string) (err error) {
	runtime.LockOSThread()
	orig, err := vnetns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("unshare: %w", err)
	}
	// From here the thread is in the new namespace until Set(orig)
	// succeeds; if it does not, the thread stays locked and dies with the
	// goroutine.
	mountErr := unix.Mount(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), path, "none", unix.MS_BIND, "")
	if err := vnetns.Set(orig); err != nil {
		return errors.Join(mountErr, fmt.Errorf("restore netns (thread discarded): %w", err))
	}
	runtime.UnlockOSThread()
	if mountErr != nil {
		return fmt.Errorf("bind mount: %w", mountErr)
	}
	return nil
}

// Delete unmounts and removes the namespace file name. A missing file or
// one that is not mounted is not an error.
func (m *Manager) Delete(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	path := m.Path(name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil &&
		!errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("netns: delete %s: unmount: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("netns: delete %s: %w", name, err)
	}
	return nil
}

// List returns the names of the files in the directory (live or stale),
// sorted. A missing directory is an empty list.
func (m *Manager) List() ([]string, error) {
	entries, err := os.ReadDir(m.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netns: list %s: %w", m.dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Live reports whether the file name holds a network namespace. A
// missing file is (false, nil).
func (m *Manager) Live(name string) (bool, error) {
	if !ValidName(name) {
		return false, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return IsNetNS(m.Path(name))
}

// Exists reports whether the file name exists (live or stale).
func (m *Manager) Exists(name string) (bool, error) {
	if !ValidName(name) {
		return false, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	_, err := os.Lstat(m.Path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("netns: %w", err)
	}
	return true, nil
}

// IsNetNS reports whether path is a network namespace file (a bind mount
// of one, or a /proc/<pid>/ns/net link). A missing path is (false, nil).
func IsNetNS(path string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("netns: statfs %s: %w", path, err)
	}
	if st.Type != unix.NSFS_MAGIC {
		return false, nil
	}
	// nsfs also holds other namespace types: ask the kernel which one.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("netns: open %s: %w", path, err)
	}
	defer unix.Close(fd)
	typ, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE)
	if err != nil {
		return false, fmt.Errorf("netns: NS_GET_NSTYPE %s: %w", path, err)
	}
	return typ == unix.CLONE_NEWNET, nil
}

// Do runs fn on a locked OS thread inside the network namespace at path
// and switches the thread back afterwards. fn's own error is returned
// (joined with a failure to switch back, after which the thread is
// discarded instead of reused).
func Do(path string, fn func() error) error {
	target, err := vnetns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("netns: open %s: %w", path, err)
	}
	defer target.Close()
	return DoHandle(target, fn)
}

// DoHandle is Do for an open namespace handle.
func DoHandle(target vnetns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := vnetns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: get current netns: %w", err)
	}
	defer orig.Close()
	if err := vnetns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: enter %s: %w", target, err)
	}
	fnErr := fn()
	if err := vnetns.Set(orig); err != nil {
		return errors.Join(fnErr, fmt.Errorf("netns: switch back (thread discarded): %w", err))
	}
	runtime.UnlockOSThread()
	return fnErr
}
