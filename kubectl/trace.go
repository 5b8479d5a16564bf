package kubectl

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
)

// TracePath is the server's trace endpoint for a pod (outside the
// resource API; see server/nodeapi.go).
func TracePath(namespace, pod, target string) string {
	return "/skiff/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(pod) +
		"/trace?" + url.Values{"url": {target}}.Encode()
}

func newTraceCommand(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "trace POD URL [-o json|yaml]",
		Short: "Show the path a request from a pod to a URL takes: DNS, Service, proxy rules, endpoints, conntrack",
		Long: `trace asks the agent of the pod's node how a request from the pod to URL
would go, step by step, as the node really has it:

  1. DNS: the pod's resolv.conf, the search expansion (a name with fewer dots
     than ndots goes through the search list first) and each query's answer;
  2. Service: the ClusterIP (or load-balancer IP, or node IP + NodePort) and
     port the answer belongs to;
  3. Rules: the proxy's rules for that address, read back from the kernel
     (iptables chains with their probabilities, nftables map elements, IPVS);
  4. Endpoints: ready/serving/terminating, node, pod, and the chance each
     gets a new connection;
  5. Leaving the cluster (an address outside it): the node's egress
     masquerade, with its rules read back from the kernel;
  6. Conntrack: the live connections to the address and who answers them.

URL is http://name[:port][/path], https://…, tcp://name:port, udp://name:port
or name[:port] (http).`,
		Example: `  skiff trace client http://backend-svc
  skiff trace client backend-svc.default:8080 -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError("expected POD and URL")
			}
			var out outputFormat
			switch output {
			case "", "json", "yaml":
				f, err := parseOutput(output)
				if err != nil {
					return err
				}
				out = f
			default:
				return usageError("unable to match a printer suitable for the output format %q, allowed formats are: json, yaml", output)
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			var raw []byte
			if err := s.c.Do(cmd.Context(), "GET", TracePath(s.ns, args[0], args[1]), nil, &raw); err != nil {
				return err
			}
			if out.kind == outTable {
				var tr api.Trace
				if err := json.Unmarshal(raw, &tr); err != nil {
					return fmt.Errorf("decode the trace: %w", err)
				}
				return PrintTrace(s.env.Out, &tr)
			}
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				return fmt.Errorf("decode the trace: %w", err)
			}
			return printObject(s.env.Out, out, obj, "trace/"+args[0])
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: the steps in words)")
	return cmd
}

// maxConntrackShown caps the conntrack lines of the human output.
const maxConntrackShown = 10

// PrintTrace writes a trace as its steps, in words.
func PrintTrace(w io.Writer, tr *api.Trace) error {
	b := &strings.Builder{}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	pod := tr.Pod.Namespace + "/" + tr.Pod.Name
	p("Trace from pod %s", pod)
	if tr.Pod.IP != "" || tr.Pod.NodeName != "" {
		p(" (%s on node %s)", orDash(tr.Pod.IP), orDash(tr.Pod.NodeName))
	}
	p(" to %s\n  host %s, port %d/%s\n", tr.URL, tr.Host, tr.Port, tr.Protocol)

	step := 1
	if d := tr.DNS; d != nil {
		p("\n%d. DNS\n", step)
		p("   resolv.conf: nameserver %s", strings.Join(d.Nameservers, " "))
		if len(d.Search) > 0 {
			p("; search %s", strings.Join(d.Search, " "))
		}
		p("; options ndots:%d\n", d.Ndots)
		dots := strings.Count(tr.Host, ".")
		switch {
		case strings.HasSuffix(tr.Host, "."):
			p("   %q ends with a dot: it is tried as is, without the search list\n", tr.Host)
		case dots < d.Ndots:
			p("   %q has %d dot(s), fewer than ndots %d: the search list is tried first, the name as is last\n", tr.Host, dots, d.Ndots)
		default:
			p("   %q has %d dot(s), at least ndots %d: the name is tried as is first, then the search list\n", tr.Host, dots, d.Ndots)
		}
		tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
		for _, q := range d.Queries {
			ans := strings.Join(q.Answers, ", ")
			if q.CNAME != "" {
				ans = strings.TrimSpace("CNAME " + q.CNAME + " " + ans)
			}
			fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", q.Name, q.Type, q.Rcode, ans)
		}
		tw.Flush()
		if d.Answer != "" {
			p("   => %s\n", d.Answer)
		} else {
			p("   => no address\n")
		}
		step++
	}

	if s := tr.Service; s != nil {
		p("\n%d. Service %s/%s (%s)\n", step, s.Namespace, s.Name, s.Type)
		switch {
		case s.Headless:
			p("   headless: %s is a pod address, no virtual IP in between\n", s.IP)
		default:
			p("   %s:%d", s.IP, s.Port)
			if s.PortName != "" {
				p(" (port %q)", s.PortName)
			}
			if s.TargetPort != "" {
				p(" -> targetPort %s", s.TargetPort)
			}
			p("\n")
		}
		step++
	}

	if r := tr.Rules; r != nil {
		p("\n%d. Rules (%s, read from the node's kernel)\n", step, r.Mode)
		if len(r.Entries) == 0 {
			p("   none\n")
		}
		for _, e := range r.Entries {
			where := strings.Trim(e.Table+" "+e.Chain, " ")
			var notes []string
			if e.Probability > 0 {
				notes = append(notes, fmt.Sprintf("probability %s", fraction(e.Probability)))
			}
			if e.Endpoint != "" {
				notes = append(notes, "-> "+e.Endpoint)
			}
			p("   [%s]", where)
			if len(notes) > 0 {
				p(" %s", strings.Join(notes, ", "))
			}
			p("\n     %s\n", e.Text)
		}
		step++
	}

	if len(tr.Endpoints) > 0 {
		p("\n%d. Endpoints\n", step)
		tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "   ENDPOINT\tREADY\tSERVING\tTERMINATING\tNODE\tPOD\tCHANCE\n")
		for _, e := range tr.Endpoints {
			fmt.Fprintf(tw, "   %s:%d\t%t\t%t\t%t\t%s\t%s\t%.1f%%\n", e.IP, e.Port, e.Ready, e.Serving, e.Terminating,
				orDash(e.NodeName), orDash(e.Pod), e.Probability*100)
		}
		tw.Flush()
		step++
	}

	if e := tr.Egress; e != nil {
		p("\n%d. Leaving the cluster\n", step)
		if e.Masquerade {
			p("   masqueraded: the node rewrites the source to its own address, so the answer finds its way back\n")
		} else {
			p("   not masqueraded (--egress-masquerade=false): the source stays the pod's address\n")
		}
		for _, r := range e.Rules {
			p("     %s\n", r)
		}
		step++
	}

	if tr.Service != nil || len(tr.Conntrack) > 0 {
		p("\n%d. Conntrack\n", step)
		if len(tr.Conntrack) == 0 {
			p("   no entry for this address yet (no connection made, or it expired)\n")
		}
		shown := tr.Conntrack
		if len(shown) > maxConntrackShown {
			shown = shown[:maxConntrackShown]
		}
		for _, c := range shown {
			p("   %s %s -> %s, answered by %s", strings.ToLower(c.Protocol), c.Src, c.Dst, c.ReplySrc)
			if c.State != "" {
				p(" %s", c.State)
			}
			if c.Timeout > 0 {
				p(" (expires in %ds)", c.Timeout)
			}
			p("\n")
		}
		if n := len(tr.Conntrack) - len(shown); n > 0 {
			p("   ... and %d more (-o json lists them)\n", n)
		}
	}

	if len(tr.Warnings) > 0 {
		p("\nWarnings:\n")
		for _, wmsg := range tr.Warnings {
			p("  - %s\n", wmsg)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fraction shows 1/n when the probability is one (0.3333 -> 1/3).
func fraction(p float64) string {
	for n := 1; n <= 64; n++ {
		if d := p*float64(n) - 1; d > -1e-6 && d < 1e-6 {
			if n == 1 {
				return "1"
			}
			return fmt.Sprintf("1/%d", n)
		}
	}
	return fmt.Sprintf("%.4f", p)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
