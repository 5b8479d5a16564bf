//go:build !unix

package connlimit

func raiseFileLimit() (uint64, error) { return 0, nil }

// FileLimit is 0: not known on this system.
func FileLimit() uint64 { return 0 }
