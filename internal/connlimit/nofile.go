package connlimit

// RaiseFileLimit raises the soft RLIMIT_NOFILE of the process to its hard
// limit and returns the soft limit it then has. A process calls it once,
// at start (the Go runtime does the same on Linux; this makes it explicit
// and reports the figure). Tests may call it too: it only ever raises.
func RaiseFileLimit() (uint64, error) { return raiseFileLimit() }

// DefaultTotal is the total cap for a process whose file limit is nofile:
// a fifth of the limit (at least 256) is left for everything else (the
// store, the cluster DNS, the built-in agent, logs), and the cap is at most
// 65,536 connections (each idle one holds some 20-40 KB of memory). 0
// (no limit known) is 0: no total cap.
func DefaultTotal(nofile uint64) int {
	if nofile == 0 {
		return 0
	}
	reserve := max(nofile/5, 256)
	if nofile <= reserve {
		return max(int(nofile/2), 1)
	}
	return int(min(nofile-reserve, 65536))
}
