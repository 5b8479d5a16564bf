package cgroups

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Version is a node's cgroup layout.
type Version int

// The layouts Detect can find.
const (
	V1 Version = 1
	V2 Version = 2
)

func (v Version) String() string { return "v" + strconv.Itoa(int(v)) }

// v1Controllers are the v1 hierarchies Skiff makes cgroups in.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "pids"}

// v2Controllers are the controllers enabled down a v2 tree.
var v2Controllers = []string{"cpu", "memory", "pids"}

// FS is a node's cgroup file systems: where each hierarchy is mounted. Its
// methods take cgroup paths relative to the hierarchies' roots
// ("/kubepods/pod<uid>/<id>").
type FS struct {
	version Version
	// v1: controller → mount point; v2: "" → the cgroup2 mount point.
	mounts map[string]string
	// others are the v1 hierarchies Skiff makes nothing in but runc
	// does (cpuset, devices, freezer, ...): Remove cleans them too.
	others []string
}

// Version is V1 or V2.
func (f *FS) Version() Version { return f.version }

// Detect finds the node's cgroup file systems in /proc/self/mountinfo.
func Detect() (*FS, error) {
	fh, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	defer fh.Close()
	return parseMountinfo(fh)
}

// parseMountinfo picks the layout from a mountinfo (proc(5)): v1 when a
// cgroup hierarchy holds cpu or memory, else v2 when a cgroup2 file
// system is mounted.
func parseMountinfo(r io.Reader) (*FS, error) {
	v1 := map[string]string{}
	var v2 string
	var others []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		mnt := unescapeMount(f[4])
		switch g[0] {
		case "cgroup2":
			if v2 == "" {
				v2 = mnt
			}
		case "cgroup":
			ours := false
			for _, opt := range strings.Split(g[2], ",") {
				if slices.Contains(v1Controllers, opt) {
					ours = true
					if _, seen := v1[opt]; !seen {
						v1[opt] = mnt
					}
				}
			}
			if !ours && !slices.Contains(others, mnt) {
				others = append(others, mnt)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cgroups: mountinfo: %w", err)
	}
	if v1["cpu"] != "" || v1["memory"] != "" {
		return &FS{version: V1, mounts: v1, others: others}, nil
	}
	if v2 != "" {
		return &FS{version: V2, mounts: map[string]string{"": v2}}, nil
	}
	return nil, errors.New("cgroups: no cgroup file system is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// newFS is an FS over explicit mounts (tests use temporary directories).
func newFS(v Version, mounts map[string]string) *FS { return &FS{version: v, mounts: mounts} }

// dirs are a cgroup's directories: one per v1 hierarchy Skiff uses (keyed
// by controller; two controllers mounted together share one), or the one
// v2 directory.
func (f *FS) dirs(cg string) map[string]string {
	out := make(map[string]string, len(f.mounts))
	for ctl, mnt := range f.mounts {
		out[ctl] = filepath.Join(mnt, filepath.FromSlash(path.Clean("/"+cg)))
	}
	return out
}

// Dirs are the directories of cgroup cg, one per hierarchy, each once:
// what a process joins (its pid into cgroup.procs, or a thread into tasks).
func (f *FS) Dirs(cg string) []string {
	var out []string
	for _, d := range f.dirs(cg) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// Ensure makes cgroup cg (and its parents) in every hierarchy and writes r
// into it; a zero field of r leaves the kernel's default (no limit,
// default shares), except that an existing limit is reset to none.
func (f *FS) Ensure(cg string, r runtime.Resources) error {
	if f.version == V2 {
		return f.ensureV2(cg, r)
	}
	for ctl, dir := range f.dirs(cg) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cgroups: %w", err)
		}
		var err error
		switch ctl {
		case "cpu":
			shares := r.CPUShares
			if shares == 0 {
				shares = SharesPerCPU
			}
			quota, period := r.CPUQuota, r.CPUPeriod
			if quota <= 0 {
				quota = -1
			}
			if period == 0 {
				period = QuotaPeriod
			}
			err = writeFiles(dir,
				"cpu.shares", strconv.FormatUint(shares, 10),
				"cpu.cfs_period_us", strconv.FormatUint(period, 10),
				"cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
		case "memory":
			limit := "-1"
			if r.MemoryLimit > 0 {
				limit = strconv.FormatInt(r.MemoryLimit, 10)
			}
			err = writeFiles(dir, "memory.limit_in_bytes", limit)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *FS) ensureV2(cg string, r runtime.Resources) error {
	mnt := f.mounts[""]
	// Enable the controllers in each ancestor's subtree_control, from
	// the root down, so that cg has them.
	parts := strings.Split(strings.Trim(path.Clean("/"+cg), "/"), "/")
	dir := mnt
	for _, p := range parts {
		if err := enableV2(dir); err != nil {
			return err
		}
		dir = filepath.Join(dir, p)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cgroups: %w", err)
		}
	}
	weight := SharesToWeight(r.CPUShares)
	if weight == 0 {
		weight = 100
	}
	cpuMax := "max"
	period := r.CPUPeriod
	if period == 0 {
		period = QuotaPeriod
	}
	if r.CPUQuota > 0 {
		cpuMax = strconv.FormatInt(r.CPUQuota, 10)
	}
	memMax := "max"
	if r.MemoryLimit > 0 {
		memMax = strconv.FormatInt(r.MemoryLimit, 10)
	}
	return writeFiles(dir,
		"cpu.weight", strconv.FormatUint(weight, 10),
		"cpu.max", cpuMax+" "+strconv.FormatUint(period, 10),
		"memory.max", memMax)
}

// enableV2 turns on, in dir's cgroup.subtree_control, each of
// v2Controllers that dir's cgroup.controllers offers and that is not on
// yet.
func enableV2(dir string) error {
	avail, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	var add []string
	for _, c := range v2Controllers {
		if slices.Contains(strings.Fields(string(avail)), c) && !slices.Contains(strings.Fields(string(on)), c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return writeFiles(dir, "cgroup.subtree_control", strings.Join(add, " "))
}

// writeFiles writes name/value pairs into dir's control files.
func writeFiles(dir string, kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		p := filepath.Join(dir, kv[i])
		if err := os.WriteFile(p, []byte(kv[i+1]), 0o644); err != nil {
			return fmt.Errorf("cgroups: write %s to %s: %w", kv[i+1], p, err)
		}
	}
	return nil
}

// Remove removes cgroup cg and every cgroup under it, deepest first, in
// every hierarchy (also those where only runc makes cgroups); a cgroup that still has processes is left (rmdir says
// EBUSY) and reported. A missing cgroup is no error.
func (f *FS) Remove(cg string) error {
	var errs []error
	dirs := f.Dirs(cg)
	for _, mnt := range f.others {
		dirs = append(dirs, filepath.Join(mnt, filepath.FromSlash(path.Clean("/"+cg))))
	}
	for _, dir := range dirs {
		var sub []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() {
				sub = append(sub, p)
			}
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		for i := len(sub) - 1; i >= 0; i-- {
			if err := rmdirRetry(sub[i]); err != nil {
				errs = append(errs, fmt.Errorf("cgroups: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// rmdirRetry removes a cgroup directory, waiting briefly while the kernel
// still counts a just-reaped process in it (rmdir answers EBUSY for a
// moment after the last process exits).
func rmdirRetry(dir string) error {
	var err error
	for range 20 {
		err = unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &os.PathError{Op: "rmdir", Path: dir, Err: err}
}

// JoinThread moves the calling thread (not its whole process) into
// cgroup cg on v1, where each thread can be in a cgroup of its own: a
// process the thread forks next starts there. On v2 it is an error (a
// thread cannot leave its process's cgroup there; use CgroupFD with the
// clone).
func (f *FS) JoinThread(cg string) error {
	if f.version != V1 {
		return errors.New("cgroups: a thread joins a cgroup alone only on v1")
	}
	tid := strconv.Itoa(unix.Gettid())
	for _, dir := range f.Dirs(cg) {
		if err := writeFiles(dir, "tasks", tid); err != nil {
			return err
		}
	}
	return nil
}

// JoinProcess moves process pid (every thread) into cgroup cg.
func (f *FS) JoinProcess(cg string, pid int) error {
	for _, dir := range f.Dirs(cg) {
		if err := writeFiles(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Pids are the processes in cgroup cg (not in the cgroups under it); a
// missing cgroup has none.
func (f *FS) Pids(cg string) ([]int, error) {
	var out []int
	for _, dir := range f.Dirs(cg) {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cgroups: %w", err)
		}
		for _, l := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(l); err == nil && !slices.Contains(out, pid) {
				out = append(out, pid)
			}
		}
	}
	return out, nil
}

// V2Dir is the directory of cg on v2, what a clone with CgroupFD opens;
// "" on v1.
func (f *FS) V2Dir(cg string) string {
	if f.version != V2 {
		return ""
	}
	return f.dirs(cg)[""]
}

// Stats is what the kernel counted in a cgroup.
type Stats struct {
	CPUUsageNanos uint64 // CPU time used, all CPUs
	MemoryUsage   uint64 // bytes charged, page cache included
	WorkingSet    uint64 // usage less inactive file pages (kubectl top's figure)
	OOMKills      uint64 // processes the OOM killer ended in it
	// Throttled periods and time, from the CFS quota.
	ThrottledPeriods uint64
	ThrottledNanos   uint64
}

// Stats reads cg's counters.
func (f *FS) Stats(cg string) (Stats, error) {
	var s Stats
	d := f.dirs(cg)
	if f.version == V2 {
		dir := d[""]
		cpu, err := readKV(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			return s, err
		}
		s.CPUUsageNanos = cpu["usage_usec"] * 1000
		s.ThrottledPeriods = cpu["nr_throttled"]
		s.ThrottledNanos = cpu["throttled_usec"] * 1000
		if s.MemoryUsage, err = readUint(filepath.Join(dir, "memory.current")); err != nil {
			return s, err
		}
		mem, err := readKV(filepath.Join(dir, "memory.stat"))
		if err != nil {
			return s, err
		}
		s.WorkingSet = sub0(s.MemoryUsage, mem["inactive_file"])
		ev, err := readKV(filepath.Join(dir, "memory.events"))
		if err != nil {
			return s, err
		}
		s.OOMKills = ev["oom_kill"]
		return s, nil
	}
	var err error
	if dir, ok := d["cpuacct"]; ok {
		if s.CPUUsageNanos, err = readUint(filepath.Join(dir, "cpuacct.usage")); err != nil {
			return s, err
		}
	}
	if dir, ok := d["cpu"]; ok {
		cpu, err := readKV(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			return s, err
		}
		s.ThrottledPeriods, s.ThrottledNanos = cpu["nr_throttled"], cpu["throttled_time"]
	}
	if dir, ok := d["memory"]; ok {
		if s.MemoryUsage, err = readUint(filepath.Join(dir, "memory.usage_in_bytes")); err != nil {
			return s, err
		}
		mem, err := readKV(filepath.Join(dir, "memory.stat"))
		if err != nil {
			return s, err
		}
		s.WorkingSet = sub0(s.MemoryUsage, mem["total_inactive_file"])
		oom, err := readKV(filepath.Join(dir, "memory.oom_control"))
		if err != nil {
			return s, err
		}
		s.OOMKills = oom["oom_kill"]
	}
	return s, nil
}

func sub0(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

func readUint(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("cgroups: %w", err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cgroups: %s: %w", p, err)
	}
	return v, nil
}

// readKV reads a flat-keyed file ("key value" lines: cpu.stat,
// memory.stat, memory.events, memory.oom_control).
func readKV(p string) (map[string]uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

func joinPath(a, b string) string { return path.Join("/", a, b) }
