package containerd

import (
	"context"
	"io"
	"log/slog"

	clog "github.com/containerd/log"
	"github.com/sirupsen/logrus"
)

// slogHook forwards what the containerd client logs (logrus, through the
// request's context) to the runtime's slog logger at debug level, instead
// of logrus's default of stderr.
type slogHook struct{ log *slog.Logger }

func (h slogHook) Levels() []logrus.Level { return logrus.AllLevels }

func (h slogHook) Fire(e *logrus.Entry) error {
	args := make([]any, 0, 2*len(e.Data))
	for k, v := range e.Data {
		args = append(args, k, v)
	}
	h.log.Debug("containerd client: "+e.Message, args...)
	return nil
}

// clientLogger is a logrus entry that writes nowhere but the hook; it is
// put into every context the runtime hands the client, so the client's
// logs never reach the process-wide logrus logger.
func clientLogger(log *slog.Logger) *clog.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetLevel(logrus.DebugLevel)
	l.AddHook(slogHook{log: log})
	return logrus.NewEntry(l)
}

func withClientLogger(ctx context.Context, e *clog.Entry) context.Context {
	return clog.WithLogger(ctx, e)
}
