package apiserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// requestLogger logs every request (Debug, or Warn for 5xx) with its
// method, path, verb, resource, code, duration and user.
func requestLogger(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec, r := ensureRecord(r)
			sw := wrapWriter(w)
			next.ServeHTTP(sw, r)
			level := slog.LevelDebug
			if sw.status() >= 500 {
				level = slog.LevelWarn
			}
			if !log.Enabled(r.Context(), level) {
				return
			}
			log.LogAttrs(context.Background(), level, "apiserver: request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("code", sw.status()),
				slog.Duration("duration", time.Since(start)),
				slog.String("verb", rec.verb),
				slog.String("resource", rec.resource),
				slog.String("user", rec.user),
				slog.String("remote", r.RemoteAddr))
		})
	}
}
