package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock whose timers fire when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { t.stopped = true; return true }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	rest := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) && !t.stopped {
			due = append(due, t)
		} else if !t.stopped {
			rest = append(rest, t)
		}
	}
	c.timers = rest
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

func newTest(opts Options) (*slog.Logger, *bytes.Buffer, *fakeClock) {
	var buf bytes.Buffer
	clk := &fakeClock{now: time.Unix(1000, 0)}
	opts.now, opts.afterFunc = clk.Now, clk.AfterFunc
	inner := slog.NewTextHandler(&lockedWriter{w: &buf}, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
	return slog.New(New(inner, opts)), &buf, clk
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func lines(buf *bytes.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

func TestRepeatedErrorsAreSummarised(t *testing.T) {
	log, buf, clk := newTest(Options{Burst: 3, Interval: time.Second})
	for i := range 1000 {
		log.Error("store: write failed", "err", "no space left on device", "i", i)
	}
	if got := lines(buf); len(got) != 3 {
		t.Fatalf("within the first second %d lines passed, want 3:\n%s", len(got), buf)
	}
	clk.Advance(time.Second)
	got := lines(buf)
	if len(got) != 4 || !strings.Contains(got[3], `msg="store: write failed"`) || !strings.Contains(got[3], "suppressed=997") {
		t.Fatalf("after the interval, want one summary of 997 suppressed:\n%s", buf)
	}
	// A new interval passes a new burst.
	log.Error("store: write failed", "i", 1000)
	if got := lines(buf); len(got) != 5 || strings.Contains(got[4], "suppressed") {
		t.Fatalf("the next interval:\n%s", buf)
	}
}

func TestMessagesAndLoggersAreLimitedApart(t *testing.T) {
	log, buf, _ := newTest(Options{Burst: 1})
	a, b := log.With("component", "a"), log.With("component", "b")
	for range 10 {
		a.Warn("x")
		b.Warn("x")
		a.Warn("y")
	}
	if got := lines(buf); len(got) != 3 {
		t.Fatalf("want one line of each (logger, message):\n%s", buf)
	}
}

func TestBelowLevelPasses(t *testing.T) {
	log, buf, _ := newTest(Options{Burst: 1})
	for range 10 {
		log.Info("request")
	}
	if got := lines(buf); len(got) != 10 {
		t.Fatalf("info lines are not limited by default, got %d", len(got))
	}
	log, buf, _ = newTest(Options{Burst: 1, Level: slog.LevelInfo})
	for range 10 {
		log.Info("request")
	}
	if got := lines(buf); len(got) != 1 {
		t.Fatalf("Level Info limits info lines, got %d", len(got))
	}
}

func TestQuietWindowsAreForgotten(t *testing.T) {
	log, buf, clk := newTest(Options{Burst: 2, MaxKeys: 4})
	for i := range 100 {
		log.Warn("distinct " + strings.Repeat("x", i))
		clk.Advance(2 * time.Second)
	}
	if got := lines(buf); len(got) != 100 {
		t.Fatalf("distinct messages spread over time all pass, got %d", len(got))
	}
	h := log.Handler().(*Handler)
	if n := len(h.st.win); n > 4 {
		t.Fatalf("%d windows kept, want at most MaxKeys", n)
	}
	// More distinct messages at once than MaxKeys share one window.
	buf.Reset()
	for i := range 100 {
		log.Warn("burst " + strings.Repeat("y", i))
	}
	if got := lines(buf); len(got) > 4+2 {
		t.Fatalf("%d lines passed, want MaxKeys windows and one shared overflow window of Burst", len(got))
	}
}

func TestHTTPErrorLogKinds(t *testing.T) {
	for line, want := range map[string]string{
		"http: TLS handshake error from 127.0.0.1:5555: EOF":                                      "TLS handshake error",
		"http: Accept error: accept tcp [::]:6443: accept4: too many open files; retrying in 5ms": "Accept error",
		"http2: server: error reading preface from client 127.0.0.1:4444: read: connection reset": "error reading preface",
		"http: superfluous response.WriteHeader call from github.com/x/y.z (file.go:12)":          "superfluous response.WriteHeader call",
		"http: panic serving 10.0.0.1:1234: boom\ngoroutine 1 [running]:":                         "panic serving 10.0.0.1:1234",
	} {
		if got := Kind(line); got != want {
			t.Errorf("Kind(%q) = %q, want %q", line, got, want)
		}
	}
	log, buf, clk := newTest(Options{Burst: 2})
	el := HTTPErrorLog(log, slog.LevelWarn, "https: ")
	for i := range 50 {
		el.Printf("http: TLS handshake error from 127.0.0.1:%d: EOF", 10000+i)
	}
	clk.Advance(time.Second)
	got := lines(buf)
	if len(got) != 3 || !strings.Contains(got[0], "level=WARN") || !strings.Contains(got[0], `msg="https: TLS handshake error"`) ||
		!strings.Contains(got[2], "suppressed=48") {
		t.Fatalf("handshake errors from 50 addresses: want 2 lines and a summary of 48:\n%s", buf)
	}
}

// Two Handlers in a row (a server's own over the process's) keep the
// inner one's count: the outer lets summaries through.
func TestNestedHandlersKeepTheCount(t *testing.T) {
	outer, buf, clk := newTest(Options{Burst: 2})
	opts := Options{Burst: 2}
	opts.now, opts.afterFunc = clk.Now, clk.AfterFunc
	log := slog.New(New(outer.Handler(), opts))
	for range 100 {
		log.Warn("handshake")
	}
	clk.Advance(time.Second)
	got := lines(buf)
	if len(got) != 3 || !strings.Contains(got[2], "suppressed=98") {
		t.Fatalf("want 2 lines and the inner count of 98:\n%s", buf)
	}
}
