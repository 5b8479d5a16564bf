package hardening

// The data dir (server/datadir.go): a database that is missing, empty or
// damaged under credentials that are still there, a second server on one
// data dir, and `skiff backup`.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

const (
	// datadirCount is how many Services the fixture holds: with their
	// 2 KB annotation, enough for the kv bucket to have branch pages.
	datadirCount = 150
	// datadirChildEnv names the data dir TestDataDirChild starts a
	// server on; unset, that test skips.
	datadirChildEnv = "SKIFF_HARDENING_DATADIR_CHILD"
)

var datadirServices = api.Lookup(api.Resources(), "v1", "services")

// datadirName is the name of the fixture's i-th Service.
func datadirName(i int) string { return fmt.Sprintf("dd-%03d", i) }

// datadirPayload is the annotation a Service of that name carries, so a
// read can tell an intact object from a damaged one.
func datadirPayload(name string) string { return strings.Repeat(name+";", 2000/(len(name)+1)) }

// datadirCreate creates the Services [from, to) through c, 8 at a time.
func datadirCreate(t *testing.T, c *client.Client, from, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, to-from)
	sem := make(chan struct{}, 8)
	for i := from; i < to; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			name := datadirName(i)
			svc := &api.Service{
				ObjectMeta: api.ObjectMeta{Name: name, Annotations: map[string]string{"hardening/data": datadirPayload(name)}},
				Spec: api.ServiceSpec{Ports: []api.ServicePort{{
					Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(80),
				}}},
			}
			if err := c.Create(ctx, datadirServices, "default", svc); err != nil {
				errs <- fmt.Errorf("create %s: %w", name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// datadirList returns the fixture Services the server holds (dd-*), and
// an error if any of them does not carry its payload.
func datadirList(ctx context.Context, c *client.Client) (map[string]bool, error) {
	var list api.ServiceList
	if err := c.List(ctx, datadirServices, "default", client.ListOptions{}, &list); err != nil {
		return nil, err
	}
	names := make(map[string]bool)
	for _, s := range list.Items {
		if !strings.HasPrefix(s.Name, "dd-") || s.Name == "dd-marker" {
			continue
		}
		if s.Annotations["hardening/data"] != datadirPayload(s.Name) {
			return names, fmt.Errorf("service %s lost its payload", s.Name)
		}
		names[s.Name] = true
	}
	return names, nil
}

// datadirWant checks that the server behind c holds exactly the fixture
// Services [from, to) with their payloads.
func datadirWant(t *testing.T, c *client.Client, from, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := datadirList(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		if !got[datadirName(i)] {
			t.Errorf("service %s is missing (the server holds %d fixture services)", datadirName(i), len(got))
			return
		}
	}
	if len(got) != to-from {
		t.Errorf("the server holds %d fixture services, want %d", len(got), to-from)
	}
}

// datadirFixture is the data dir of a stopped server that holds n fixture
// Services.
func datadirFixture(t *testing.T, n int) string {
	t.Helper()
	ts := startServer(t, servertest.Options{})
	datadirCreate(t, ts.Client(), 0, n)
	// One more commit after the fixture's, so that the older of the two
	// bbolt meta pages also sees every fixture Service.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ts.Client().Create(ctx, datadirServices, "default", &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "dd-marker"},
		Spec:       api.ServiceSpec{Ports: []api.ServicePort{{Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(80)}}},
	}); err != nil {
		t.Fatal(err)
	}
	ts.Stop()
	return ts.DataDir()
}

