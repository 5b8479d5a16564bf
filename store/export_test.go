package store

// SetCommitHook installs fn to run on the commit goroutine after each
// successful disk commit, with the batch's last revision, before the batch's
// events are published. Set it before the first Update.
func SetCommitHook(s *Bolt, fn func(rev int64)) { s.commitHook = fn }
