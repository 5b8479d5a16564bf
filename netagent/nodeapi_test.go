package netagent

import (
	"bytes"
	"errors"
	"net/url"
	"testing"
)

func TestLastLines(t *testing.T) {
	b := []byte("a\nb\nc\n")
	for n, want := range map[int]string{0: "", 1: "c\n", 2: "b\nc\n", 3: "a\nb\nc\n", 9: "a\nb\nc\n"} {
		if got := string(lastLines(b, n)); got != want {
			t.Errorf("lastLines(%d) = %q, want %q", n, got, want)
		}
	}
	if got := string(lastLines([]byte("a\nb"), 1)); got != "b" {
		t.Errorf("unterminated last line: %q", got)
	}
}

func TestSkipAndLimitWriters(t *testing.T) {
	var out bytes.Buffer
	w := &skipWriter{w: &out, skip: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if out.String() != "fghij" {
		t.Errorf("skipWriter: %q", out.String())
	}
	out.Reset()
	l := &limitWriter{w: &out, left: 4}
	if _, err := l.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("cdef")); !errors.Is(err, errLimitReached) {
		t.Errorf("past the limit: %v", err)
	}
	if out.String() != "abcd" {
		t.Errorf("limitWriter: %q", out.String())
	}
}

func TestParseLogOptions(t *testing.T) {
	o, err := ParseLogOptions(url.Values{"container": {"c"}, "follow": {"true"}, "tailLines": {"3"}, "previous": {"1"}, "limitBytes": {"10"}, "timestamps": {"true"}})
	if err != nil || o != (LogOptions{Container: "c", Follow: true, Previous: true, TailLines: 3, LimitBytes: 10}) {
		t.Fatalf("got %+v, %v", o, err)
	}
	back, err := ParseLogOptions(o.Query())
	if err != nil || back != o {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	if o, _ := ParseLogOptions(url.Values{}); o.TailLines != -1 || o.Follow {
		t.Errorf("defaults: %+v", o)
	}
	for _, bad := range []url.Values{{"tailLines": {"-1"}}, {"follow": {"yes"}}, {"limitBytes": {"0"}}} {
		if _, err := ParseLogOptions(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
