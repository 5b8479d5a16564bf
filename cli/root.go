// Package cli builds Skiff's command line with cobra. It turns flags into
// plain config values (package internal/config) and hands them to the Run
// functions it is given, so it never imports the components themselves.
// The kubectl-style verbs (get, apply, expose, ...) come from package
// kubectl, which talks to a server only through its API.
//
// # Invariants
//
//   - No flag is bound to a global: each command owns its config value.
//   - Commands return errors; only main turns them into an exit status.
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
)

// Runners are the functions the commands call once their flags are parsed.
type Runners struct {
	Server func(ctx context.Context, cfg config.Server) error
	// Agent runs `skiff agent` (a node joining a server).
	Agent func(ctx context.Context, cfg config.Agent) error
	// NetExec runs `skiff netexec`, the test workload (package netexec).
	NetExec func(ctx context.Context, opts NetExecOptions) error
	// RuntimeInit is the hidden `skiff runtime-init` helper of the process
	// runtime (netagent/runtime/process.Init). It gets its arguments
	// unparsed and returns only on failure (on success it execs).
	RuntimeInit func(args []string) error
	// Image runs the `skiff image` verbs (the containerd runtime's images).
	Image ImageRunners
	// Forward runs the hidden `skiff netns-forward` (package
	// internal/nsforward).
	Forward func(ctx context.Context, opts ForwardOptions) error
	// ContainerdLog is the hidden `skiff containerd-log PATH`, the logging
	// binary the containerd shim runs for each task
	// (netagent/runtime/containerd/logdriver.RunLogger). It gets its arguments
	// unparsed.
	ContainerdLog func(ctx context.Context, args []string) error
	// Backup runs `skiff backup` (backup.go); out is stdout.
	Backup func(ctx context.Context, o BackupOptions, out io.Writer) error
	// SecretsEncrypt runs `skiff secrets-encrypt` (secretsencrypt.go); out
	// is stdout.
	SecretsEncrypt func(ctx context.Context, o SecretsEncryptOptions, out io.Writer) error
}

// NetExecOptions are the flags of `skiff netexec`.
type NetExecOptions struct {
	HTTPPort int // --http-port
	UDPPort  int // --udp-port; -1: no UDP server
}

// RuntimeInitCommand is the hidden helper's name; it must equal
// netagent/runtime/process.InitCommand (cmd/skiff's test checks).
const RuntimeInitCommand = "runtime-init"

// ContainerdLogCommand is the hidden logging binary's command; it must
// equal netagent/runtime/containerd/logdriver.LogCommand (cmd/skiff's test checks).
const ContainerdLogCommand = "containerd-log"

// NewRoot returns the `skiff` command with its subcommands; the CLI verbs
// read os.Stdin and write errors to os.Stderr.
func NewRoot(r Runners, stdout io.Writer) *cobra.Command {
	return NewRootWith(r, kubectl.Env{Out: stdout})
}

// NewRootWith is NewRoot with the streams, environment and clock of the
// CLI verbs (package kubectl: get, apply, delete, ..., version) given.
// Print the error Execute returns with kubectl.PrintError, which also
// gives the exit status.
func NewRootWith(r Runners, env kubectl.Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "skiff",
		Short: "Skiff: the Kubernetes Service flow in one binary",
		Long: `Skiff: the Kubernetes Service flow in one binary.

The cluster verbs (get, apply, expose, ...) take --kubeconfig, --data-dir
and -n/--namespace before or after the verb, as kubectl does:
  skiff -n kube-system get pods`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if env.Out != nil {
		root.SetOut(env.Out)
	}
	root.AddCommand(newServerCommand(r.Server), newAgentCommand(r.Agent), newNetExecCommand(r.NetExec), newRuntimeInitCommand(r.RuntimeInit), newImageCommand(r.Image), newForwardCommand(r.Forward), newContainerdLogCommand(r.ContainerdLog))
	root.AddCommand(newBackupCommand(r.Backup), newSecretsEncryptCommand(r.SecretsEncrypt))
	root.AddCommand(kubectl.Commands(env)...)
	return root
}

