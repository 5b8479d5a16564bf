package apiserver

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// TestReadBodyGrowsWithWhatArrives: the buffer follows the bytes read,
// not the Content-Length; the limit holds whatever the header says.
func TestReadBodyGrowsWithWhatArrives(t *testing.T) {
	const limit = 1 << 20
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", 200)))
	req.ContentLength = limit // a lie: 200 bytes come
	b, err := readBody(req, limit)
	if err != nil || len(b) != 200 {
		t.Fatalf("readBody: %d bytes, %v", len(b), err)
	}
	if cap(b) > bodyChunk {
		t.Errorf("200 bytes under a Content-Length of %d took a buffer of %d", limit, cap(b))
	}

	for _, c := range []struct {
		name string
		size int
		cl   int64
		ok   bool
	}{
		{"at the limit", limit, limit, true},
		{"at the limit, no length", limit, -1, true},
		{"over the limit, no length", limit + 1, -1, false},
		{"over the limit, short length", limit + 1, 10, false},
		{"over the limit by its length", 10, limit + 1, false},
		{"empty", 0, 0, true},
	} {
		body := bytes.Repeat([]byte("y"), c.size)
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.ContentLength = c.cl
		got, err := readBody(req, limit)
		var se *StatusError
		switch {
		case c.ok && (err != nil || !bytes.Equal(got, body)):
			t.Errorf("%s: %d bytes, %v", c.name, len(got), err)
		case !c.ok && (!errors.As(err, &se) || se.Code() != http.StatusRequestEntityTooLarge):
			t.Errorf("%s: %v, want 413", c.name, err)
		}
	}
}

// TestReadBodyTimeout: a body read that hits the body deadline is 408
// naming the timeout.
func TestReadBodyTimeout(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.ContentLength = 100
	req.Body = &deadlineBody{ReadCloser: io.NopCloser(timeoutReader{}), rc: http.NewResponseController(httptest.NewRecorder()), timeout: 3 * time.Second}
	_, err := readBody(req, 1<<20)
	var se *StatusError
	if !errors.As(err, &se) || se.Code() != http.StatusRequestTimeout || se.status.Reason != "Timeout" ||
		!strings.Contains(se.status.Message, "3s") {
		t.Fatalf("readBody: %v, want 408 Timeout naming 3s", err)
	}
}

type timeoutReader struct{}

func (timeoutReader) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }
