package process

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestReaper: one reaper reaps many children with their exit codes
// (128+N for signal N), including one that exited before it was added,
// and holds no goroutine and no epoll set once none is left.
func TestReaper(t *testing.T) {
	var r reaper
	before := runtime.NumGoroutine()
	type child struct {
		cmd  *exec.Cmd
		want int
		got  chan int
	}
	var kids []*child
	start := func(want int, args ...string) *child {
		c := &child{cmd: exec.Command(args[0], args[1:]...), want: want, got: make(chan int, 1)}
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kids = append(kids, c)
		return c
	}
	start(7, "/bin/sh", "-c", "exit 7")
	time.Sleep(200 * time.Millisecond) // a zombie before it is added
	for i := range 20 {
		start(i%5, "/bin/sh", "-c", "sleep 0.2; exit "+string(rune('0'+i%5)))
	}
	killed := start(128+int(syscall.SIGKILL), "sleep", "60")
	for _, c := range kids {
		if err := r.add(c.cmd.Process.Pid, func(code int) { c.got <- code }); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	waiting := r.set != nil && len(r.set.waits) > 0
	r.mu.Unlock()
	if !waiting {
		t.Fatal("no epoll set while children are waited for")
	}
	_ = killed.cmd.Process.Signal(syscall.SIGKILL)
	for i, c := range kids {
		select {
		case got := <-c.got:
			if got != c.want {
				t.Errorf("child %d (%v): code %d, want %d", i, c.cmd.Args, got, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("child %d (%v) not reaped", i, c.cmd.Args)
		}
	}
	// The set closes after its last child, and its goroutine ends.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		closed := r.set == nil
		r.mu.Unlock()
		if closed && runtime.NumGoroutine() <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after every child: set closed %v, %d goroutines (%d before)", closed, runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A later child gets a new set.
	c := start(3, "/bin/sh", "-c", "exit 3")
	if err := r.add(c.cmd.Process.Pid, func(code int) { c.got <- code }); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-c.got:
		if got != 3 {
			t.Fatalf("code %d, want 3", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the child after the set closed was not reaped")
	}
}
