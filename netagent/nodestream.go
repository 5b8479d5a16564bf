package netagent

import (
	"context"
	"errors"
	"fmt"
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

// serveAttach serves /attach/{namespace}/{pod}/{container}: what the
// container writes from now on (its log, followed), until the client
// leaves or the container ends. The runtimes start containers without
// stdin, so stdin is refused (400), as the CRI refuses stdin to a
// container not started with it.
func (a *Agent) serveAttach(w http.ResponseWriter, r *http.Request) {
	o, err := remotecommand.ParseOptions(r.URL.Query(), false)
	if err != nil {
		writeNodeAPIError(w, &NodeAPIError{Code: http.StatusBadRequest, Message: err.Error()})
		return
	}
	if o.Stdin {
		writeNodeAPIError(w, nodeAPIErrorf(http.StatusBadRequest,
			"stdin of container %s is not open: the node's runtimes start containers without stdin (attach serves the output only; leave -i off)", r.PathValue("container")))
		return
	}
	pm, id, err := a.runningContainer(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"))
	if err != nil {
		writeNodeAPIError(w, err)
		return
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
	if out == nil {
		<-ctx.Done()
		sess.Close(remotecommand.Success())
		return
	}
	err = a.tailLogs(ctx, pm, id, LogOptions{Follow: true, TailLines: 0}, out)
	if err != nil && ctx.Err() == nil {
		sess.Close(remotecommand.Failure(fmt.Sprintf("error attaching to container: %v", err)))
		return
	}
	sess.Close(remotecommand.Success())
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
