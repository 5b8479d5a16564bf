package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type createOptions struct {
	files      fileOptions
	dryRun     string
	output     string
	saveConfig bool
}

func newCreateCommand(g *globals) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:   "create -f FILENAME | create namespace|deployment|service|configmap|secret ...",
		Short: "Create resources from files or stdin, or from a generator",
		Example: `  skiff create -f pod.yaml
  skiff create namespace staging
  skiff create deployment web --image=nginx --replicas=3 --port=80
  skiff create service nodeport web --tcp=80:8080
  skiff create configmap app --from-file=conf/ --from-literal=MODE=prod
  skiff create secret generic db --from-literal=password=s3cret`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.files.filenames) == 0 {
				return usageError("must specify one of -f and -k")
			}
			if err := checkDryRun(o.dryRun); err != nil {
				return err
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			ms, err := o.files.read(s.env.In)
			if err != nil {
				return err
			}
			if len(ms) == 0 {
				return usageError("no objects passed to create")
			}
			failed := false
			for _, m := range ms {
				p, err := s.place(m)
				if err == nil {
					err = o.create(cmd.Context(), s, p.info, p.ns, p.obj)
				}
				if err != nil {
					fmt.Fprintln(s.env.ErrOut, errorText(err))
					failed = true
				}
			}
			if failed {
				return errPrinted
			}
			return nil
		},
	}
	o.files.addFlags(cmd, "to create")
	o.addFlags(cmd)
	cmd.AddCommand(newCreateNamespaceCommand(g, o), newCreateDeploymentCommand(g, o), newCreateServiceCommand(g, o),
		newCreateConfigMapCommand(g, o), newCreateSecretCommand(g, o)) // create_config.go
	return cmd
}

func (o *createOptions) addFlags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&o.dryRun, "dry-run", "none", `"none", or "client" to print the object without creating it`)
	cmd.PersistentFlags().StringVarP(&o.output, "output", "o", "", "print the created object: json, yaml, name")
	cmd.PersistentFlags().BoolVar(&o.saveConfig, "save-config", false, "record the configuration in the last-applied annotation, so that apply can update the object later")
}

// create posts one object (or, with --dry-run=client, only prints it).
func (o *createOptions) create(ctx context.Context, s *session, info *api.ResourceInfo, ns string, obj map[string]any) error {
	if info.Namespaced {
		setNested(obj, ns, "metadata", "namespace")
	}
	if o.saveConfig {
		cfg, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		setNested(obj, string(cfg)+"\n", "metadata", "annotations", LastAppliedAnnotation)
	}
	f, err := parseOutput(o.output)
	if err != nil {
		return err
	}
	result := obj
	if o.dryRun != "client" {
		p, err := client.ResourcePath(info, ns, "")
		if err != nil {
			return err
		}
		body, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var out []byte
		if err := s.c.Do(ctx, http.MethodPost, p, body, &out); err != nil {
			return err
		}
		if result, err = decodeMap(out); err != nil {
			return err
		}
	}
	name := str(result, "metadata", "name")
	if f.kind == outTable {
		fmt.Fprintf(s.env.Out, "%s created%s\n", objectRef(info, name), dryRunSuffix(o.dryRun))
		return nil
	}
	return printObject(s.env.Out, f, result, objectRef(info, name))
}

// generated runs a generator command: build the object, then create it.
func (o *createOptions) generated(cmd *cobra.Command, g *globals, resource string, build func(s *session) (map[string]any, error)) error {
	if err := checkDryRun(o.dryRun); err != nil {
		return err
	}
	s, err := g.connect(cmd)
	if err != nil {
		return err
	}
	info, err := s.resolve(resource)
	if err != nil {
		return err
	}
	obj, err := build(s)
	if err != nil {
		return err
	}
	return o.create(cmd.Context(), s, info, s.namespaceFor(info, false), obj)
}

func newCreateNamespaceCommand(g *globals, o *createOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "namespace NAME",
		Aliases: []string{"ns"},
		Short:   "Create a namespace",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.generated(cmd, g, "namespaces", func(*session) (map[string]any, error) {
				return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": args[0]}}, nil
			})
		},
	}
}

