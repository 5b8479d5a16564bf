package ratelog

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// HTTPErrorLog returns a *log.Logger for http.Server.ErrorLog: each line
// net/http writes becomes a record at level whose message is prefix and the
// line's kind ("TLS handshake error", "Accept error", ...) and whose "err"
// attribute is the whole line. Wrap l's handler in a Handler to limit
// them: the kind is the same for every client, the line is not.
func HTTPErrorLog(l *slog.Logger, level slog.Level, prefix string) *log.Logger {
	return log.New(errorWriter{l: l, level: level, prefix: prefix}, "", 0)
}

type errorWriter struct {
	l      *slog.Logger
	level  slog.Level
	prefix string
}

func (w errorWriter) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.l.LogAttrs(context.Background(), w.level, w.prefix+Kind(line), slog.String("err", line))
	return len(p), nil
}

// Kind is what a net/http error line reports, without the address and the
// detail that vary: "http: TLS handshake error from 10.0.0.1:5000: EOF" is
// "TLS handshake error"; "http: Accept error: accept tcp ...: too many open
// files; retrying in 5ms" is "Accept error".
func Kind(line string) string {
	s := line
	for _, p := range []string{"http: ", "http2: ", "server: "} {
		s = strings.TrimPrefix(s, p)
	}
	end := len(s)
	for _, sep := range []string{" from ", ": ", "; ", "\n"} {
		if i := strings.Index(s, sep); i >= 0 && i < end {
			end = i
		}
	}
	if end > 64 {
		end = 64
	}
	return s[:end]
}
