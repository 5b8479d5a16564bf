package logdriver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyLogs: both pipes go to one file, appended after what it held,
// created with its directory; ready comes once the file is open; the copy
// ends when both pipes are closed.
func TestCopyLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c", "id.log")
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	readyCalled := false
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		done <- copyLogs(context.Background(), path, outR, errR, func() error {
			if _, err := os.Stat(path); err != nil {
				t.Errorf("ready before the log file exists: %v", err)
			}
			readyCalled = true
			close(started)
			return nil
		})
	}()
	<-started
	outW.WriteString("out 1\n")
	errW.WriteString("err 1\n")
	outW.Close()
	// stdout ended first: stderr still reaches the file.
	errW.WriteString("err 2\n")
	errW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !readyCalled {
		t.Fatal("ready was not called")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, l := range []string{"out 1\n", "err 1\n", "err 2\n"} {
		if !strings.Contains(got, l) {
			t.Fatalf("log %q lacks %q", got, l)
		}
	}
	// The two streams' order in the file is not defined (each pipe has its
	// own reader); one stream's own order is kept, and nothing is doubled.
	if strings.Index(got, "err 1\n") > strings.Index(got, "err 2\n") || len(got) != len("out 1\nerr 1\nerr 2\n") {
		t.Fatalf("log %q", got)
	}
}

// TestCopyLogsAppends: an existing log keeps its content (a restarted
// container's file is never truncated), and a file that cannot be opened
// fails before ready.
func TestCopyLogsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "id.log")
	if err := os.WriteFile(path, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := strings.NewReader("after\n")
	if err := copyLogs(context.Background(), path, r, strings.NewReader(""), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "before\nafter\n" {
		t.Fatalf("log %q", b)
	}
	dir := t.TempDir()
	err := copyLogs(context.Background(), dir, strings.NewReader(""), strings.NewReader(""), func() error {
		return errors.New("ready must not be called")
	})
	if err == nil || strings.Contains(err.Error(), "ready") {
		t.Fatalf("a directory as the log file: %v", err)
	}
}

func TestRunLoggerArgs(t *testing.T) {
	if err := RunLogger(context.Background(), nil); err == nil {
		t.Fatal("RunLogger without a log file succeeded")
	}
}
