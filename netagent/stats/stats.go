package stats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is one reading: cumulative CPU time and the memory working set.
type Usage struct {
	CPUNanoseconds        uint64
	MemoryWorkingSetBytes uint64
}

// ErrNoProcess is returned by Proc.Tree when the leader is gone.
var ErrNoProcess = errors.New("stats: no such process")

// userHZ is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on
// every Linux architecture Go supports (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// Proc reads process trees from a procfs.
type Proc struct {
	Root     string // "" is /proc
	PageSize int    // 0 is os.Getpagesize()
}

func (p Proc) root() string {
	if p.Root == "" {
		return "/proc"
	}
	return p.Root
}

// procStat is the part of /proc/<pid>/stat a Tree reads.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	ticks           uint64 // utime+stime+cutime+cstime
	rssPages        int64
}

// parseStat parses a /proc/<pid>/stat line. The command name (field 2) is
// in parentheses and may itself hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseStat(s string) (procStat, error) {
	open := strings.IndexByte(s, '(')
	i := strings.LastIndexByte(s, ')')
	if open < 0 || i < open {
		return procStat{}, fmt.Errorf("stat %q: no command name", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("stat %q: bad pid", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 22 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("stat %q: %d fields after the name, want >= 22", s, len(f))
	}
	st := procStat{pid: pid, state: f[0][0]}
	ints := [...]*int{&st.ppid, &st.pgrp}
	for k, dst := range ints {
		if *dst, err = strconv.Atoi(f[1+k]); err != nil {
			return procStat{}, fmt.Errorf("stat %q: field %d: %w", s, 4+k, err)
		}
	}
	for k := 11; k <= 14; k++ { // fields 14-17: utime stime cutime cstime
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat %q: field %d: %w", s, k+3, err)
		}
		if v > 0 {
			st.ticks += uint64(v)
		}
	}
	if st.rssPages, err = strconv.ParseInt(f[21], 10, 64); err != nil {
		return procStat{}, fmt.Errorf("stat %q: field 24: %w", s, err)
	}
	return st, nil
}

// Snapshot is one read of every process of a procfs, so that the trees
// of many containers cost one walk of /proc, not one each.
type Snapshot struct {
	all  map[int]procStat
	page int
}

// Snapshot reads every process's stat.
func (p Proc) Snapshot() (*Snapshot, error) {
	entries, err := os.ReadDir(p.root())
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	page := p.PageSize
	if page <= 0 {
		page = os.Getpagesize()
	}
	s := &Snapshot{all: make(map[int]procStat, len(entries)), page: page}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p.root(), e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		st, err := parseStat(string(bytes.TrimSpace(b)))
		if err != nil {
			continue
		}
		s.all[st.pid] = st
	}
	return s, nil
}

// Tree is the usage of the process tree of leader: the leader's process
// group and the leader's descendants (see the package doc).
func (p Proc) Tree(leader int) (Usage, error) {
	s, err := p.Snapshot()
	if err != nil {
		return Usage{}, err
	}
	return s.Tree(leader)
}

// Tree is the usage of leader's process tree in the snapshot.
func (s *Snapshot) Tree(leader int) (Usage, error) {
	all := s.all
	if l, ok := all[leader]; !ok || l.state == 'Z' || l.state == 'X' {
		return Usage{}, fmt.Errorf("%w: %d", ErrNoProcess, leader)
	}
	in := func(st procStat) bool {
		for seen := 0; seen < len(all); seen++ {
			if st.pid == leader || st.pgrp == leader {
				return true
			}
			parent, ok := all[st.ppid]
			if !ok {
				return false
			}
			st = parent
		}
		return false
	}
	var ticks uint64
	var u Usage
	for _, st := range all {
		if !in(st) {
			continue
		}
		ticks += st.ticks
		if st.rssPages > 0 {
			u.MemoryWorkingSetBytes += uint64(st.rssPages) * uint64(s.page)
		}
	}
	u.CPUNanoseconds = ticks * (1e9 / userHZ)
	return u, nil
}

// Cgroup1 reads a cgroup v1 hierarchy.
type Cgroup1 struct {
	Root string // "" is /sys/fs/cgroup
}

