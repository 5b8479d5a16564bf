package netagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/remotecommand"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// streamExecer is a runtime that runs a streaming exec (both runtimes;
// the fakes of tests need not).
type streamExecer interface {
	ExecStream(ctx context.Context, id string, cmd []string, s runtime.Streams) (int, error)
}

// streamRoutes adds the node API's upgrade paths: exec, attach (this
// file) and portforward (portForwardHandler).
func (a *Agent) streamRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", a.serveExec)
	mux.HandleFunc("/attach/{namespace}/{pod}/{container}", a.serveAttach)
	if h := a.portForwardHandler(); h != nil {
		mux.Handle("/portforward/{namespace}/{pod}", h)
	} else {
		mux.HandleFunc("/portforward/{namespace}/{pod}", func(w http.ResponseWriter, _ *http.Request) {
			writeNodeAPIError(w, nodeAPIErrorf(http.StatusNotImplemented, "node %s does not serve port-forward", a.cfg.NodeName))
		})
	}
}

// runningContainer is the runtime and the ID of the current container
// cname of a pod this node runs.
func (a *Agent) runningContainer(namespace, name, cname string) (*podManager, string, error) {
	a.mu.Lock()
	pm := a.pm
	a.mu.Unlock()
	if pm == nil {
		return nil, "", nodeAPIErrorf(http.StatusServiceUnavailable, "node %s is not ready yet", a.cfg.NodeName)
	}
	obj, ok := pm.pods.Get(namespace, name)
	pod, _ := obj.(*api.Pod)
	if !ok || pod == nil {
		return nil, "", nodeAPIErrorf(http.StatusNotFound, "pod %s/%s is not on node %s", namespace, name, a.cfg.NodeName)
	}
	if !podHasContainer(pod, cname) {
		return nil, "", nodeAPIErrorf(http.StatusBadRequest, "container %s is not valid for pod %s", cname, name)
	}
	for _, cs := range append(append([]api.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if cs.Name != cname || cs.ContainerID == "" || cs.State.Running == nil {
			continue
		}
		id := cs.ContainerID
		if _, rest, ok := strings.Cut(id, "://"); ok {
			id = rest
		}
		return pm, id, nil
	}
	return nil, "", nodeAPIErrorf(http.StatusBadRequest, "container %s in pod %s is not running", cname, name)
}

// upgrade takes an exec or attach over; false when it answered an error.
func (a *Agent) upgrade(w http.ResponseWriter, r *http.Request, o remotecommand.Options) (remotecommand.Stream, bool) {
	sess, err := remotecommand.Upgrade(w, r, o)
	if err != nil {
		if !remotecommand.Answered(err) {
			writeNodeAPIError(w, &NodeAPIError{Code: http.StatusBadRequest, Message: err.Error()})
		}
		a.log.Debug("node API: upgrade refused", "path", r.URL.Path, "err", err)
		return nil, false
	}
	return sess, true
}

// serveExec serves /exec/{namespace}/{pod}/{container}: the runtime's
// ExecStream on the upgraded connection; the client going away cancels the
// command.
func (a *Agent) serveExec(w http.ResponseWriter, r *http.Request) {
	o, err := remotecommand.ParseOptions(r.URL.Query(), true)
	if err != nil {
		writeNodeAPIError(w, &NodeAPIError{Code: http.StatusBadRequest, Message: err.Error()})
		return
	}
	pm, id, err := a.runningContainer(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"))
	if err != nil {
		writeNodeAPIError(w, err)
		return
	}
	se, ok := pm.rt.(streamExecer)
	if !ok {
		writeNodeAPIError(w, nodeAPIErrorf(http.StatusNotImplemented, "the %s runtime does not serve exec", pm.rt.Name()))
		return
	}
	sess, ok := a.upgrade(w, r, o)
	if !ok {
		return
	}
	ctx, cancel := sessionContext(r.Context(), sess)
	defer cancel()
	code, err := se.ExecStream(ctx, id, o.Command, sess.Streams())
	switch {
	case err != nil && ctx.Err() != nil:
		sess.Close(remotecommand.Failure("the client went away"))
	case errors.Is(err, runtime.ErrNotRunning):
		sess.Close(remotecommand.Failure(fmt.Sprintf("container %s is not running", r.PathValue("container"))))
	case err != nil:
		sess.Close(remotecommand.Failure(fmt.Sprintf("error executing command in container: %v", err)))
	default:
		sess.Close(remotecommand.ExitCode(o.Command, code))
	}
}

// stdinAttacher is a runtime that writes an attach session's stdin into
// a container started with stdin (both runtimes).
type stdinAttacher interface {
	AttachStdin(ctx context.Context, id string, stdin io.Reader) error
}

// terminalResizer is a runtime that resizes the terminal of a container
// started with tty: true (containerd).
type terminalResizer interface {
	ResizeTerminal(ctx context.Context, id string, sz runtime.TerminalSize) error
}

// serveAttach serves /attach/{namespace}/{pod}/{container}: what the
// container writes from now on (its log, followed), until the client
// leaves or the container ends, and with -i the client's stdin into the
// container's. Stdin is refused (400) for a container whose spec has no
// stdin: true, as the CRI refuses stdin to a container not started with
// it. With tty, the client's resizes go to the container's terminal
// (containerd).
func (a *Agent) serveAttach(w http.ResponseWriter, r *http.Request) {
	o, err := remotecommand.ParseOptions(r.URL.Query(), false)
	if err != nil {
		writeNodeAPIError(w, &NodeAPIError{Code: http.StatusBadRequest, Message: err.Error()})
		return
	}
	cname := r.PathValue("container")
	pm, id, err := a.runningContainer(r.PathValue("namespace"), r.PathValue("pod"), cname)
	if err != nil {
		writeNodeAPIError(w, err)
		return
	}
	var sa stdinAttacher
	if o.Stdin {
		var ok bool
		if sa, ok = pm.rt.(stdinAttacher); !ok {
			writeNodeAPIError(w, nodeAPIErrorf(http.StatusBadRequest,
				"stdin of container %s is not open: the %s runtime starts containers without stdin (attach serves the output only; leave -i off)", cname, pm.rt.Name()))
			return
		}
		if !a.containerHasStdin(r.PathValue("namespace"), r.PathValue("pod"), cname) {
			writeNodeAPIError(w, nodeAPIErrorf(http.StatusBadRequest,
				"stdin of container %s is not open: it was started without stdin (set stdin: true in its spec, or leave -i off)", cname))
			return
		}
	}
	sess, ok := a.upgrade(w, r, o)
	if !ok {
		return
	}
	ctx, cancel := sessionContext(r.Context(), sess)
	defer cancel()
	st := sess.Streams()
	out := st.Stdout
	if out == nil {
		out = st.Stderr
	}
	// Where the log is now: the output from here on, and stdin flows
	// only once this is known (what it makes the container write is
	// seen).
	var seen countWriter
	if out != nil {
		if err := pm.rt.Logs(ctx, id, false, &seen); err != nil && ctx.Err() == nil {
			sess.Close(remotecommand.Failure(fmt.Sprintf("error attaching to container: %v", err)))
			return
		}
	}
	if tr, ok := pm.rt.(terminalResizer); ok && o.TTY && st.Resize != nil {
		st.Resize(func(sz runtime.TerminalSize) {
			if err := tr.ResizeTerminal(ctx, id, sz); err != nil {
				a.log.Debug("node API: attach resize", "path", r.URL.Path, "err", err)
			}
		})
	}
	if sa != nil && st.Stdin != nil {
		go func() {
			if err := sa.AttachStdin(ctx, id, st.Stdin); err != nil {
				a.log.Debug("node API: attach stdin", "path", r.URL.Path, "err", err)
			}
		}()
	}
	if out == nil {
		<-ctx.Done()
		sess.Close(remotecommand.Success())
		return
	}
	err = pm.rt.Logs(ctx, id, true, &skipWriter{w: out, skip: int64(seen)})
	if err != nil && ctx.Err() == nil {
		sess.Close(remotecommand.Failure(fmt.Sprintf("error attaching to container: %v", err)))
		return
	}
	sess.Close(remotecommand.Success())
}

// countWriter counts what is written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// containerHasStdin: the spec of container cname of the pod sets stdin.
func (a *Agent) containerHasStdin(namespace, name, cname string) bool {
	a.mu.Lock()
	pm := a.pm
	a.mu.Unlock()
	if pm == nil {
		return false
	}
	obj, _ := pm.pods.Get(namespace, name)
	pod, _ := obj.(*api.Pod)
	if pod == nil {
		return false
	}
	for _, c := range append(append([]api.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == cname {
			return c.Stdin
		}
	}
	return false
}

// sessionContext ends when ctx does or the client's side of sess ends.
func sessionContext(ctx context.Context, sess remotecommand.Stream) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-sess.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
