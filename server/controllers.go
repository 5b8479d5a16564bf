package server

import (
	"context"
	"slices"
	"sync"

	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/controller/cronjob"
	"github.com/skiff-dev/skiff/controller/daemonset"
	"github.com/skiff-dev/skiff/controller/deployment"
	"github.com/skiff-dev/skiff/controller/disruption"
	"github.com/skiff-dev/skiff/controller/endpoints"
	"github.com/skiff-dev/skiff/controller/endpointslice"
	"github.com/skiff-dev/skiff/controller/endpointslicemirroring"
	"github.com/skiff-dev/skiff/controller/gc"
	"github.com/skiff-dev/skiff/controller/job"
	"github.com/skiff-dev/skiff/controller/namespace"
	"github.com/skiff-dev/skiff/controller/nodeipam"
	"github.com/skiff-dev/skiff/controller/nodelifecycle"
	"github.com/skiff-dev/skiff/controller/persistentvolume"
	"github.com/skiff-dev/skiff/controller/podautoscaler"
	"github.com/skiff-dev/skiff/controller/replicaset"
	"github.com/skiff-dev/skiff/controller/rootcacert"
	"github.com/skiff-dev/skiff/controller/serviceaccount"
	"github.com/skiff-dev/skiff/controller/servicelb"
	"github.com/skiff-dev/skiff/controller/statefulset"
	"github.com/skiff-dev/skiff/controller/tainteviction"
	"github.com/skiff-dev/skiff/scheduler"
)

// controllers run until stopControllers; their goroutines are tracked.
type controllers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	inf    *client.SharedInformers
}

