package stats

import (
	"errors"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       procStat
		err        bool
	}{
		{name: "plain", line: "7 (sh) S 1 7 7 0 -1 0 0 0 0 0 3 4 5 6 20 0 1 0 99 0 12",
			want: procStat{pid: 7, ppid: 1, pgrp: 7, state: 'S', ticks: 18, rssPages: 12}},
		{name: "parentheses and spaces in the name", line: "8 (a) (b c) R 7 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 99 0 3",
			want: procStat{pid: 8, ppid: 7, pgrp: 7, state: 'R', ticks: 2, rssPages: 3}},
		{name: "negative child times are ignored", line: "9 (x) S 1 9 9 0 -1 0 0 0 0 0 1 1 -1 -1 20 0 1 0 99 0 0",
			want: procStat{pid: 9, ppid: 1, pgrp: 9, state: 'S', ticks: 2}},
		{name: "no name", line: "9 x S 1", err: true},
		{name: "short", line: "9 (x) S 1 9 9", err: true},
		{name: "bad number", line: "9 (x) S 1 9 9 0 -1 0 0 0 0 0 a 1 0 0 20 0 1 0 99 0 0", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.line)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The fixture: 100 is the leader (pgrp 100), 101 its child in its group,
// 102 a grandchild that made a group of its own, 200 another process.
func TestProcTree(t *testing.T) {
	p := Proc{Root: "testdata/proc", PageSize: 4096}
	u, err := p.Tree(100)
	if err != nil {
		t.Fatal(err)
	}
	// ticks: 100: 150+50+30+20, 101: 1000+200, 102: 10+10 = 1470.
	if want := uint64(1470) * 10_000_000; u.CPUNanoseconds != want {
		t.Errorf("cpu %d, want %d", u.CPUNanoseconds, want)
	}
	if want := uint64(256+512+64) * 4096; u.MemoryWorkingSetBytes != want {
		t.Errorf("working set %d, want %d", u.MemoryWorkingSetBytes, want)
	}
	if u, err := p.Tree(102); err != nil || u.CPUNanoseconds != 20*10_000_000 || u.MemoryWorkingSetBytes != 64*4096 {
		t.Errorf("Tree(102) = %+v, %v", u, err)
	}
	if _, err := p.Tree(300); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Tree of a missing pid: %v, want ErrNoProcess", err)
	}
}

func TestCgroup1Usage(t *testing.T) {
	c := Cgroup1{Root: "testdata/cgroup"}
	u, err := c.Usage("/")
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUNanoseconds != 2451532931059 || u.MemoryWorkingSetBytes != 4153040896-1255624704 {
		t.Errorf("root: %+v", u)
	}
	// No total_ line: the cgroup's own inactive_file; above the usage: 0.
	u, err = c.Usage("pod")
	if err != nil || u.CPUNanoseconds != 12345 || u.MemoryWorkingSetBytes != 0 {
		t.Errorf("pod: %+v, %v", u, err)
	}
	if _, err := c.Usage("missing"); err == nil {
		t.Error("a missing cgroup gave no error")
	}
}

func TestNodeUsage(t *testing.T) {
	// The cgroup hierarchy first.
	u, err := Node{Cgroup: Cgroup1{Root: "testdata/cgroup"}, Proc: Proc{Root: "testdata/proc"}}.Usage()
	if err != nil || u.CPUNanoseconds != 2451532931059 {
		t.Errorf("with cgroups: %+v, %v", u, err)
	}
	// Without: /proc/stat (100+5+50+1+2+3 ticks) and /proc/meminfo.
	u, err = Node{Cgroup: Cgroup1{Root: "testdata/none"}, Proc: Proc{Root: "testdata/proc"}}.Usage()
	if err != nil || u.CPUNanoseconds != 161*10_000_000 || u.MemoryWorkingSetBytes != 600*1024 {
		t.Errorf("from /proc: %+v, %v", u, err)
	}
	if _, err := (Node{Cgroup: Cgroup1{Root: "testdata/none"}, Proc: Proc{Root: "testdata/none"}}).Usage(); err == nil {
		t.Error("no source gave no error")
	}
}
