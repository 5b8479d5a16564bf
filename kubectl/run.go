package kubectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type runOptions struct {
	image             string
	restart           string
	rm                bool
	stdin             bool
	tty               bool
	attach            bool
	env               []string
	labels            string
	port              int32
	command           bool
	imagePullPolicy   string
	podRunningTimeout time.Duration
	dryRun            string
	output            string
}

func newRunCommand(g *globals) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run NAME --image=IMAGE [--restart=Never] [--rm] [-it] [--env=K=V] [--labels=k=v,...] [-- COMMAND [args...]]",
		Short: "Run an image in a pod",
		Long: `Create a pod running one container of IMAGE, labelled run=NAME. The
arguments after -- are the container's args (its command with --command).

With -i, -t or --attach, wait for the pod to start, print its output (the
pod's log: Skiff has no attach), wait for it to finish and, with --rm,
delete it. The exit status is the container's.`,
		Example: `  skiff run web --image=nginx --port=80
  skiff run health-check --restart=Never --image=curlimages/curl --rm -it -- sh -c 'curl -s http://data-channel:9090/metrics'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.image == "" {
				return usageError("--image is required")
			}
			switch o.restart {
			case api.RestartPolicyAlways, api.RestartPolicyOnFailure, api.RestartPolicyNever:
			default:
				return usageError("invalid restart policy: %s", o.restart)
			}
			attach := o.stdin || o.tty || o.attach
			if o.rm && !attach {
				return usageError("--rm should only be used for attached containers")
			}
			if err := checkDryRun(o.dryRun); err != nil {
				return err
			}
			name := args[0]
			var rest []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash > 1 {
					return usageError("the pod's command goes after --: skiff run NAME --image=IMAGE -- COMMAND [args...]")
				}
				rest = args[dash:]
			} else if len(args) > 1 {
				rest = args[1:]
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, name, rest, attach)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.image, "image", "", "the container image")
	f.StringVar(&o.restart, "restart", api.RestartPolicyAlways, "the pod's restartPolicy: Always, OnFailure or Never")
	f.BoolVar(&o.rm, "rm", false, "delete the pod once it has finished (needs -i, -t or --attach)")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "keep stdin open (Skiff: print the pod's output and wait for it)")
	f.BoolVarP(&o.tty, "tty", "t", false, "allocate a TTY (Skiff: same as -i)")
	f.BoolVar(&o.attach, "attach", false, "wait for the pod and print its output")
	f.StringArrayVar(&o.env, "env", nil, "environment variable K=V (repeatable)")
	f.StringVarP(&o.labels, "labels", "l", "", "labels of the pod, k=v,... (default run=NAME)")
	f.Int32Var(&o.port, "port", 0, "the container port to declare")
	f.BoolVar(&o.command, "command", false, "the arguments after -- are the command, not the args")
	f.StringVar(&o.imagePullPolicy, "image-pull-policy", "", "Always, IfNotPresent or Never")
	f.DurationVar(&o.podRunningTimeout, "pod-running-timeout", time.Minute, "how long to wait for the pod to start")
	f.StringVar(&o.dryRun, "dry-run", "none", `"none", or "client" to print the pod without creating it`)
	f.StringVarP(&o.output, "output", "o", "", "print the pod: json, yaml, name")
	return cmd
}

// pod builds the Pod kubectl run creates.
func (o *runOptions) pod(name, ns string, rest []string, attach bool) (map[string]any, error) {
	labels := map[string]string{"run": name}
	if o.labels != "" {
		var err error
		if labels, err = parseLabelList(o.labels); err != nil {
			return nil, usageError("invalid --labels: %v", err)
		}
	}
	c := map[string]any{"name": name, "image": o.image}
	if len(rest) > 0 {
		list := make([]any, len(rest))
		for i, a := range rest {
			list[i] = a
		}
		if o.command {
			c["command"] = list
		} else {
			c["args"] = list
		}
	}
	if len(o.env) > 0 {
		var env []any
		for _, e := range o.env {
			k, v, ok := strings.Cut(e, "=")
			if !ok || k == "" {
				return nil, usageError("invalid env: %s", e)
			}
			env = append(env, map[string]any{"name": k, "value": v})
		}
		c["env"] = env
	}
	if o.port > 0 {
		c["ports"] = []any{map[string]any{"containerPort": o.port}}
	}
	if o.imagePullPolicy != "" {
		c["imagePullPolicy"] = o.imagePullPolicy
	}
	if o.stdin || (attach && o.tty) {
		c["stdin"] = true
		c["stdinOnce"] = true
	}
	if o.tty {
		c["tty"] = true
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": toAnyMap(labels)},
		"spec": map[string]any{
			"containers":    []any{c},
			"restartPolicy": o.restart,
		},
	}, nil
}

func (o *runOptions) run(ctx context.Context, s *session, name string, rest []string, attach bool) error {
	podInfo, err := s.resolve("pods")
	if err != nil {
		return err
	}
	obj, err := o.pod(name, s.ns, rest, attach)
	if err != nil {
		return err
	}
	f, err := parseOutput(o.output)
	if err != nil {
		return err
	}
	if o.dryRun == "client" {
		if f.kind == outTable {
			fmt.Fprintf(s.env.Out, "pod/%s created (dry run)\n", name)
			return nil
		}
		return printObject(s.env.Out, f, obj, "pod/"+name)
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	coll, err := client.ResourcePath(podInfo, s.ns, "")
	if err != nil {
		return err
	}
	var created []byte
	if err := s.c.Do(ctx, "POST", coll, body, &created); err != nil {
		return err
	}
	if !attach {
		if f.kind == outTable {
			fmt.Fprintf(s.env.Out, "pod/%s created\n", name)
			return nil
		}
		m, err := decodeMap(created)
		if err != nil {
			return err
		}
		return printObject(s.env.Out, f, m, "pod/"+name)
	}
	runErr := o.attachTo(ctx, s, podInfo, name)
	if o.rm {
		// Delete even when ctx was cancelled (Ctrl-C), as kubectl does.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		zero := int64(0)
		if err := s.c.Delete(dctx, podInfo, s.ns, name, client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !client.IsNotFound(err) {
			fmt.Fprintln(s.env.ErrOut, errorText(err))
		} else if err == nil {
			fmt.Fprintf(s.env.Out, "pod %q %s\n", name, deletedText(false, s.ns))
		}
	}
	return runErr
}

// attachTo waits for the pod to start, prints its output and waits for it
// to finish (unless it restarts forever).
func (o *runOptions) attachTo(ctx context.Context, s *session, podInfo *api.ResourceInfo, name string) error {
	started := func(p *api.Pod) bool {
		return p.Status.Phase == api.PodRunning || p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
	}
	wctx, cancel := context.WithTimeout(ctx, o.podRunningTimeout)
	pod, err := s.waitPod(wctx, podInfo, name, started)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if pod != nil {
				if c := api.GetPodCondition(&pod.Status, api.PodScheduled); c != nil && c.Status != "True" && c.Message != "" {
					fmt.Fprintf(s.env.ErrOut, "pod %s/%s is not scheduled: %s\n", s.ns, name, c.Message)
				} else if pod.Spec.NodeName == "" {
					fmt.Fprintf(s.env.ErrOut, "pod %s/%s is not scheduled: no Ready node has taken it\n", s.ns, name)
				} else {
					fmt.Fprintf(s.env.ErrOut, "pod %s/%s is %s on node %s\n", s.ns, name, orNone(pod.Status.Phase), pod.Spec.NodeName)
				}
			}
			return usageError("timed out waiting for the condition")
		}
		return err
	}
	q := url.Values{"follow": {"true"}, "container": {name}}
	if err := s.streamLogs(ctx, s.ns, name, q, s.env.Out); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		var ae *client.APIError
		unavailable := errors.As(err, &ae) && ae.Status.Code == http.StatusServiceUnavailable
		if client.IsNotFound(err) || unavailable {
			msg := errorText(err)
			for _, p := range []string{"Error from server (NotFound): ", "Error from server (ServiceUnavailable): "} {
				msg = strings.TrimPrefix(msg, p)
			}
			fmt.Fprintf(s.env.ErrOut, "note: cannot show the output of pod %s/%s: %s (the node agent serves pod logs)\n",
				s.ns, name, msg)
		} else {
			fmt.Fprintln(s.env.ErrOut, errorText(err))
		}
	}
	if o.restart == api.RestartPolicyAlways {
		return nil
	}
	finished := func(p *api.Pod) bool {
		return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
	}
	pod, err = s.waitPod(ctx, podInfo, name, finished)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if pod.Status.Phase == api.PodFailed {
		code, reason := 1, "Error"
		for _, cs := range pod.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				code = int(t.ExitCode)
				if t.Reason != "" {
					reason = t.Reason
				}
			}
		}
		return &ExitError{Code: code, Msg: fmt.Sprintf("pod %s/%s terminated (%s)", s.ns, name, reason)}
	}
	return nil
}

// waitPod watches a pod until cond holds; it returns the last pod seen.
func (s *session) waitPod(ctx context.Context, podInfo *api.ResourceInfo, name string, cond func(*api.Pod) bool) (*api.Pod, error) {
	var last *api.Pod
	for {
		var pod api.Pod
		if err := s.c.Get(ctx, podInfo, s.ns, name, &pod); err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		last = &pod
		if cond(&pod) {
			return &pod, nil
		}
		w, err := s.c.Watch(ctx, podInfo, s.ns, client.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: pod.ResourceVersion})
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		for ev := range w.ResultChan() {
			if ev.Type == client.EventDeleted {
				w.Stop()
				return last, fmt.Errorf("pod %s/%s was deleted", s.ns, name)
			}
			if ev.Type != client.EventAdded && ev.Type != client.EventModified {
				continue
			}
			var p api.Pod
			if json.Unmarshal(ev.Object, &p) != nil {
				continue
			}
			last = &p
			if cond(&p) {
				w.Stop()
				return &p, nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
	}
}