// startControllers builds every built-in controller that is not disabled
// on shared informers (one list+watch per resource), starts the informers,
// then the controllers. Each talks to the API over loopback HTTPS like any
// client. A disabled controller is not built at all: it registers no
// handler (whose queue nothing would drain) and no informer of its own.
func (s *Server) startControllers(ctx context.Context, c *client.Client) {
	// The controllers outlive Start's ctx only until Stop: they get a
	// context of their own that Stop cancels.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	inf := client.NewSharedInformers(c)
	s.ctrl = &controllers{cancel: cancel, inf: inf}
	res := resourceTable(s.resource)
	// informer is the shared informer of a resource (of one namespace when
	// ns is set); the first caller's options hold.
	informer := func(resource, name, ns string) *client.Informer {
		return inf.For(res[resource], client.InformerOptions{Namespace: ns, Logger: s.log.With("informer", name)})
	}
	pods := func() *client.Informer { return informer("pods", "pods", "") }
	nodes := func() *client.Informer { return informer("nodes", "nodes", "") }

	var runs []func()
	enabled := func(name string) bool {
		if slices.Contains(s.cfg.DisabledControllers, name) {
			s.log.Info("controller disabled", "controller", name)
			return false
		}
		return true
	}
	add := func(name string, f func(context.Context) error) {
		runs = append(runs, func() {
			s.ctrl.wg.Add(1)
			go func() {
				defer s.ctrl.wg.Done()
				if err := f(cctx); err != nil {
					s.log.Error("controller stopped", "controller", name, "err", err)
				}
			}()
		})
	}
	// recorder returns an event recorder for a component; its sender runs
	// with the controllers.
	recorder := func(component string) *record.Recorder {
		r := record.NewRecorder(c, component, s.log.With("component", component))
		runs = append(runs, func() {
			s.ctrl.wg.Add(1)
			go func() {
				defer s.ctrl.wg.Done()
				_ = r.Run(cctx)
			}()
		})
		return r
	}

	if enabled("gc") {
		g := gc.New(gc.Deps{Client: c, Log: s.log.With("component", "gc")}, gc.Options{Resources: s.resource, Workers: 2, Custom: s.crds})
		add("gc", g.Run)
	}
	if enabled("namespace") {
		ns := namespace.New(namespace.Deps{Client: c, Log: s.log.With("component", "namespace")},
			namespace.Options{Resources: s.resource, Workers: 2, Custom: s.crds})
		add("namespace", ns.Run)
	}
	if enabled("serviceaccount") {
		// serviceaccount keeps a "default" ServiceAccount in every namespace.
		if sa, err := serviceaccount.New(serviceaccount.Deps{
			Client: c, Namespaces: informer("namespaces", "namespaces", ""),
			ServiceAccounts: informer("serviceaccounts", "serviceaccounts", ""),
			Log:             s.log.With("component", "serviceaccount"),
		}, serviceaccount.Options{}); err != nil {
			s.log.Error("serviceaccount: not started", "err", err)
		} else {
			add("serviceaccount", sa.Run)
		}
	}
	if enabled("root-ca-cert-publisher") {
		// rootcacert keeps a kube-root-ca.crt ConfigMap in every namespace.
		if rc, err := rootcacert.New(rootcacert.Deps{
			Client: c, Namespaces: informer("namespaces", "namespaces", ""),
			ConfigMaps: inf.For(res["configmaps"], client.InformerOptions{
				FieldSelector: "metadata.name=" + rootcacert.ConfigMapName, Logger: s.log.With("informer", "kube-root-ca.crt"),
			}),
			RootCA: s.bundle.CACertPEM,
			Log:    s.log.With("component", "root-ca-cert-publisher"),
		}); err != nil {
			s.log.Error("root-ca-cert-publisher: not started", "err", err)
		} else {
			add("root-ca-cert-publisher", rc.Run)
		}
	}
	if enabled("endpointslice") {
		eps := endpointslice.New(endpointslice.Deps{
			Client:         c,
			Services:       informer("services", "services", ""),
			Pods:           pods(),
			EndpointSlices: informer("endpointslices.discovery.k8s.io", "endpointslices", ""),
			Recorder:       recorder("endpointslice-controller"),
			Log:            s.log.With("component", "endpointslice"),
		}, endpointslice.Options{MaxEndpointsPerSlice: s.cfg.MaxEndpointsPerSlice, Workers: 4})
		add("endpointslice", eps.Run)
	}
	if enabled(endpoints.ControllerName) {
		// endpoints keeps the core/v1 Endpoints of Services with a selector.
		if ec, err := endpoints.New(endpoints.Deps{
			Client: c, Services: informer("services", "services", ""), Pods: pods(),
			Endpoints: informer("endpoints", "endpoints", ""), Log: s.log.With("component", "endpoints"),
		}, endpoints.Options{Workers: 2}); err != nil {
			s.log.Error("endpoints: not started", "err", err)
		} else {
			add(endpoints.ControllerName, ec.Run)
		}
	}
	if enabled(endpointslicemirroring.ControllerName) {
		// endpointslicemirroring mirrors the user-written Endpoints of
		// Services without a selector into EndpointSlices.
		if mc, err := endpointslicemirroring.New(endpointslicemirroring.Deps{
			Client: c, Services: informer("services", "services", ""),
			Endpoints:      informer("endpoints", "endpoints", ""),
			EndpointSlices: informer("endpointslices.discovery.k8s.io", "endpointslices", ""),
			Log:            s.log.With("component", "endpointslicemirroring"),
		}, endpointslicemirroring.Options{Workers: 2}); err != nil {
			s.log.Error("endpointslicemirroring: not started", "err", err)
		} else {
			add(endpointslicemirroring.ControllerName, mc.Run)
		}
	}
	if enabled("deployment") {
		// Deployments of earlier versions owned their pods: move them to
		// ReplicaSets before any controller runs (deployment.Migrate).
		if err := deployment.Migrate(cctx, c, s.log.With("component", "deployment")); err != nil {
			s.log.Error("deployment: moving deployments to replica sets", "err", err)
		}
		dc := deployment.New(deployment.Deps{
			Client:      c,
			Deployments: informer("deployments.apps", "deployments", ""),
			ReplicaSets: informer("replicasets.apps", "replicasets.apps", ""),
			Pods:        pods(),
			Recorder:    recorder("deployment-controller"),
			Log:         s.log.With("component", "deployment"),
		}, deployment.Options{Workers: 4})
		add("deployment", dc.Run)
	}
	if enabled("statefulset") {
		sc := statefulset.New(statefulset.Deps{
			Client:       c,
			StatefulSets: informer("statefulsets.apps", "statefulsets", ""),
			Pods:         pods(),
			Claims:       informer("persistentvolumeclaims", "persistentvolumeclaims", ""),
			Revisions:    informer("controllerrevisions.apps", "controllerrevisions", ""),
			Recorder:     recorder("statefulset-controller"),
			Log:          s.log.With("component", "statefulset"),
		}, statefulset.Options{Workers: 2})
		add("statefulset", sc.Run)
	}
	if enabled(podautoscaler.ControllerName) {
		// podautoscaler scales the /scale of HorizontalPodAutoscalers'
		// targets from the resource metrics API.
		if hc, err := podautoscaler.New(podautoscaler.Deps{
			Client: c, HPAs: informer("horizontalpodautoscalers.autoscaling", "horizontalpodautoscalers", ""), Pods: pods(),
			Recorder: recorder("horizontal-pod-autoscaler"), Log: s.log.With("component", "podautoscaler"),
		}, podautoscaler.Options{}); err != nil {
			s.log.Error("podautoscaler: not started", "err", err)
		} else {
			add(podautoscaler.ControllerName, hc.Run)
		}
	}
	// replicaset and replicationcontroller: one package, one controller
	// per kind, as upstream.
	for _, k := range []replicaset.Kind{replicaset.ReplicaSetKind, replicaset.ReplicationControllerKind} {
		if enabled(k.ControllerName) {
			rc := replicaset.New(replicaset.Deps{
				Client:   c,
				Sets:     informer(k.Resource, k.Resource, ""),
				Pods:     pods(),
				Recorder: recorder(k.Component),
				Log:      s.log.With("component", k.ControllerName),
			}, replicaset.Options{Kind: k})
			add(k.ControllerName, rc.Run)
		}
	}
	if enabled("job") {
		jc := job.New(job.Deps{
			Client:   c,
			Jobs:     informer("jobs.batch", "jobs", ""),
			Pods:     pods(),
			Recorder: recorder("job-controller"),
			Log:      s.log.With("component", "job"),
		}, job.Options{Workers: 4})
		add("job", jc.Run)
	}
	if enabled("cronjob") {
		cc := cronjob.New(cronjob.Deps{
			Client:   c,
			CronJobs: informer("cronjobs.batch", "cronjobs", ""),
			Jobs:     informer("jobs.batch", "jobs", ""),
			Recorder: recorder("cronjob-controller"),
			Log:      s.log.With("component", "cronjob"),
		}, cronjob.Options{Workers: 4})
		add("cronjob", cc.Run)
	}
	if enabled(binderName) {
		// persistentvolume binds claims to volumes and provisions
		// local-path volumes (storage.go).
		if pvc, err := persistentvolume.New(persistentvolume.Deps{
			Client: c, Claims: informer("persistentvolumeclaims", "persistentvolumeclaims", ""),
			Volumes: informer("persistentvolumes", "persistentvolumes", ""),
			Classes: informer("storageclasses.storage.k8s.io", "storageclasses", ""),
			Pods:    pods(), Nodes: nodes(),
			Recorder: recorder("persistentvolume-controller"), Log: s.log.With("component", binderName),
		}, persistentvolume.Options{}); err != nil {
			s.log.Error(binderName+": not started", "err", err)
		} else {
			add(binderName, pvc.Run)
		}
	}
	if enabled("daemonset") {
		// daemonset runs a DaemonSet's pod on every eligible node.
		dc := daemonset.New(daemonset.Deps{
			Client:     c,
			DaemonSets: informer("daemonsets.apps", "daemonsets", ""),
			Pods:       pods(),
			Nodes:      nodes(),
			Revisions:  informer("controllerrevisions.apps", "controllerrevisions", ""),
			Recorder:   recorder("daemonset-controller"),
			Log:        s.log.With("component", "daemonset"),
		}, daemonset.Options{Workers: 2})
		add("daemonset", dc.Run)
	}
	if enabled("disruption") {
		// disruption keeps PodDisruptionBudget status for the eviction API.
		dc := disruption.New(disruption.Deps{
			Client:    c,
			PDBs:      informer("poddisruptionbudgets.policy", "poddisruptionbudgets", ""),
			Pods:      pods(),
			Resources: s.resource,
			Recorder:  recorder("controllermanager"),
			Log:       s.log.With("component", "disruption"),
		}, disruption.Options{Workers: 2})
		add("disruption", dc.Run)
	}
	if enabled("scheduler") {
		sched := scheduler.New(scheduler.Deps{
			Client: c, Pods: pods(), Nodes: nodes(),
			// The volume filter (scheduler/volumes.go).
			Claims:   informer("persistentvolumeclaims", "persistentvolumeclaims", ""),
			Volumes:  informer("persistentvolumes", "persistentvolumes", ""),
			Classes:  informer("storageclasses.storage.k8s.io", "storageclasses", ""),
			Recorder: recorder("default-scheduler"), Log: s.log.With("component", "scheduler"),
		}, scheduler.Options{Workers: 16})
		add("scheduler", sched.Run)
	}
	if enabled("nodelifecycle") {
		nl := nodelifecycle.New(nodelifecycle.Deps{
			Client:   c,
			Nodes:    nodes(),
			Pods:     pods(),
			Leases:   informer("leases.coordination.k8s.io", "leases", nodelifecycle.LeaseNamespace),
			Recorder: recorder("node-controller"),
			Log:      s.log.With("component", "nodelifecycle"),
		}, nodelifecycle.Options{
			NodeMonitorGracePeriod: s.cfg.NodeMonitorGracePeriod,
			PodEvictionTimeout:     s.cfg.PodEvictionTimeout,
			Workers:                2,
		})
		add("nodelifecycle", nl.Run)
	}
	if enabled("tainteviction") {
		// tainteviction deletes pods that do not tolerate a NoExecute taint.
		te := tainteviction.New(tainteviction.Deps{
			Client: c, Nodes: nodes(), Pods: pods(),
			Recorder: recorder("taint-eviction-controller"), Log: s.log.With("component", "tainteviction"),
		}, tainteviction.Options{Workers: 2})
		add("tainteviction", te.Run)
	}
	if enabled("nodeipam") {
		// nodeipam gives each Node its podCIDR (config.Parse validated the
		// mask against the cluster CIDR, so New cannot fail on flags).
		if ipam, err := nodeipam.New(nodeipam.Deps{
			Client: c, Nodes: nodes(), Recorder: recorder("node-ipam-controller"), Log: s.log.With("component", "nodeipam"),
		}, nodeipam.Options{
			ClusterCIDR: s.parsed.ClusterCIDR, NodeMaskSize: s.cfg.NodeCIDRMaskSize, Workers: 2,
		}); err != nil {
			s.log.Error("nodeipam: not started", "err", err)
		} else {
			add("nodeipam", ipam.Run)
		}
	}
	if s.parsed.LBCIDR.IsValid() && enabled("servicelb") {
		// servicelb gives LoadBalancer Services an address from --lb-cidr
		// (validated by config.Parse).
		if lb, err := servicelb.New(servicelb.Deps{
			Client: c, Services: informer("services", "services", ""),
			Recorder: recorder("service-lb-controller"), Log: s.log.With("component", "servicelb"),
		}, servicelb.Options{Pool: s.parsed.LBCIDR}); err != nil {
			s.log.Error("servicelb: not started", "err", err)
		} else {
			add("servicelb", lb.Run)
		}
	}
	if s.dns != nil && enabled("dns") { // server/dns.go; nil without --dns-listen
		add("dns", s.dnsRun(inf, res))
	}

	inf.Start(cctx)
	for _, r := range runs {
		r()
	}
}

func (s *Server) stopControllers() {
	if s.ctrl == nil {
		return
	}
	s.ctrl.cancel()
	s.ctrl.wg.Wait()
	s.ctrl.inf.Wait()
	s.ctrl = nil
}
