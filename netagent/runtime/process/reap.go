package process

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// reaper waits for many children with one goroutine and no OS thread: the
// children's pidfds sit in an epoll set of the reaper's own, and the set's
// fd, itself pollable, is parked in Go's netpoller. A pidfd becomes
// readable when its child exits; only then is wait4(WNOHANG) called (the
// pid cannot be reused before that wait4, so it is the child's).
//
// With a goroutine per child each held a stack between start and exit
// (and with a blocking Wait, an OS thread: 100 containers cost ~3 MB of
// RSS, measured); now the pods of a node cost one goroutine, and none
// while no child is waited for: the set closes when its last child is
// reaped, and the next add makes a new one.
type reaper struct {
	mu  sync.Mutex
	set *epollSet // nil while no child is waited for
}

// epollSet is one epoll instance and the children in it, by pidfd.
type epollSet struct {
	fd    int
	file  *os.File // fd, for the netpoller
	waits map[int32]reapWait
}

// reapWait is a child and what to call with its exit code.
type reapWait struct {
	pid  int
	done func(code int)
}

// add waits for the child pid and calls done with its exit code, on a
// goroutine of its own, once it has exited and been reaped. An error
// (no pidfd on this kernel) leaves the child to the caller.
func (r *reaper) add(pid int, done func(code int)) error {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.set
	if s == nil {
		if s, err = newEpollSet(); err != nil {
			unix.Close(pidfd)
			return err
		}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pidfd)}
	if err := unix.EpollCtl(s.fd, unix.EPOLL_CTL_ADD, pidfd, &ev); err != nil {
		unix.Close(pidfd)
		if r.set == nil {
			s.file.Close()
		}
		return fmt.Errorf("epoll_ctl add pidfd: %w", err)
	}
	s.waits[int32(pidfd)] = reapWait{pid: pid, done: done}
	if r.set == nil {
		r.set = s
		go r.loop(s)
	}
	return nil
}

func newEpollSet() (*epollSet, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &epollSet{fd: fd, file: os.NewFile(uintptr(fd), "reaper-epoll"), waits: make(map[int32]reapWait)}, nil
}

// loop reaps the children of s as their pidfds become readable, until s
// holds none; then it closes s.
func (r *reaper) loop(s *epollSet) {
	events := make([]unix.EpollEvent, 16)
	// A failure of SyscallConn or Read leaves r.set == s: handled below.
	if rc, err := s.file.SyscallConn(); err == nil {
		_ = rc.Read(func(uintptr) bool {
			for {
				n, err := unix.EpollWait(s.fd, events, 0)
				if errors.Is(err, unix.EINTR) {
					continue
				}
				if err != nil {
					return true // reported below as the set's failure
				}
				if n == 0 {
					// Nothing ready: wait for the set to become readable,
					// unless no child is left in it.
					r.mu.Lock()
					empty := len(s.waits) == 0
					if empty {
						r.set = nil
					}
					r.mu.Unlock()
					return empty
				}
				for _, ev := range events[:n] {
					r.reap(s, ev.Fd)
				}
			}
		})
	}
	r.mu.Lock()
	if r.set == s {
		// The set failed (not pollable, or epoll_wait failed): hand what
		// it holds to blocking waits, one thread each.
		r.set = nil
		for fd, w := range s.waits {
			unix.Close(int(fd))
			go func() { w.done(waitBlocking(w.pid)) }()
		}
		clear(s.waits)
	}
	r.mu.Unlock()
	s.file.Close()
}

// reap takes pidfd's child out of s, reaps it and hands on its code.
func (r *reaper) reap(s *epollSet, pidfd int32) {
	r.mu.Lock()
	w, ok := s.waits[pidfd]
	delete(s.waits, pidfd)
	r.mu.Unlock()
	_ = unix.EpollCtl(s.fd, unix.EPOLL_CTL_DEL, int(pidfd), nil)
	unix.Close(int(pidfd))
	if !ok {
		return
	}
	var ws unix.WaitStatus
	got, err := unix.Wait4(w.pid, &ws, unix.WNOHANG, nil)
	for errors.Is(err, unix.EINTR) {
		got, err = unix.Wait4(w.pid, &ws, unix.WNOHANG, nil)
	}
	switch {
	case err != nil: // ECHILD: someone else reaped it
		go w.done(ExitCodeUnknown)
	case got != w.pid: // readable but not yet waitable: should not happen
		go func() { w.done(waitBlocking(w.pid)) }()
	default:
		go w.done(waitCode(ws))
	}
}

// waitBlocking reaps pid with a blocking wait4.
func waitBlocking(pid int) int {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return ExitCodeUnknown
		}
		return waitCode(ws)
	}
}

// waitCode is a wait status as an exit code: 128+N for signal N.
func waitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
