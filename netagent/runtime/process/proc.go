package process

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat is what the runtime reads from /proc/<pid>/stat.
type procStat struct {
	state      byte   // R, S, D, Z, X, ...
	startTicks uint64 // field 22: start time after boot, in clock ticks
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(b))
}

// parseStat parses a /proc/<pid>/stat line. The command name (field 2) is
// in parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("stat %q: no command name", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("stat %q: %d fields after the name, want >= 20", s, len(f))
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64) // field 22
	if err != nil || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("stat %q: bad state or start time", s)
	}
	return procStat{state: f[0][0], startTicks: ticks}, nil
}

// alive reports whether pid is still the process that started at ticks and
// has not exited (a zombie has exited).
func alive(pid int, ticks uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := readStat(pid)
	if err != nil || st.startTicks != ticks {
		return false
	}
	return st.state != 'Z' && st.state != 'X' && st.state != 'x'
}
