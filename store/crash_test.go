package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// crashChildEnv, when set to a database path, turns the test binary into
// the crash test's writer child (see TestMain).
const crashChildEnv = "SKIFF_STORE_CRASH_CHILD"

// crashHistory keeps the crash test's log short so compaction runs too.
const crashHistory = 300

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	os.Exit(m.Run())
}

// crashChild is the write storm: writers commit with fsync on and print
// "ack REV KEY" for every acknowledged write, straight to the stdout pipe,
// as soon as Update returns. It runs until killed (or 60s, if orphaned).
func crashChild(path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := store.OpenBolt(ctx, path, store.BoltOptions{HistorySize: crashHistory})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	var mu sync.Mutex
	ack := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(os.Stdout, format, args...)
	}
	start, _ := s.Revision(ctx)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("/crash/r%d/g%02d/%06d", start, g, i)
				rev, err := s.Update(ctx, func(tx store.Txn) error {
					if err := tx.Put(key, []byte(key)); err != nil {
						return err
					}
					// Overwrites and deletes too, so the log has updates
					// with previous values and deletes.
					if err := tx.Put(fmt.Sprintf("/crash/last/g%02d", g), []byte(key)); err != nil {
						return err
					}
					if i%3 == 2 {
						return tx.Delete(fmt.Sprintf("/crash/r%d/g%02d/%06d", start, g, i-1))
					}
					return nil
				})
				if err != nil {
					return
				}
				ack("ack %d %s\n", rev, key)
			}
		})
	}
	wg.Wait()
	return 0
}

// TestCrashKeepsAcknowledgedWrites kills a writing child process with
// SIGKILL mid-storm, several times over the same file, and checks after each
// kill that every write the child acknowledged survived with its revision,
// the log is consistent with the keys, and the store continues from its
// revision.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	for round, killAfter := range []int{150, 400, 40} {
		acks := runAndKill(t, path, killAfter)
		if len(acks) < killAfter {
			t.Fatalf("round %d: only %d acks before the kill", round, len(acks))
		}
		verifyAfterCrash(t, path, acks)
		t.Logf("round %d: %d acknowledged writes verified", round, len(acks))
	}
}

// ackedWrite is one "ack" line of the child.
type ackedWrite struct {
	rev int64
	key string
}

// runAndKill starts the child on path, SIGKILLs it after killAfter acks and
// returns every ack it printed before it died.
func runAndKill(t *testing.T, path string, killAfter int) []ackedWrite {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var acks []ackedWrite
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "ack" {
			t.Fatalf("child printed %q", sc.Text())
		}
		rev, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("child printed %q: %v", sc.Text(), err)
		}
		acks = append(acks, ackedWrite{rev: rev, key: f[2]})
		if len(acks) == killAfter && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited before %d acks (got %d): %v", killAfter, len(acks), err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", err)
	}
	return acks
}

// verifyAfterCrash reopens the killed child's file and checks it against
// the acknowledged writes.
func verifyAfterCrash(t *testing.T, path string, acks []ackedWrite) {
	t.Helper()
	ctx := testCtx(t)
	s := storetest.MustOpenBoltAt(t, path, store.BoltOptions{HistorySize: crashHistory})
	if err := s.Check(ctx); err != nil {
		t.Fatalf("check after crash: %v", err)
	}
	cur, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byRev := make(map[int64]string)
	var maxAcked int64
	for _, a := range acks {
		if other, dup := byRev[a.rev]; dup {
			t.Fatalf("revision %d acknowledged for %s and %s", a.rev, other, a.key)
		}
		byRev[a.rev] = a.key
		maxAcked = max(maxAcked, a.rev)
	}
	if cur < maxAcked {
		t.Fatalf("store revision %d after crash, but %d was acknowledged", cur, maxAcked)
	}

	// Every acknowledged key is there at its revision, unless a later write
	// of the same writer deleted it: write i%3 == 2 deletes write i-1. When
	// that delete was acknowledged, the key must be gone.
	acked := make(map[string]bool, len(acks))
	for _, a := range acks {
		acked[a.key] = true
	}
	for _, a := range acks {
		deleter, deletable := deleterOf(a.key)
		kv, err := s.Get(ctx, a.key)
		switch {
		case err == nil && acked[deleter]:
			t.Fatalf("%s is still there, but its acknowledged delete (%s) is lost", a.key, deleter)
		case err == nil && (kv.ModRevision != a.rev || kv.CreateRevision != a.rev || string(kv.Value) != a.key):
			t.Fatalf("%s = %q create %d mod %d, acknowledged at %d", a.key, kv.Value, kv.CreateRevision, kv.ModRevision, a.rev)
		case err != nil && !deletable:
			t.Fatalf("acknowledged %s (revision %d) lost: %v", a.key, a.rev, err)
		}
	}

	// The store continues from its revision.
	after := put(t, s, "/crash/after", "x")
	if after != cur+1 {
		t.Fatalf("first write after crash at %d, want %d", after, cur+1)
	}

	// The log holds the acknowledged revisions that were not compacted, each
	// with its key, in order, up to the write just made.
	from := max(after-crashHistory, 1) // a new store starts at revision 1
	ch, err := s.Watch(ctx, "/crash/", from, store.WatchOptions{})
	if err != nil {
		t.Fatalf("watch from %d: %v", from, err)
	}
	seen := make(map[int64]bool)
	for rev := from; rev != after; {
		ev := recv(t, ch)
		if ev.Type == store.EventError || ev.Revision < rev {
			t.Fatalf("replay after revision %d got %s", rev, fmtEvent(ev))
		}
		rev = ev.Revision
		if ev.Type == store.EventPut && byRev[rev] == ev.KV.Key {
			seen[rev] = true
		}
	}
	for rev, key := range byRev {
		if rev > from && !seen[rev] {
			t.Fatalf("acknowledged revision %d (%s) is not in the log", rev, key)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// deleterOf returns the key whose write deletes key: the child's write
// i%3 == 2 deletes write i-1 of the same writer.
func deleterOf(key string) (deleter string, ok bool) {
	slash := strings.LastIndexByte(key, '/')
	i, err := strconv.Atoi(key[slash+1:])
	if err != nil || i%3 != 1 {
		return "", false
	}
	return fmt.Sprintf("%s%06d", key[:slash+1], i+1), true
}
