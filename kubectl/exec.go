package kubectl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/remotecommand"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

type execOptions struct {
	container string
	stdin     bool
	tty       bool
	quiet     bool
}

func newExecCommand(g *globals) *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec (POD | TYPE/NAME) [-c CONTAINER] [-i] [-t] -- COMMAND [args...]",
		Short: "Execute a command in a container",
		Long: `Run a command in a running container, through the API (pods/NAME/exec,
WebSocket v5.channel.k8s.io) to the node agent. -i passes stdin, -t gives
the command a terminal (the local one is put in raw mode and its size
follows). The exit status is the command's.`,
		Example: `  skiff exec web-5d4f8b7c9-x2v4q -- ls /
  skiff exec -it deploy/web -c app -- sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 || len(args) < 2 {
				return usageError("expected POD -- COMMAND [args...]: skiff exec POD -- COMMAND")
			}
			if dash != 1 {
				return usageError("expected exactly one POD or TYPE/NAME before --")
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, err := s.podFor(ctx, args[0])
			if err != nil {
				return err
			}
			c, err := (&logsOptions{container: o.container}).pickContainer(s, pod)
			if err != nil {
				return err
			}
			return s.runStream(ctx, pod, "exec", c, args[1:], o.stdin, o.tty, o.quiet)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "the container (default: the only one, else the first)")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "pass stdin to the command")
	f.BoolVarP(&o.tty, "tty", "t", false, "give the command a terminal (stdin must be one)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only what the command writes")
	return cmd
}

func newAttachCommand(g *globals) *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "attach (POD | TYPE/NAME) [-c CONTAINER]",
		Short: "Attach to the output of a running container",
		Long: `Stream what a running container writes from now on (pods/NAME/attach),
until interrupted. With -i, also send stdin to the container's: the
container must have been started with stdin: true (the node refuses -i
otherwise).`,
		Example: `  skiff attach web-5d4f8b7c9-x2v4q`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("expected exactly one POD or TYPE/NAME")
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, err := s.podFor(ctx, args[0])
			if err != nil {
				return err
			}
			c, err := (&logsOptions{container: o.container}).pickContainer(s, pod)
			if err != nil {
				return err
			}
			err = s.runStream(ctx, pod, "attach", c, nil, o.stdin, o.tty, o.quiet)
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "the container (default: the only one, else the first)")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "pass stdin to the container (one started with stdin: true)")
	f.BoolVarP(&o.tty, "tty", "t", false, "the container's stdin is a terminal")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only what the container writes")
	return cmd
}

// dialStream opens pods/NAME/{exec,attach} with o.
func (s *session) dialStream(ctx context.Context, ns, pod, sub, container string, o remotecommand.Options) (*remotecommand.Conn, error) {
	q := o.Query()
	if container != "" {
		q.Set("container", container)
	}
	u, err := url.Parse(s.raw.base)
	if err != nil {
		return nil, err
	}
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[u.Scheme]
	u.Path = strings.TrimRight(u.Path, "/") + "/api/v1/namespaces/" + url.PathEscape(ns) + "/pods/" + url.PathEscape(pod) + "/" + sub
	u.RawQuery = q.Encode()
	d := &websocket.Dialer{Proxy: http.ProxyFromEnvironment}
	if t, ok := s.raw.hc.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		d.TLSClientConfig = t.TLSClientConfig.Clone()
		d.TLSClientConfig.NextProtos = nil
	}
	h := http.Header{"User-Agent": {"skiff-cli"}}
	if s.raw.token != "" {
		h.Set("Authorization", "Bearer "+s.raw.token)
	}
	c, err := remotecommand.Dial(ctx, d, u.String(), h)
	var se *remotecommand.StatusError
	if errors.As(err, &se) {
		return nil, &client.APIError{Status: se.Status}
	}
	return c, err
}

// runStream runs one exec (cmd) or attach (cmd nil) on the local streams.
func (s *session) runStream(ctx context.Context, pod *api.Pod, sub, container string, cmd []string, stdin, tty, quiet bool) error {
	in := s.env.In
	var term *rawTerminal
	if tty {
		f, ok := in.(*os.File)
		if !stdin || !ok || !isTerminal(f) {
			if !quiet {
				fmt.Fprintln(s.env.ErrOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
			}
			tty = false
		} else {
			term = &rawTerminal{f: f}
		}
	}
	o := remotecommand.Options{Command: cmd, Stdin: stdin, Stdout: true, Stderr: !tty, TTY: tty}
	c, err := s.dialStream(ctx, pod.Namespace, pod.Name, sub, container, o)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if term != nil {
		if err := term.makeRaw(); err != nil {
			_ = c.Close()
			return err
		}
		defer term.restore()
		sizes := make(chan os.Signal, 1)
		signal.Notify(sizes, syscall.SIGWINCH)
		defer signal.Stop(sizes)
		send := func() {
			if ws, err := unix.IoctlGetWinsize(int(term.f.Fd()), unix.TIOCGWINSZ); err == nil {
				_ = c.Resize(runtime.TerminalSize{Width: ws.Col, Height: ws.Row})
			}
		}
		send()
		go func() {
			for range sizes {
				send()
			}
		}()
	}
	var r io.Reader
	if stdin {
		r = in
	}
	code, err := c.Run(r, s.env.Out, s.env.ErrOut)
	if term != nil {
		term.restore()
	}
	var se *remotecommand.StatusError
	if errors.As(err, &se) {
		return &client.APIError{Status: se.Status}
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code, Msg: fmt.Sprintf("command terminated with exit code %d", code)}
	}
	return nil
}

// rawTerminal puts a terminal in raw mode (cfmakeraw) and back.
type rawTerminal struct {
	f     *os.File
	saved *unix.Termios
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (t *rawTerminal) makeRaw() error {
	fd := int(t.f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return err
	}
	t.saved = old
	return nil
}

func (t *rawTerminal) restore() {
	if t.saved != nil {
		_ = unix.IoctlSetTermios(int(t.f.Fd()), unix.TCSETS, t.saved)
		t.saved = nil
	}
}
