//go:build unix

package connlimit

import "golang.org/x/sys/unix"

func raiseFileLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err != nil {
			return uint64(lim.Cur), err
		}
		lim = want
	}
	return uint64(lim.Cur), nil
}

// FileLimit is the soft RLIMIT_NOFILE now (0 if it cannot be read).
func FileLimit() uint64 {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	return uint64(lim.Cur)
}