func (c Cgroup1) file(controller, path, name string) string {
	root := c.Root
	if root == "" {
		root = "/sys/fs/cgroup"
	}
	return filepath.Join(root, controller, filepath.Clean("/"+path), name)
}

// Usage reads the cgroup at path ("/" is the root: the node).
func (c Cgroup1) Usage(path string) (Usage, error) {
	cpu, err := readUint(c.file("cpuacct", path, "cpuacct.usage"))
	if err != nil {
		return Usage{}, err
	}
	mem, err := readUint(c.file("memory", path, "memory.usage_in_bytes"))
	if err != nil {
		return Usage{}, err
	}
	f, err := os.Open(c.file("memory", path, "memory.stat"))
	if err != nil {
		return Usage{}, fmt.Errorf("stats: %w", err)
	}
	defer f.Close()
	inactive, err := parseInactiveFile(f)
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPUNanoseconds: cpu, MemoryWorkingSetBytes: WorkingSet(mem, inactive)}, nil
}

// WorkingSet is usage minus inactive file pages, never below 0, as
// cAdvisor's working set.
func WorkingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile >= usage {
		return 0
	}
	return usage - inactiveFile
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("stats: %w", err)
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stats: %s: %w", path, err)
	}
	return v, nil
}

// parseInactiveFile reads total_inactive_file (hierarchical; the cgroup's
// own inactive_file when the kernel has no total_ lines) from a cgroup v1
// memory.stat.
func parseInactiveFile(r interface{ Read([]byte) (int, error) }) (uint64, error) {
	sc := bufio.NewScanner(r)
	var own, total uint64
	haveTotal := false
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch k {
		case "inactive_file", "total_inactive_file":
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("stats: memory.stat %s: %w", k, err)
			}
			if k == "inactive_file" {
				own = n
			} else {
				total, haveTotal = n, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("stats: memory.stat: %w", err)
	}
	if haveTotal {
		return total, nil
	}
	return own, nil
}

// Node reads the node's usage: the root cgroup of a cgroup v1 hierarchy
// (as the kubelet's node summary), or, where there is none, /proc/stat
// (the cpu line's user+nice+system+irq+softirq+steal, in USER_HZ ticks)
// and /proc/meminfo (MemTotal - MemAvailable).
type Node struct {
	Cgroup Cgroup1
	Proc   Proc
}

// Usage reads the node's usage.
func (n Node) Usage() (Usage, error) {
	u, err := n.Cgroup.Usage("/")
	if err == nil {
		return u, nil
	}
	pu, perr := n.procUsage()
	if perr != nil {
		return Usage{}, errors.Join(err, perr)
	}
	return pu, nil
}

func (n Node) procUsage() (Usage, error) {
	b, err := os.ReadFile(filepath.Join(n.Proc.root(), "stat"))
	if err != nil {
		return Usage{}, fmt.Errorf("stats: %w", err)
	}
	cpu, err := parseProcStatCPU(string(b))
	if err != nil {
		return Usage{}, err
	}
	b, err = os.ReadFile(filepath.Join(n.Proc.root(), "meminfo"))
	if err != nil {
		return Usage{}, fmt.Errorf("stats: %w", err)
	}
	mem, err := parseMeminfoUsed(string(b))
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPUNanoseconds: cpu, MemoryWorkingSetBytes: mem}, nil
}

// parseProcStatCPU is the busy time of /proc/stat's "cpu" line, in ns.
func parseProcStatCPU(s string) (uint64, error) {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "cpu" {
			continue
		}
		var ticks uint64
		for _, k := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
			v, err := strconv.ParseUint(f[k], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("stats: /proc/stat cpu field %d: %w", k, err)
			}
			ticks += v
		}
		return ticks * (1e9 / userHZ), nil
	}
	return 0, errors.New("stats: /proc/stat has no cpu line")
}

// parseMeminfoUsed is MemTotal - MemAvailable of /proc/meminfo, in bytes.
func parseMeminfoUsed(s string) (uint64, error) {
	var total, avail uint64
	var haveT, haveA bool
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total, haveT = v*1024, true
		case "MemAvailable:":
			avail, haveA = v*1024, true
		}
	}
	if !haveT || !haveA {
		return 0, errors.New("stats: /proc/meminfo lacks MemTotal or MemAvailable")
	}
	return WorkingSet(total, avail), nil
}
