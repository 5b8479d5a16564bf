package store

// SetCommitHook installs fn to run on the commit goroutine after each
// successful disk commit, with the batch's last revision, before the batch's
// events are published. Set it before the first Update.
func SetCommitHook(s *Bolt, fn func(rev int64)) { s.commitHook = fn }

// SetCommitFailpoint installs fn to run before each disk commit; when it
// returns an error the batch fails as if the commit had. Set it while no
// Update is in flight.
func SetCommitFailpoint(s *Bolt, fn func() error) { s.commitFailpoint = fn }