// datadirCopy copies a stopped server's data dir to a new one.
func datadirCopy(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func datadirDB(dir string) string { return filepath.Join(dir, "db", "skiff.db") }

// datadirNewServer starts a server over dir without failing the test, for
// the starts that must be refused.
func datadirNewServer(dir string, cfg func(*config.Server)) (*servertest.Server, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	s, err := servertest.New(ctx, servertest.Options{DataDir: dir, Config: cfg})
	return s, time.Since(t0), err
}

// datadirRefusal checks that err is the refusal paragraph for the
// database file db.
func datadirRefusal(t *testing.T, err error, db string) {
	t.Helper()
	msg := err.Error()
	for _, want := range []string{db, "skiff backup --restore", "bbolt@", " check "} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
}

// TestDataDirMissingDatabase: credentials without their database (deleted,
// or a 0-byte file) are a refused start that names the file, not an empty
// cluster.
func TestDataDirMissingDatabase(t *testing.T) {
	src := datadirFixture(t, 3)
	for _, tc := range []struct {
		name   string
		break_ func(db string) error
	}{
		{"deleted", os.Remove},
		{"0-byte", func(db string) error { return os.Truncate(db, 0) }},
		{"db dir deleted", func(db string) error { return os.RemoveAll(filepath.Dir(db)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := datadirCopy(t, src)
			db := datadirDB(dir)
			if err := tc.break_(db); err != nil {
				t.Fatal(err)
			}
			s, _, err := datadirNewServer(dir, nil)
			if err == nil {
				got, _ := datadirList(context.Background(), s.Client())
				_ = s.Close()
				t.Fatalf("the server started over credentials without their database, holding %d of the 3 services", len(got))
			}
			for _, want := range []string{db, "--reset-store", "skiff backup --restore"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q: %v", want, err)
				}
			}
			if _, err := os.Stat(db); err == nil && tc.name != "0-byte" {
				t.Errorf("the refused start created %s", db)
			}
		})
	}
}

// datadirLog is a log the test reads back.
type datadirLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *datadirLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *datadirLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestDataDirResetStore: --reset-store starts the same data dir empty, and
// says so with a warning.
func TestDataDirResetStore(t *testing.T) {
	dir := datadirCopy(t, datadirFixture(t, 3))
	db := datadirDB(dir)
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	var log datadirLog
	ts := startServer(t, servertest.Options{
		DataDir: dir,
		Logger:  slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Config:  func(c *config.Server) { c.ResetStore = true },
	})
	datadirWant(t, ts.Client(), 0, 0)
	if out := log.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "reset-store") || !strings.Contains(out, db) {
		t.Errorf("no warning naming --reset-store and %s; the log:\n%s", db, out)
	}
	// The next start has its database and needs no flag.
	ts.Stop()
	if s, _, err := datadirNewServer(dir, nil); err != nil {
		t.Errorf("the start after --reset-store: %v", err)
	} else if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// TestDataDirSecondServer: a second server on a data dir in use is refused
// at once, naming the first one's pid, and leaves the first one's files
// as they were.
func TestDataDirSecondServer(t *testing.T) {
	first := startServer(t, servertest.Options{})
	dir := first.DataDir()
	files := []string{"admin.kubeconfig", "tls/server.crt", "tls/server.key", "tokens/admin"}
	before := make(map[string][]byte)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	second, took, err := datadirNewServer(dir, nil)
	if err == nil {
		_ = second.Close()
		t.Fatal("a second server started on a data dir in use")
	}
	want := fmt.Sprintf("data dir %s in use by pid %d", dir, os.Getpid())
	if !strings.Contains(err.Error(), want) {
		t.Errorf("the refusal does not say %q: %v", want, err)
	}
	if took > 2*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	for _, f := range files {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.Equal(b, before[f]) {
			t.Errorf("the refused second server changed %s (err %v)", f, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var list api.ServiceList
	if err := first.Client().List(ctx, datadirServices, "default", client.ListOptions{}, &list); err != nil {
		t.Errorf("the first server after the refusal: %v", err)
	}
	// Stop releases the lock: a restart in this process takes it again.
	first.Restart()
	if err := first.Client().List(ctx, datadirServices, "default", client.ListOptions{}, &list); err != nil {
		t.Errorf("after a restart: %v", err)
	}
}

// TestDataDirBackupRestore: a backup of a stopped server restores the
// objects it held; both verbs refuse while a server runs on the data dir,
// and a restore refuses a file that is no database.
func TestDataDirBackupRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts := startServer(t, servertest.Options{})
	dir := ts.DataDir()
	datadirCreate(t, ts.Client(), 0, 20)
	backup := filepath.Join(t.TempDir(), "backup.db")
	inUse := fmt.Sprintf("in use by pid %d", os.Getpid())
	if err := server.Backup(ctx, dir, backup); err == nil || !strings.Contains(err.Error(), inUse) {
		t.Errorf("backup while the server runs: %v, want %q", err, inUse)
	}
	ts.Stop()
	if err := server.Backup(ctx, dir, backup); err != nil {
		t.Fatalf("backup: %v", err)
	}

	// Change the objects, then go back to the backup.
	ts.Restart()
	for i := range 10 {
		if err := ts.Client().Delete(ctx, datadirServices, "default", datadirName(i), client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	datadirCreate(t, ts.Client(), 20, 30)
	datadirWant(t, ts.Client(), 10, 30)
	if err := server.Restore(ctx, dir, backup); err == nil || !strings.Contains(err.Error(), inUse) {
		t.Errorf("restore while the server runs: %v, want %q", err, inUse)
	}
	ts.Stop()

	db := datadirDB(dir)
	live, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, bytes.Repeat([]byte("not a database\n"), 4000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := server.Restore(ctx, dir, text); err == nil || !strings.Contains(err.Error(), text) {
		t.Errorf("restore of a text file: %v, want a refusal naming it", err)
	}
	if b, err := os.ReadFile(db); err != nil || !bytes.Equal(b, live) {
		t.Errorf("the refused restore changed %s (err %v)", db, err)
	}
	if err := server.Restore(ctx, dir, backup); err != nil {
		t.Fatalf("restore: %v", err)
	}
	ts.Restart()
	datadirWant(t, ts.Client(), 0, 20)

	// A restore over a database that is not even a file.
	ts.Stop()
	if err := errors.Join(os.RemoveAll(db), os.Mkdir(db, 0o700)); err != nil {
		t.Fatal(err)
	}
	if err := server.Restore(ctx, dir, backup); err != nil {
		t.Fatalf("restore over a directory: %v", err)
	}
	ts.Restart()
	datadirWant(t, ts.Client(), 0, 20)
}

// TestDataDirChild starts a server on the data dir datadirChildEnv names
// and prints what happened; TestDataDirCorruption runs it in a process of
// its own, so that a crash is seen as one.
func TestDataDirChild(t *testing.T) {
	dir := os.Getenv(datadirChildEnv)
	if dir == "" {
		t.Skip("run by TestDataDirCorruption")
	}
	s, _, err := datadirNewServer(dir, nil)
	if err != nil {
		fmt.Printf("REFUSED\n%v\nEND\n", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := datadirList(ctx, s.Client())
	fmt.Printf("STARTED %d %v\n", len(got), err)
	if err := s.Close(); err != nil {
		fmt.Printf("CLOSE %v\n", err)
	}
}

// datadirChild runs TestDataDirChild on dir in a new process and returns
// its output.
func datadirChild(t *testing.T, dir string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDataDirChild$", "-test.count=1", "-test.timeout=50s")
	cmd.Env = append(os.Environ(), datadirChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestDataDirCorruption damages the database of a data dir in the ways a
// disk, a copy or an operator can, and starts a server on each in a
// process of its own: every start is refused with the paragraph that
// names the file and the next steps, or comes up with every object
// intact; none crashes and none comes up empty.
func TestDataDirCorruption(t *testing.T) {
	src := datadirFixture(t, datadirCount)
	const (
		refuse = iota // the start must be refused
		start         // the server must start with every object
	)
	cases := []struct {
		name    string
		corrupt func(t *testing.T, db string)
		want    int
	}{
		{"truncated inside the first page", func(t *testing.T, db string) { datadirTruncate(t, db, 1000) }, refuse},
		{"truncated mid-file", func(t *testing.T, db string) {
			f := bbRead(t, db)
			datadirTruncate(t, db, int64(f.hwm())*int64(f.ps)/2+123)
		}, refuse},
		{"both meta pages zeroed", func(t *testing.T, db string) {
			f := bbRead(t, db)
			clear(f.b[:2*f.ps])
			f.write(t, db)
		}, refuse},
		{"newer meta page zeroed", func(t *testing.T, db string) {
			f := bbRead(t, db)
			clear(f.meta(f.newest()))
			f.write(t, db)
		}, start},
		{"bad magic", func(t *testing.T, db string) {
			f := bbRead(t, db)
			for i := range 2 {
				binary.LittleEndian.PutUint32(f.meta(i)[bbMagic:], 0xdeadbeef)
			}
			f.write(t, db)
		}, refuse},
		{"bad version", func(t *testing.T, db string) {
			f := bbRead(t, db)
			for i := range 2 {
				binary.LittleEndian.PutUint32(f.meta(i)[bbVersion:], 99)
				f.fixChecksum(i)
			}
			f.write(t, db)
		}, refuse},
		{"bad meta checksum", func(t *testing.T, db string) {
			f := bbRead(t, db)
			for i := range 2 {
				f.meta(i)[bbChecksum] ^= 0xff
			}
			f.write(t, db)
		}, refuse},
		{"page size garbage", func(t *testing.T, db string) {
			f := bbRead(t, db)
			for i := range 2 {
				binary.LittleEndian.PutUint32(f.meta(i)[bbPageSize:], 0x1235)
				f.fixChecksum(i)
			}
			f.write(t, db)
		}, refuse},
		{"freelist page garbage", func(t *testing.T, db string) {
			// A file last written with the freelist synced (bbolt's
			// default) has a freelist page; its count runs far past it.
			d, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			f := bbRead(t, db)
			fl := binary.LittleEndian.Uint64(f.meta(f.newest())[bbFreelist:])
			if fl >= f.hwm() {
				t.Fatalf("no freelist page (meta says %#x)", fl)
			}
			p := f.page(fl)
			if binary.LittleEndian.Uint16(p[8:]) != bbFreelistFlag {
				t.Fatalf("page %d is not the freelist", fl)
			}
			binary.LittleEndian.PutUint16(p[10:], 0xffff)
			binary.LittleEndian.PutUint64(p[16:], 16<<20)
			datadirNoise(p[24:], 1)
			f.write(t, db)
		}, refuse},
		{"branch page garbage", func(t *testing.T, db string) {
			f := bbRead(t, db)
			p := f.page(f.kvRoot(t))
			if binary.LittleEndian.Uint16(p[8:]) != bbBranch {
				t.Fatal("the kv bucket's root is not a branch page")
			}
			datadirNoise(p[bbPageHeader:], 2)
			f.write(t, db)
		}, refuse},
		{"leaf page garbage", func(t *testing.T, db string) {
			f := bbRead(t, db)
			branch := f.page(f.kvRoot(t))
			leaf := f.page(binary.LittleEndian.Uint64(branch[bbPageHeader+8:]))
			if binary.LittleEndian.Uint16(leaf[8:]) != bbLeaf {
				t.Fatal("the kv bucket's first child is not a leaf page")
			}
			datadirNoise(leaf[bbPageHeader:], 3)
			f.write(t, db)
		}, refuse},
		{"random bytes over page headers and elements", func(t *testing.T, db string) {
			// 8 bytes at a random place in the header or element array
			// of 8 of the kv bucket's leaf pages. (Random bytes inside
			// values are not found: bbolt keeps no checksum of them.)
			f := bbRead(t, db)
			branch := f.page(f.kvRoot(t))
			n := int(binary.LittleEndian.Uint16(branch[10:]))
			r := rand.New(rand.NewPCG(4, 4))
			for range 8 {
				e := branch[bbPageHeader+16*r.IntN(n):]
				p := f.page(binary.LittleEndian.Uint64(e[8:]))
				end := bbPageHeader + 16*int(binary.LittleEndian.Uint16(p[10:]))
				off := r.IntN(end - 8)
				for i := range 8 {
					p[off+i] ^= byte(1 + r.IntN(255))
				}
			}
			f.write(t, db)
		}, refuse},
		{"a directory instead of the file", func(t *testing.T, db string) {
			if err := errors.Join(os.Remove(db), os.Mkdir(db, 0o700)); err != nil {
				t.Fatal(err)
			}
		}, refuse},
		{"a file that cannot be opened", func(t *testing.T, db string) {
			// The tests run as root, which chmod 000 does not stop: a
			// symbolic link to itself fails every open (ELOOP).
			if err := errors.Join(os.Remove(db), os.Symlink(filepath.Base(db), db)); err != nil {
				t.Fatal(err)
			}
		}, refuse},
		{"a text file", func(t *testing.T, db string) {
			if err := os.WriteFile(db, bytes.Repeat([]byte("this is not a database\n"), 5000), 0o600); err != nil {
				t.Fatal(err)
			}
		}, refuse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := datadirCopy(t, src)
			db := datadirDB(dir)
			tc.corrupt(t, db)
			out, err := datadirChild(t, dir)
			for _, crash := range []string{"panic:", "SIGSEGV", "SIGBUS", "fatal error:", "goroutine "} {
				if strings.Contains(out, crash) {
					t.Fatalf("the server crashed (%q):\n%s", crash, datadirHead(out))
				}
			}
			if err != nil {
				t.Fatalf("the server process: %v:\n%s", err, datadirHead(out))
			}
			switch {
			case strings.Contains(out, "REFUSED\n"):
				if tc.want == start {
					t.Fatalf("the start was refused, want it to recover:\n%s", out)
				}
				msg := out[strings.Index(out, "REFUSED\n")+len("REFUSED\n"):]
				msg, _, _ = strings.Cut(msg, "\nEND\n")
				datadirRefusal(t, errors.New(msg), db)
				t.Logf("refused: %s", msg)
			case strings.Contains(out, fmt.Sprintf("STARTED %d <nil>\n", datadirCount)):
				if tc.want == refuse {
					t.Fatalf("the server started over a damaged database:\n%s", out)
				}
				if strings.Contains(out, "CLOSE ") {
					t.Errorf("the started server: %s", out)
				}
			default:
				t.Fatalf("the server neither refused nor started with its %d services:\n%s", datadirCount, datadirHead(out))
			}
		})
	}
}

// datadirHead is the start of a long output.
func datadirHead(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "\n[...]"
	}
	return s
}

func datadirTruncate(t *testing.T, path string, n int64) {
	t.Helper()
	if err := os.Truncate(path, n); err != nil {
		t.Fatal(err)
	}
}

// datadirNoise fills b with seeded random bytes.
func datadirNoise(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// bbolt's file layout (go.etcd.io/bbolt/internal/common), little endian:
// each page starts with a 16-byte header (id u64, flags u16, count u16,
// overflow u32); pages 0 and 1 are the meta pages, whose fields follow the
// header.
const (
	bbPageHeader   = 16
	bbMagic        = 16
	bbVersion      = 20
	bbPageSize     = 24
	bbRoot         = 32
	bbFreelist     = 48
	bbPgid         = 56
	bbTxid         = 64
	bbChecksum     = 72
	bbBranch       = 0x01
	bbLeaf         = 0x02
	bbFreelistFlag = 0x10
)

// bbFile is a bbolt file in memory.
type bbFile struct {
	b  []byte
	ps int
}

func bbRead(t *testing.T, path string) *bbFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(b[bbPageSize:]))
	if ps < 1024 || len(b) < 2*ps {
		t.Fatalf("%s: page size %d, %d bytes", path, ps, len(b))
	}
	return &bbFile{b: b, ps: ps}
}

func (f *bbFile) write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, f.b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (f *bbFile) meta(i int) []byte { return f.b[i*f.ps : (i+1)*f.ps] }

func (f *bbFile) page(id uint64) []byte { return f.b[int(id)*f.ps : (int(id)+1)*f.ps] }

// newest is the meta page of the last transaction.
func (f *bbFile) newest() int {
	if binary.LittleEndian.Uint64(f.meta(1)[bbTxid:]) > binary.LittleEndian.Uint64(f.meta(0)[bbTxid:]) {
		return 1
	}
	return 0
}

// hwm is the newest meta page's high water mark (pages in use).
func (f *bbFile) hwm() uint64 { return binary.LittleEndian.Uint64(f.meta(f.newest())[bbPgid:]) }

func (f *bbFile) fixChecksum(i int) {
	h := fnv.New64a()
	m := f.meta(i)
	_, _ = h.Write(m[bbMagic:bbChecksum])
	binary.LittleEndian.PutUint64(m[bbChecksum:], h.Sum64())
}

// kvRoot is the root page of the store's "kv" bucket.
func (f *bbFile) kvRoot(t *testing.T) uint64 {
	t.Helper()
	root := f.page(binary.LittleEndian.Uint64(f.meta(f.newest())[bbRoot:]))
	n := int(binary.LittleEndian.Uint16(root[10:]))
	for i := range n {
		e := root[bbPageHeader+16*i:]
		pos, ksize := binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:])
		k := e[pos : pos+ksize]
		if string(k) == "kv" {
			return binary.LittleEndian.Uint64(e[pos+ksize:])
		}
	}
	t.Fatal("no kv bucket in the root page")
	return 0
}