func newNetExecCommand(run func(context.Context, NetExecOptions) error) *cobra.Command {
	opts := NetExecOptions{HTTPPort: 8080, UDPPort: 8081}
	cmd := &cobra.Command{
		Use:   "netexec",
		Short: "Run the test workload (agnhost netexec's HTTP and UDP servers) that end-to-end tests run as pods",
		Long: `netexec serves HTTP on --http-port: /hostname (the pod name: $POD_NAME, else the
host name), /clientip, /echo?msg=, /healthz (200 until /sethealth?status=N),
/exit?code=, and /dial?host=&port=&request=&protocol=http|udp&tries=N, which makes
N requests from this pod and answers {"responses":[...],"errors":[...]}.
On --udp-port it answers "hostname", "echo <msg>" and "clientip".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.HTTPPort < 1 || opts.HTTPPort > 65535 {
				return fmt.Errorf("--http-port %d: want 1-65535", opts.HTTPPort)
			}
			if opts.UDPPort != -1 && (opts.UDPPort < 1 || opts.UDPPort > 65535) {
				return fmt.Errorf("--udp-port %d: want 1-65535, or -1 for none", opts.UDPPort)
			}
			if run == nil {
				return fmt.Errorf("netexec is not available in this build")
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.HTTPPort, "http-port", opts.HTTPPort, "HTTP port")
	cmd.Flags().IntVar(&opts.UDPPort, "udp-port", opts.UDPPort, "UDP port (-1: no UDP server)")
	return cmd
}

func newRuntimeInitCommand(run func([]string) error) *cobra.Command {
	return &cobra.Command{
		Use:                RuntimeInitCommand,
		Short:              "Internal: the process runtime's helper that enters a pod's namespaces and execs its command",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			if run == nil {
				return fmt.Errorf("%s is not available in this build", RuntimeInitCommand)
			}
			return run(args)
		},
	}
}

func newContainerdLogCommand(run func(context.Context, []string) error) *cobra.Command {
	return &cobra.Command{
		Use:                ContainerdLogCommand + " LOG-FILE",
		Short:              "Internal: the containerd shim's logging binary; appends a task's stdout and stderr (fds 3 and 4) to LOG-FILE",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if run == nil {
				return fmt.Errorf("%s is not available in this build", ContainerdLogCommand)
			}
			return run(cmd.Context(), args)
		},
	}
}

func newServerCommand(run func(context.Context, config.Server) error) *cobra.Command {
	cfg := config.ServerDefaults()
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the control plane (API, store, allocators, controllers) and, unless --disable-agent, a node agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := cfg.Parse(); err != nil {
				return err
			}
			return run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for the store, TLS material, tokens and admin.kubeconfig")
	f.StringVar(&cfg.Listen, "listen", cfg.Listen, "HTTPS listen address (host:port)")
	f.StringVar(&cfg.ServiceCIDR, "service-cidr", cfg.ServiceCIDR, "range ClusterIPs are allocated from")
	f.StringVar(&cfg.ClusterCIDR, "cluster-cidr", cfg.ClusterCIDR, "range pod IPs come from (a /24 per node)")
	f.StringVar(&cfg.NodePortRange, "node-port-range", cfg.NodePortRange, "range NodePorts are allocated from (LOW-HIGH)")
	f.StringVar(&cfg.ClusterDomain, "cluster-domain", cfg.ClusterDomain, "DNS domain of the cluster")
	f.StringSliceVar(&cfg.TLSSANs, "tls-san", nil, "extra DNS name or IP for the serving certificate (repeatable)")
	f.BoolVar(&cfg.DisableAgent, "disable-agent", false, "run the control plane only, without a node agent")
	f.StringVar(&cfg.DNSListen, "dns-listen", cfg.DNSListen, "address (host:port) the cluster DNS serves on, UDP and TCP; empty: no DNS")
	f.DurationVar(&cfg.DNSTTL, "dns-ttl", cfg.DNSTTL, "TTL of cluster DNS records and negative answers (whole seconds)")
	f.StringSliceVar(&cfg.DNSUpstream, "dns-upstream", nil, "upstream resolvers for non-cluster names (default: /etc/resolv.conf)")
	f.StringSliceVar(&cfg.NodeIP, "node-ip", nil, "this node's address(es), added to the certificate SANs")
	f.StringVar(&cfg.AgentNodeName, "node-name", cfg.AgentNodeName, "the built-in agent's node name (default: the host name)")
	f.IntVar(&cfg.NodeCIDRMaskSize, "node-cidr-mask-size", cfg.NodeCIDRMaskSize, "prefix length of each node's pod range out of --cluster-cidr (default 24 for IPv4)")
	f.StringVar(&cfg.Runtime, "runtime", cfg.Runtime, "pod runtime: auto, containerd or process")
	f.StringVar(&cfg.ContainerdSocket, "containerd-socket", cfg.ContainerdSocket, containerdSocketUsage)
	f.StringSliceVar(&cfg.InsecureRegistries, "insecure-registry", nil, insecureRegistryUsage)
	f.StringVar(&cfg.Cgroups, "cgroups", cfg.Cgroups, cgroupsUsage)
	f.StringVar(&cfg.CgroupRoot, "cgroup-root", cfg.CgroupRoot, cgroupRootUsage)
	f.StringSliceVar(&cfg.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", nil, unsafeSysctlsUsage)
	f.StringVar(&cfg.ProxyMode, "proxy-mode", cfg.ProxyMode, "service proxy: iptables, nftables or ipvs")
	f.StringVar(&cfg.IPVSScheduler, "ipvs-scheduler", cfg.IPVSScheduler, "IPVS scheduler with --proxy-mode ipvs: rr, wrr, lc, wlc, sh, dh, sed, nq, mh, ...")
	f.StringVar(&cfg.PodRoutes, "pod-routes", cfg.PodRoutes, podRoutesUsage)
	f.BoolVar(&cfg.EgressMasquerade, "egress-masquerade", cfg.EgressMasquerade, egressMasqueradeUsage)
	f.DurationVar(&cfg.PodTerminationDelay, "pod-termination-delay", cfg.PodTerminationDelay, "how long a Ready pod being deleted keeps running before SIGTERM, so that proxies drop it first (0: none)")
	f.StringVar(&cfg.LBCIDR, "lb-cidr", cfg.LBCIDR, "pool LoadBalancer Services get their address from; empty: they stay pending")
	f.StringSliceVar(&cfg.DisabledControllers, "disable-controller", nil, "built-in controller not to run (repeatable): gc, namespace, ...")
	f.IntVar(&cfg.MaxEndpointsPerSlice, "max-endpoints-per-slice", cfg.MaxEndpointsPerSlice, "most endpoints in one EndpointSlice (1-1000)")
	f.DurationVar(&cfg.NodeMonitorGracePeriod, "node-monitor-grace-period", cfg.NodeMonitorGracePeriod, "a node silent this long becomes NotReady")
	f.DurationVar(&cfg.PodEvictionTimeout, "pod-eviction-timeout", cfg.PodEvictionTimeout, "delete a NotReady node's controller-owned pods after this long")
	f.IntVar(&cfg.HistorySize, "history-size", cfg.HistorySize, "revisions of watch history kept in the store")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long SIGTERM waits for requests to finish")
	f.IntVar(&cfg.MaxRequestsInFlight, "max-requests-inflight", cfg.MaxRequestsInFlight, "most reads served at once, watches and logs apart; more get 429 (0: no limit)")
	f.IntVar(&cfg.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", cfg.MaxMutatingRequestsInFlight, "most writes served at once; more get 429 (0: no limit)")
	f.DurationVar(&cfg.RequestBodyTimeout, "request-body-timeout", cfg.RequestBodyTimeout, "how long a request may take to send its body; a stalled one gets 408")
	f.IntVar(&cfg.MaxConnectionsPerAddress, "max-connections-per-address", cfg.MaxConnectionsPerAddress, "HTTPS connections open at once from one client address (an IPv6 /64); over it the longest idle is closed, else the new one (0: no cap)")
	f.IntVar(&cfg.MaxConnections, "max-connections", cfg.MaxConnections, "HTTPS connections open at once in all (0: a fifth below the file-descriptor limit, at most 65536)")
	f.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "close a keep-alive HTTPS connection idle this long")
	f.DurationVar(&cfg.RequestReadTimeout, "request-read-timeout", cfg.RequestReadTimeout, "most time to read a request's headers and body; watches, logs and exec are not bound (0: none)")
	f.BoolVar(&cfg.ResetStore, "reset-store", false, "start with an empty store when the data dir has credentials but no database (or a 0-byte one); without it such a start is refused")
	f.BoolVar(&cfg.SecretsEncryption, "secrets-encryption", false, "store Secrets encrypted (AES-GCM) with the key in <data-dir>/cred/encryption-config.json, made if missing; Secrets stored in plaintext are encrypted at start")
	return cmd
}

// insecureRegistryUsage documents --insecure-registry.
const insecureRegistryUsage = "registry host[:port] the containerd runtime pulls from over plain HTTP (repeatable); loopback (localhost, 127.0.0.1, ::1) always is"

// cgroupsUsage and cgroupRootUsage document --cgroups and --cgroup-root.
const (
	cgroupsUsage    = "pods in cgroups as the kubelet lays them out, enforcing resources.limits and requests: auto (when root and the node has cgroups), on or off"
	cgroupRootUsage = "the cgroup, in every hierarchy, that the kubepods tree goes under"
	// unsafeSysctlsUsage documents --allowed-unsafe-sysctls.
	unsafeSysctlsUsage = "namespaced sysctls (or prefixes ending in *, e.g. net.core.*) pods may set besides the safe set (repeatable)"
)

// containerdSocketUsage documents --containerd-socket.
const containerdSocketUsage = "containerd's socket (default /run/containerd/containerd.sock); with --runtime containerd and none answering, the agent starts containerd itself under <data-dir>/containerd"

func newAgentCommand(run func(context.Context, config.Agent) error) *cobra.Command {
	cfg := config.AgentDefaults()
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Join a server as a node: register, run the pods bound to it, serve the node DNS",
		Long: `agent joins the cluster at --server with the join token (the server's
<data-dir>/tokens/node), registers this machine as a Node, and runs the pods the
scheduler binds to it: one network namespace per pod on the skiff0 bridge (CNI),
containers through --runtime, probes, pod DNS on the bridge gateway, status and
graceful termination. Stopping the agent leaves its pods running; a restarted agent
adopts them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := cfg.Parse(); err != nil {
				return err
			}
			if run == nil {
				return fmt.Errorf("agent is not available in this build")
			}
			return run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Server, "server", cfg.Server, "the server's URL, https://host:port")
	f.StringVar(&cfg.Token, "token", cfg.Token, "the join token (the server's <data-dir>/tokens/node)")
	f.StringVar(&cfg.TokenFile, "token-file", cfg.TokenFile, "file holding the join token (instead of --token)")
	f.StringVar(&cfg.ServerCA, "server-ca", cfg.ServerCA, "PEM file of the server's CA (the server's <data-dir>/tls/ca.crt); default: the system roots")
	f.StringVar(&cfg.NodeName, "node-name", cfg.NodeName, "this node's name (default: the host name)")
	f.StringSliceVar(&cfg.NodeIP, "node-ip", nil, "this node's address(es) (default: the first global IPv4 address)")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for the agent's credentials, pod files, CNI and runtime state")
	f.StringVar(&cfg.Runtime, "runtime", cfg.Runtime, "pod runtime: auto, containerd or process")
	f.StringVar(&cfg.ContainerdSocket, "containerd-socket", cfg.ContainerdSocket, containerdSocketUsage)
	f.StringSliceVar(&cfg.InsecureRegistries, "insecure-registry", nil, insecureRegistryUsage)
	f.StringVar(&cfg.Cgroups, "cgroups", cfg.Cgroups, cgroupsUsage)
	f.StringVar(&cfg.CgroupRoot, "cgroup-root", cfg.CgroupRoot, cgroupRootUsage)
	f.StringSliceVar(&cfg.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", nil, unsafeSysctlsUsage)
	f.StringVar(&cfg.ProxyMode, "proxy-mode", cfg.ProxyMode, "service proxy: iptables, nftables or ipvs")
	f.StringVar(&cfg.IPVSScheduler, "ipvs-scheduler", cfg.IPVSScheduler, "IPVS scheduler with --proxy-mode ipvs: rr, wrr, lc, wlc, sh, dh, sed, nq, mh, ...")
	f.StringVar(&cfg.ClusterDomain, "cluster-domain", cfg.ClusterDomain, "DNS domain of the cluster")
	f.StringVar(&cfg.ClusterCIDR, "cluster-cidr", cfg.ClusterCIDR, "the cluster's pod range (the server's --cluster-cidr): the proxy masquerades traffic from outside it")
	f.StringVar(&cfg.PodRoutes, "pod-routes", cfg.PodRoutes, podRoutesUsage)
	f.BoolVar(&cfg.EgressMasquerade, "egress-masquerade", cfg.EgressMasquerade, egressMasqueradeUsage)
	f.StringSliceVar(&cfg.DNSUpstream, "dns-upstream", nil, "upstream resolvers of the node DNS for non-cluster names (default: /etc/resolv.conf)")
	f.DurationVar(&cfg.TerminationDelay, "pod-termination-delay", cfg.TerminationDelay, "how long a Ready pod being deleted keeps running before SIGTERM, so that proxies drop it first (0: none)")
	f.StringVar(&cfg.NetNS, "netns", cfg.NetNS, "network namespace (path) for the pod network, node DNS and probes; default: the agent's own")
	f.StringVar(&cfg.NodeAPIListen, "node-api-listen", cfg.NodeAPIListen, "address of the node API the server reads logs and traces from (HTTPS, client certificate of the server CA only; needs --server-ca); empty turns it off")
	f.StringVar(&cfg.MetricsBindAddress, "metrics-bind-address", cfg.MetricsBindAddress, "address of the Prometheus /metrics endpoint (plain HTTP: the service proxy's kube-proxy metrics, Go and process); empty turns it off")
	f.StringVar(&cfg.HealthzBindAddress, "healthz-bind-address", cfg.HealthzBindAddress, "address of the service proxy's /healthz and /livez (plain HTTP, 200 while its rules are in sync, else 503); empty turns it off")
	f.StringVar(&cfg.NodeAPIURL, "node-api-url", cfg.NodeAPIURL, "URL of the node API published on the Node (default: https://<first --node-ip>:<port>)")
	return cmd
}

const egressMasqueradeUsage = "masquerade pod traffic to destinations outside the cluster's pod range behind the node's address, so that replies find their way back (false removes the rules)"

const podRoutesUsage = "how pods reach other nodes' pods: host-gw (a route to each other node's podCIDR via its InternalIP; the nodes share an L2 segment), vxlan (the same through a VXLAN tunnel, UDP 8472; pods get MTU 1450) or none"