func newCreateDeploymentCommand(g *globals, o *createOptions) *cobra.Command {
	var images []string
	var replicas, port int32
	cmd := &cobra.Command{
		Use:     "deployment NAME --image=IMAGE [--replicas=N] [--port=PORT] [-- COMMAND [args...]]",
		Aliases: []string{"deploy"},
		Short:   "Create a deployment",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(images) == 0 {
				return usageError("required flag(s) \"image\" not set")
			}
			name := args[0]
			return o.generated(cmd, g, "deployments", func(*session) (map[string]any, error) {
				labels := map[string]any{"app": name}
				var containers []any
				for i, img := range images {
					c := map[string]any{"name": containerName(img, i, len(images)), "image": img}
					if port > 0 {
						c["ports"] = []any{map[string]any{"containerPort": port}}
					}
					if i == 0 && len(args) > 1 {
						c["command"] = args[1:]
					}
					containers = append(containers, c)
				}
				return map[string]any{
					"apiVersion": "apps/v1", "kind": "Deployment",
					"metadata": map[string]any{"name": name, "labels": labels},
					"spec": map[string]any{
						"replicas": replicas,
						"selector": map[string]any{"matchLabels": labels},
						"template": map[string]any{
							"metadata": map[string]any{"labels": labels},
							"spec":     map[string]any{"containers": containers},
						},
					},
				}, nil
			})
		},
	}
	cmd.Flags().StringSliceVar(&images, "image", nil, "image(s) to run")
	cmd.Flags().Int32VarP(&replicas, "replicas", "r", 1, "number of replicas")
	cmd.Flags().Int32Var(&port, "port", 0, "container port to expose")
	return cmd
}

// containerName derives a container name from an image, as kubectl does
// ("nginx:1.25" -> "nginx"; several images get their own names).
func containerName(image string, i, n int) string {
	base := image
	if j := strings.LastIndex(base, "/"); j >= 0 {
		base = base[j+1:]
	}
	if j := strings.IndexAny(base, ":@"); j >= 0 {
		base = base[:j]
	}
	base = strings.ToLower(base)
	if base == "" || n > 1 && i > 0 {
		return base + "-" + strconv.Itoa(i)
	}
	return base
}

func newCreateServiceCommand(g *globals, o *createOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "service clusterip|nodeport|loadbalancer|externalname NAME",
		Aliases: []string{"svc"},
		Short:   "Create a service of a type",
	}
	for _, typ := range []string{"clusterip", "nodeport", "loadbalancer", "externalname"} {
		var tcp []string
		var nodePort int32
		var clusterIP, externalName string
		sub := &cobra.Command{
			Use:   typ + " NAME [--tcp=port:targetPort]",
			Short: "Create a " + typ + " service",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				name := args[0]
				return o.generated(cmd, g, "services", func(*session) (map[string]any, error) {
					spec := map[string]any{}
					switch typ {
					case "clusterip":
						spec["type"] = api.ServiceTypeClusterIP
						if clusterIP != "" {
							spec["clusterIP"] = clusterIP
						}
					case "nodeport":
						spec["type"] = api.ServiceTypeNodePort
					case "loadbalancer":
						spec["type"] = api.ServiceTypeLoadBalancer
					case "externalname":
						if externalName == "" {
							return nil, usageError("--external-name must be specified")
						}
						spec["type"] = api.ServiceTypeExternalName
						spec["externalName"] = externalName
					}
					var ports []any
					for _, t := range tcp {
						ps, ts, _ := strings.Cut(t, ":")
						port, err := strconv.Atoi(ps)
						if err != nil {
							return nil, usageError("invalid --tcp %q: want port[:targetPort]", t)
						}
						p := map[string]any{"protocol": "TCP", "port": port}
						if ts == "" {
							ts = ps
						}
						p["name"] = ps + "-" + ts
						if n, err := strconv.Atoi(ts); err == nil {
							p["targetPort"] = n
						} else {
							p["targetPort"] = ts
						}
						if nodePort > 0 && typ == "nodeport" {
							p["nodePort"] = nodePort
						}
						ports = append(ports, p)
					}
					if len(ports) > 0 {
						spec["ports"] = ports
					}
					if typ != "externalname" {
						spec["selector"] = map[string]any{"app": name}
					}
					return map[string]any{"apiVersion": "v1", "kind": "Service",
						"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}}, "spec": spec}, nil
				})
			},
		}
		sub.Flags().StringSliceVar(&tcp, "tcp", nil, "port pairs port[:targetPort]")
		switch typ {
		case "nodeport":
			sub.Flags().Int32Var(&nodePort, "node-port", 0, "the node port (allocated when omitted)")
		case "clusterip":
			sub.Flags().StringVar(&clusterIP, "clusterip", "", `the ClusterIP, or "None" for a headless service`)
		case "externalname":
			sub.Flags().StringVar(&externalName, "external-name", "", "the external DNS name")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}
