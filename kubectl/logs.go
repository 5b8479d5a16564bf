package kubectl

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type logsOptions struct {
	container  string
	follow     bool
	tail       int64
	timestamps bool
	previous   bool
	since      time.Duration
}

func newLogsCommand(g *globals) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs POD | TYPE/NAME [-c CONTAINER] [-f] [--tail=N]",
		Short: "Print the logs of a container in a pod",
		Long: `Print a container's log, read from the node agent through the API
(GET pods/NAME/log). For TYPE/NAME of a deployment or statefulset, the log
of its first pod.`,
		Example: `  skiff logs web-5d4f8b7c9-x2v4q
  skiff logs deploy/web -f --tail=20`,
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
			container, err := o.pickContainer(s, pod)
			if err != nil {
				return err
			}
			err = s.streamLogs(ctx, pod.Namespace, pod.Name, o.query(container), s.env.Out)
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "the container (default: the only one, else the first)")
	f.BoolVarP(&o.follow, "follow", "f", false, "stream the log as it grows")
	f.Int64Var(&o.tail, "tail", -1, "lines from the end to show (-1: all)")
	f.BoolVar(&o.timestamps, "timestamps", false, "prefix each line with its timestamp")
	f.BoolVarP(&o.previous, "previous", "p", false, "the log of the previous instance of the container")
	f.DurationVar(&o.since, "since", 0, "only lines newer than this (e.g. 5s, 2m)")
	return cmd
}

func (o *logsOptions) query(container string) url.Values {
	q := url.Values{}
	if container != "" {
		q.Set("container", container)
	}
	if o.follow {
		q.Set("follow", "true")
	}
	if o.tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(o.tail, 10))
	}
	if o.timestamps {
		q.Set("timestamps", "true")
	}
	if o.previous {
		q.Set("previous", "true")
	}
	if o.since > 0 {
		q.Set("sinceSeconds", strconv.Itoa(int(o.since.Seconds())))
	}
	return q
}

// pickContainer checks -c or defaults to the first container, saying so
// when there are several, as kubectl does.
func (o *logsOptions) pickContainer(s *session, pod *api.Pod) (string, error) {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	if o.container != "" {
		for _, n := range names {
			if n == o.container {
				return n, nil
			}
		}
		return "", usageError("container %s is not valid for pod %s", o.container, pod.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return "", nil
	}
	if len(pod.Spec.Containers) > 1 {
		var all []string
		for _, c := range pod.Spec.Containers {
			all = append(all, c.Name)
		}
		fmt.Fprintf(s.env.ErrOut, "Defaulted container %q out of: %s\n", all[0], strings.Join(all, ", "))
	}
	return pod.Spec.Containers[0].Name, nil
}

// podFor resolves POD or TYPE/NAME to a pod: a deployment's or
// statefulset's first pod by name.
func (s *session) podFor(ctx context.Context, arg string) (*api.Pod, error) {
	podInfo, err := s.resolve("pods")
	if err != nil {
		return nil, err
	}
	typ, name, ok := strings.Cut(arg, "/")
	if !ok {
		typ, name = "pods", arg
	}
	info, err := s.resolve(typ)
	if err != nil {
		return nil, err
	}
	var pod api.Pod
	switch info.Resource {
	case "pods":
		if err := s.c.Get(ctx, podInfo, s.ns, name, &pod); err != nil {
			return nil, err
		}
		return &pod, nil
	case "deployments", "statefulsets":
		var obj struct {
			Spec struct {
				Selector *api.LabelSelector `json:"selector"`
			} `json:"spec"`
		}
		p, err := client.ResourcePath(info, s.ns, name)
		if err != nil {
			return nil, err
		}
		if err := s.c.Do(ctx, "GET", p, nil, &obj); err != nil {
			return nil, err
		}
		pods := s.podsOf(ctx, s.ns, obj.Spec.Selector)
		if len(pods) == 0 {
			return nil, usageError("no pods found for %s", objectRef(info, name))
		}
		first := pods[0]
		for _, p := range pods[1:] {
			if p.Name < first.Name {
				first = p
			}
		}
		return &first, nil
	}
	return nil, usageError("cannot get the logs of a %s", info.Kind)
}

// streamLogs copies a pod's log to w as it arrives.
func (s *session) streamLogs(ctx context.Context, ns, name string, q url.Values, w io.Writer) error {
	podInfo, err := s.resolve("pods")
	if err != nil {
		return err
	}
	p, err := client.ResourcePath(podInfo, ns, name, "log")
	if err != nil {
		return err
	}
	resp, err := s.raw.get(ctx, p, q, "*/*")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("read log of pod %s/%s: %w", ns, name, rerr)
		}
	}
}
