package api

import (
	"fmt"
	"strconv"

	"github.com/skiff-dev/skiff/api/field"
)

// Resources returns the table of every resource Skiff serves (docs/api.md),
// freshly built on each call so that no caller can change another's.
func Resources() []*ResourceInfo {
	return []*ResourceInfo{
		namespaces(), nodes(), pods(), services(), events(),
		configMaps(), secrets(), serviceAccounts(), endpoints(),
		replicationControllers(),
		deployments(), statefulSets(), endpointSlices(),
		replicaSets(),
		serviceCIDRs(), ipAddresses(), leases(),
		horizontalPodAutoscalers(),
		jobs(), cronJobs(),
		// storage (api/types_storage.go)
		persistentVolumes(), persistentVolumeClaims(), storageClasses(),
		priorityClasses(), // resources_scheduling.go
		daemonSets(),
		podDisruptionBudgets(),
		controllerRevisions(),                            // resources_revision.go
		ingresses(), ingressClasses(), networkPolicies(), // resources_networking.go
	}
}

// Lookup finds a resource by group/version ("v1", "apps/v1") and plural
// resource name; nil when there is none.
func Lookup(resources []*ResourceInfo, groupVersion, resource string) *ResourceInfo {
	for _, r := range resources {
		if r.GroupVersion() == groupVersion && r.Resource == resource {
			return r
		}
	}
	return nil
}

// LookupKind finds a resource by apiVersion and Kind (as in a manifest);
// nil when there is none.
func LookupKind(resources []*ResourceInfo, apiVersion, kind string) *ResourceInfo {
	for _, r := range resources {
		if r.GroupVersion() == apiVersion && r.Kind == kind {
			return r
		}
	}
	return nil
}

// LookupName finds a resource by plural, singular or short name
// ("services", "service", "svc"), as kubectl resolves them; nil when none.
func LookupName(resources []*ResourceInfo, name string) *ResourceInfo {
	for _, r := range resources {
		if r.Resource == name || r.Singular == name {
			return r
		}
		for _, s := range r.ShortNames {
			if s == name {
				return r
			}
		}
	}
	return nil
}

// kindFuncs are the typed functions of one resource, wrapped into the
// Object-typed fields of ResourceInfo by build.
type kindFuncs[PT Object] struct {
	defaults     func(PT)
	create       func(PT) field.ErrorList
	update       func(obj, old PT) field.ErrorList
	statusUpdate func(obj, old PT) field.ErrorList
	fields       func(PT, map[string]string)
	// resetStatus clears the status on create; keepStatus copies old's
	// status into obj; keepSpec copies old's spec into obj.
	resetStatus func(PT)
	keepStatus  func(obj, old PT)
	keepSpec    func(obj, old PT)
	// specChanged reports a change that bumps metadata.generation; nil
	// for resources that do not track generation.
	specChanged func(obj, old PT) bool
	// prepareCreate is extra type-specific create preparation (what
	// Kubernetes' admission does on create only).
	prepareCreate func(PT)
	// prepareUpdate is extra type-specific update preparation.
	prepareUpdate func(obj, old PT)
}

func wrongType(obj Object) field.ErrorList {
	return field.ErrorList{field.Internal(field.NewPath(""), fmt.Errorf("api: unexpected object type %T", obj))}
}

func build[T any, PT interface {
	*T
	Object
}, LT any, PLT interface {
	*LT
	ListObject
}](info ResourceInfo, f kindFuncs[PT]) *ResourceInfo {
	r := info
	gv := r.GroupVersion()
	kind, listKind := r.Kind, r.ListKind
	r.New = func() Object {
		o := PT(new(T))
		o.GetTypeMeta().APIVersion, o.GetTypeMeta().Kind = gv, kind
		return o
	}
	r.NewList = func() ListObject {
		l := PLT(new(LT))
		l.GetTypeMeta().APIVersion, l.GetTypeMeta().Kind = gv, listKind
		return l
	}
	r.Default = func(obj Object) {
		o, ok := obj.(PT)
		if !ok {
			return
		}
		tm := o.GetTypeMeta()
		if tm.APIVersion == "" && tm.Kind == "" {
			tm.APIVersion, tm.Kind = gv, kind
		}
		if f.defaults != nil {
			f.defaults(o)
		}
	}
	r.ValidateCreate = func(obj Object) field.ErrorList {
		o, ok := obj.(PT)
		if !ok {
			return wrongType(obj)
		}
		return f.create(o)
	}
	r.ValidateUpdate = func(obj, old Object) field.ErrorList {
		o, ok1 := obj.(PT)
		p, ok2 := old.(PT)
		if !ok1 || !ok2 {
			return wrongType(obj)
		}
		return f.update(o, p)
	}
	r.Fields = func(obj Object) map[string]string {
		m := obj.GetObjectMeta()
		out := map[string]string{"metadata.name": m.Name, "metadata.namespace": m.Namespace}
		if o, ok := obj.(PT); ok && f.fields != nil {
			f.fields(o, out)
		}
		return out
	}
	r.PrepareForCreate = func(obj Object) {
		o, ok := obj.(PT)
		if !ok {
			return
		}
		if f.resetStatus != nil {
			f.resetStatus(o)
		}
		if f.prepareCreate != nil {
			f.prepareCreate(o)
		}
		if f.specChanged != nil {
			o.GetObjectMeta().Generation = 1
		} else {
			o.GetObjectMeta().Generation = 0
		}
	}
	r.PrepareForUpdate = func(obj, old Object) {
		o, ok1 := obj.(PT)
		p, ok2 := old.(PT)
		if !ok1 || !ok2 {
			return
		}
		PrepareObjectMetaForUpdate(o.GetObjectMeta(), p.GetObjectMeta())
		if f.keepStatus != nil {
			f.keepStatus(o, p)
		}
		if f.prepareUpdate != nil {
			f.prepareUpdate(o, p)
		}
		if f.specChanged != nil && f.specChanged(o, p) {
			o.GetObjectMeta().Generation = p.GetObjectMeta().Generation + 1
		}
	}
	if f.statusUpdate != nil {
		r.PrepareForStatusUpdate = func(obj, old Object) {
			o, ok1 := obj.(PT)
			p, ok2 := old.(PT)
			if !ok1 || !ok2 {
				return
			}
			m, om := o.GetObjectMeta(), p.GetObjectMeta()
			PrepareObjectMetaForUpdate(m, om)
			m.Labels, m.Annotations = om.Labels, om.Annotations
			m.OwnerReferences, m.Finalizers = om.OwnerReferences, om.Finalizers
			if f.keepSpec != nil {
				f.keepSpec(o, p)
			}
		}
		r.ValidateStatusUpdate = func(obj, old Object) field.ErrorList {
			o, ok1 := obj.(PT)
			p, ok2 := old.(PT)
			if !ok1 || !ok2 {
				return wrongType(obj)
			}
			return f.statusUpdate(o, p)
		}
	}
	return &r
}

func metaOnlyStatusUpdate[PT Object](obj, old PT) field.ErrorList {
	return ValidateObjectMetaUpdate(obj.GetObjectMeta(), old.GetObjectMeta(), field.NewPath("metadata"))
}

func namespaces() *ResourceInfo {
	return build[Namespace, *Namespace, NamespaceList](ResourceInfo{
		Version: "v1", Resource: "namespaces", Singular: "namespace", Kind: "Namespace", ListKind: "NamespaceList",
		ShortNames: []string{"ns"}, Subresources: []string{"status"},
	}, kindFuncs[*Namespace]{
		defaults: DefaultNamespace,
		create:   ValidateNamespace,
		update:   ValidateNamespaceUpdate,
		statusUpdate: func(o, p *Namespace) field.ErrorList {
			return append(metaOnlyStatusUpdate(o, p), validateNamespaceSpec(o)...)
		},
		fields:      func(o *Namespace, m map[string]string) { m["status.phase"] = o.Status.Phase },
		resetStatus: func(o *Namespace) { o.Status = NamespaceStatus{} },
		keepStatus:  func(o, p *Namespace) { o.Status = p.Status },
		keepSpec:    func(o, p *Namespace) { o.Spec = p.Spec },
	})
}

func nodes() *ResourceInfo {
	return build[Node, *Node, NodeList](ResourceInfo{
		Version: "v1", Resource: "nodes", Singular: "node", Kind: "Node", ListKind: "NodeList",
		ShortNames: []string{"no"}, Subresources: []string{"status"},
	}, kindFuncs[*Node]{
		defaults:     DefaultNode,
		create:       ValidateNode,
		update:       ValidateNodeUpdate,
		statusUpdate: func(o, p *Node) field.ErrorList { return dedupe(ValidateNodeUpdate(o, p)) },
		fields: func(o *Node, m map[string]string) {
			m["spec.unschedulable"] = strconv.FormatBool(o.Spec.Unschedulable)
		},
		// The node agent registers its Node with its status, so create keeps it.
		keepStatus: func(o, p *Node) { o.Status = p.Status },
		keepSpec:   func(o, p *Node) { o.Spec = p.Spec },
	})
}

func pods() *ResourceInfo {
	return build[Pod, *Pod, PodList](ResourceInfo{
		Version: "v1", Resource: "pods", Singular: "pod", Kind: "Pod", ListKind: "PodList",
		Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"}, Subresources: []string{"status", "binding", "log", "exec", "attach", "portforward", "eviction"},
	}, kindFuncs[*Pod]{
		defaults:     DefaultPod,
		create:       ValidatePod,
		update:       ValidatePodUpdate,
		statusUpdate: ValidatePodStatusUpdate,
		fields: func(o *Pod, m map[string]string) {
			m["spec.nodeName"] = o.Spec.NodeName
			m["spec.restartPolicy"] = o.Spec.RestartPolicy
			m["spec.schedulerName"] = o.Spec.SchedulerName
			m["spec.serviceAccountName"] = o.Spec.ServiceAccountName
			m["spec.hostNetwork"] = strconv.FormatBool(o.Spec.HostNetwork)
			m["status.phase"] = o.Status.Phase
			m["status.podIP"] = o.Status.PodIP
			m["status.nominatedNodeName"] = o.Status.NominatedNodeName
		},
		resetStatus: func(o *Pod) { o.Status = PodStatus{Phase: PodPending} },
		prepareCreate: func(o *Pod) {
			DefaultPodServiceAccount(o)
			o.Status.QOSClass = PodQOSClass(&o.Spec) // as kube-apiserver's PrepareForCreate
		},
		keepStatus:    func(o, p *Pod) { o.Status = p.Status },
		keepSpec:      func(o, p *Pod) { o.Spec = p.Spec },
		specChanged:   func(o, p *Pod) bool { return !semanticEqual(o.Spec, p.Spec) },
		prepareUpdate: PreparePodForUpdate, // validation_scheduling.go
	})
}

func services() *ResourceInfo {
	return build[Service, *Service, ServiceList](ResourceInfo{
		Version: "v1", Resource: "services", Singular: "service", Kind: "Service", ListKind: "ServiceList",
		Namespaced: true, ShortNames: []string{"svc"}, Categories: []string{"all"}, Subresources: []string{"status"},
	}, kindFuncs[*Service]{
		defaults:     DefaultService,
		create:       ValidateService,
		update:       ValidateServiceUpdate,
		statusUpdate: ValidateServiceStatusUpdate,
		fields: func(o *Service, m map[string]string) {
			m["spec.type"] = o.Spec.Type
			m["spec.clusterIP"] = o.Spec.ClusterIP
		},
		resetStatus:   func(o *Service) { o.Status = ServiceStatus{} },
		keepStatus:    func(o, p *Service) { o.Status = p.Status },
		keepSpec:      func(o, p *Service) { o.Spec = p.Spec },
		prepareUpdate: PrepareServiceForUpdate,
	})
}

func events() *ResourceInfo {
	return build[Event, *Event, EventList](ResourceInfo{
		Version: "v1", Resource: "events", Singular: "event", Kind: "Event", ListKind: "EventList",
		Namespaced: true, ShortNames: []string{"ev"},
	}, kindFuncs[*Event]{
		defaults: DefaultEvent,
		create:   ValidateEvent,
		update:   ValidateEventUpdate,
		fields: func(o *Event, m map[string]string) {
			m["involvedObject.kind"] = o.InvolvedObject.Kind
			m["involvedObject.namespace"] = o.InvolvedObject.Namespace
			m["involvedObject.name"] = o.InvolvedObject.Name
			m["involvedObject.uid"] = o.InvolvedObject.UID
			m["involvedObject.apiVersion"] = o.InvolvedObject.APIVersion
			m["involvedObject.resourceVersion"] = o.InvolvedObject.ResourceVersion
			m["involvedObject.fieldPath"] = o.InvolvedObject.FieldPath
			m["reason"] = o.Reason
			m["reportingComponent"] = o.ReportingController
			m["source"] = o.Source.Component
			m["type"] = o.Type
		},
	})
}

func configMaps() *ResourceInfo {
	return build[ConfigMap, *ConfigMap, ConfigMapList](ResourceInfo{
		Version: "v1", Resource: "configmaps", Singular: "configmap", Kind: "ConfigMap", ListKind: "ConfigMapList",
		Namespaced: true, ShortNames: []string{"cm"},
	}, kindFuncs[*ConfigMap]{
		defaults: DefaultConfigMap,
		create:   ValidateConfigMap,
		update:   ValidateConfigMapUpdate,
	})
}

func secrets() *ResourceInfo {
	return build[Secret, *Secret, SecretList](ResourceInfo{
		Version: "v1", Resource: "secrets", Singular: "secret", Kind: "Secret", ListKind: "SecretList",
		Namespaced: true,
	}, kindFuncs[*Secret]{
		defaults: DefaultSecret,
		create:   ValidateSecret,
		update:   ValidateSecretUpdate,
		fields:   func(o *Secret, m map[string]string) { m["type"] = o.Type },
	})
}

func serviceAccounts() *ResourceInfo {
	return build[ServiceAccount, *ServiceAccount, ServiceAccountList](ResourceInfo{
		Version: "v1", Resource: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount", ListKind: "ServiceAccountList",
		Namespaced: true, ShortNames: []string{"sa"},
	}, kindFuncs[*ServiceAccount]{
		defaults: DefaultServiceAccount,
		create:   ValidateServiceAccount,
		update:   ValidateServiceAccountUpdate,
	})
}

func endpoints() *ResourceInfo {
	return build[Endpoints, *Endpoints, EndpointsList](ResourceInfo{
		Version: "v1", Resource: "endpoints", Singular: "endpoints", Kind: "Endpoints", ListKind: "EndpointsList",
		Namespaced: true, ShortNames: []string{"ep"},
	}, kindFuncs[*Endpoints]{
		defaults: DefaultEndpoints,
		create:   ValidateEndpoints,
		update:   ValidateEndpointsUpdate,
	})
}

func deployments() *ResourceInfo {
	return build[Deployment, *Deployment, DeploymentList](ResourceInfo{
		Group: "apps", Version: "v1", Resource: "deployments", Singular: "deployment", Kind: "Deployment", ListKind: "DeploymentList",
		Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}, Subresources: []string{"status", "scale"},
	}, kindFuncs[*Deployment]{
		defaults:     DefaultDeployment,
		create:       ValidateDeployment,
		update:       ValidateDeploymentUpdate,
		statusUpdate: ValidateDeploymentStatusUpdate,
		resetStatus:  func(o *Deployment) { o.Status = DeploymentStatus{} },
		keepStatus:   func(o, p *Deployment) { o.Status = p.Status },
		keepSpec:     func(o, p *Deployment) { o.Spec = p.Spec },
		specChanged: func(o, p *Deployment) bool {
			return !semanticEqual(o.Spec, p.Spec) || !semanticEqual(o.Annotations, p.Annotations)
		},
	})
}

func statefulSets() *ResourceInfo {
	return build[StatefulSet, *StatefulSet, StatefulSetList](ResourceInfo{
		Group: "apps", Version: "v1", Resource: "statefulsets", Singular: "statefulset", Kind: "StatefulSet", ListKind: "StatefulSetList",
		Namespaced: true, ShortNames: []string{"sts"}, Categories: []string{"all"}, Subresources: []string{"status", "scale"},
	}, kindFuncs[*StatefulSet]{
		defaults:     DefaultStatefulSet,
		create:       ValidateStatefulSet,
		update:       ValidateStatefulSetUpdate,
		statusUpdate: ValidateStatefulSetStatusUpdate,
		resetStatus:  func(o *StatefulSet) { o.Status = StatefulSetStatus{} },
		keepStatus:   func(o, p *StatefulSet) { o.Status = p.Status },
		keepSpec:     func(o, p *StatefulSet) { o.Spec = p.Spec },
		specChanged:  func(o, p *StatefulSet) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}

func endpointSlices() *ResourceInfo {
	return build[EndpointSlice, *EndpointSlice, EndpointSliceList](ResourceInfo{
		Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Singular: "endpointslice", Kind: "EndpointSlice", ListKind: "EndpointSliceList",
		Namespaced: true,
	}, kindFuncs[*EndpointSlice]{
		defaults: DefaultEndpointSlice,
		create:   ValidateEndpointSlice,
		update:   ValidateEndpointSliceUpdate,
		fields: func(o *EndpointSlice, m map[string]string) {
			m["addressType"] = o.AddressType
		},
		specChanged: func(o, p *EndpointSlice) bool {
			return !semanticEqual(o.Endpoints, p.Endpoints) || !semanticEqual(o.Ports, p.Ports) || !semanticEqual(o.Labels, p.Labels)
		},
	})
}

func serviceCIDRs() *ResourceInfo {
	return build[ServiceCIDR, *ServiceCIDR, ServiceCIDRList](ResourceInfo{
		Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs", Singular: "servicecidr", Kind: "ServiceCIDR", ListKind: "ServiceCIDRList",
		Subresources: []string{"status"},
	}, kindFuncs[*ServiceCIDR]{
		defaults:     DefaultServiceCIDR,
		create:       ValidateServiceCIDR,
		update:       ValidateServiceCIDRUpdate,
		statusUpdate: ValidateServiceCIDRStatusUpdate,
		resetStatus:  func(o *ServiceCIDR) { o.Status = ServiceCIDRStatus{} },
		keepStatus:   func(o, p *ServiceCIDR) { o.Status = p.Status },
		keepSpec:     func(o, p *ServiceCIDR) { o.Spec = p.Spec },
	})
}

func ipAddresses() *ResourceInfo {
	return build[IPAddress, *IPAddress, IPAddressList](ResourceInfo{
		Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses", Singular: "ipaddress", Kind: "IPAddress", ListKind: "IPAddressList",
	}, kindFuncs[*IPAddress]{
		defaults: DefaultIPAddress,
		create:   ValidateIPAddress,
		update:   ValidateIPAddressUpdate,
	})
}

func leases() *ResourceInfo {
	return build[Lease, *Lease, LeaseList](ResourceInfo{
		Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Singular: "lease", Kind: "Lease", ListKind: "LeaseList",
		Namespaced: true,
	}, kindFuncs[*Lease]{
		defaults: DefaultLease,
		create:   ValidateLease,
		update:   ValidateLeaseUpdate,
		fields: func(o *Lease, m map[string]string) {
			if o.Spec.HolderIdentity != nil {
				m["spec.holderIdentity"] = *o.Spec.HolderIdentity
			} else {
				m["spec.holderIdentity"] = ""
			}
		},
	})
}

func jobs() *ResourceInfo {
	return build[Job, *Job, JobList](ResourceInfo{
		Group: "batch", Version: "v1", Resource: "jobs", Singular: "job", Kind: "Job", ListKind: "JobList",
		Namespaced: true, Categories: []string{"all"}, Subresources: []string{"status"},
	}, kindFuncs[*Job]{
		defaults:      DefaultJob,
		create:        ValidateJob,
		update:        ValidateJobUpdate,
		statusUpdate:  ValidateJobStatusUpdate,
		prepareCreate: PrepareJobForCreate,
		keepStatus:    func(o, p *Job) { o.Status = p.Status },
		keepSpec:      func(o, p *Job) { o.Spec = p.Spec },
		specChanged:   func(o, p *Job) bool { return !semanticEqual(o.Spec, p.Spec) },
		fields: func(o *Job, m map[string]string) {
			m["status.successful"] = strconv.Itoa(int(o.Status.Succeeded))
		},
	})
}

func cronJobs() *ResourceInfo {
	return build[CronJob, *CronJob, CronJobList](ResourceInfo{
		Group: "batch", Version: "v1", Resource: "cronjobs", Singular: "cronjob", Kind: "CronJob", ListKind: "CronJobList",
		Namespaced: true, ShortNames: []string{"cj"}, Categories: []string{"all"}, Subresources: []string{"status"},
	}, kindFuncs[*CronJob]{
		defaults:     DefaultCronJob,
		create:       ValidateCronJob,
		update:       ValidateCronJobUpdate,
		statusUpdate: ValidateCronJobStatusUpdate,
		resetStatus:  func(o *CronJob) { o.Status = CronJobStatus{} },
		keepStatus:   func(o, p *CronJob) { o.Status = p.Status },
		keepSpec:     func(o, p *CronJob) { o.Spec = p.Spec },
		specChanged:  func(o, p *CronJob) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}

// ---- storage kinds (api/types_storage.go) ----

func persistentVolumes() *ResourceInfo {
	return build[PersistentVolume, *PersistentVolume, PersistentVolumeList](ResourceInfo{
		Version: "v1", Resource: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume", ListKind: "PersistentVolumeList",
		ShortNames: []string{"pv"}, Subresources: []string{"status"},
	}, kindFuncs[*PersistentVolume]{
		defaults:     DefaultPersistentVolume,
		create:       ValidatePersistentVolume,
		update:       ValidatePersistentVolumeUpdate,
		statusUpdate: ValidatePersistentVolumeStatusUpdate,
		resetStatus:  func(o *PersistentVolume) { o.Status = PersistentVolumeStatus{Phase: VolumePending} },
		keepStatus:   func(o, p *PersistentVolume) { o.Status = p.Status },
		keepSpec:     func(o, p *PersistentVolume) { o.Spec = p.Spec },
	})
}

func persistentVolumeClaims() *ResourceInfo {
	return build[PersistentVolumeClaim, *PersistentVolumeClaim, PersistentVolumeClaimList](ResourceInfo{
		Version: "v1", Resource: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", ListKind: "PersistentVolumeClaimList",
		Namespaced: true, ShortNames: []string{"pvc"}, Subresources: []string{"status"},
	}, kindFuncs[*PersistentVolumeClaim]{
		defaults:     DefaultPersistentVolumeClaim,
		create:       ValidatePersistentVolumeClaim,
		update:       ValidatePersistentVolumeClaimUpdate,
		statusUpdate: ValidatePersistentVolumeClaimStatusUpdate,
		resetStatus:  func(o *PersistentVolumeClaim) { o.Status = PersistentVolumeClaimStatus{Phase: ClaimPending} },
		keepStatus:   func(o, p *PersistentVolumeClaim) { o.Status = p.Status },
		keepSpec:     func(o, p *PersistentVolumeClaim) { o.Spec = p.Spec },
	})
}

func storageClasses() *ResourceInfo {
	return build[StorageClass, *StorageClass, StorageClassList](ResourceInfo{
		Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Singular: "storageclass", Kind: "StorageClass", ListKind: "StorageClassList",
		ShortNames: []string{"sc"},
	}, kindFuncs[*StorageClass]{
		defaults: DefaultStorageClass,
		create:   ValidateStorageClass,
		update:   ValidateStorageClassUpdate,
	})
}

func daemonSets() *ResourceInfo {
	return build[DaemonSet, *DaemonSet, DaemonSetList](ResourceInfo{
		Group: "apps", Version: "v1", Resource: "daemonsets", Singular: "daemonset", Kind: "DaemonSet", ListKind: "DaemonSetList",
		Namespaced: true, ShortNames: []string{"ds"}, Categories: []string{"all"}, Subresources: []string{"status"},
	}, kindFuncs[*DaemonSet]{
		defaults:     DefaultDaemonSet,
		create:       ValidateDaemonSet,
		update:       ValidateDaemonSetUpdate,
		statusUpdate: ValidateDaemonSetStatusUpdate,
		resetStatus:  func(o *DaemonSet) { o.Status = DaemonSetStatus{} },
		keepStatus:   func(o, p *DaemonSet) { o.Status = p.Status },
		keepSpec:     func(o, p *DaemonSet) { o.Spec = p.Spec },
		specChanged:  func(o, p *DaemonSet) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}

func podDisruptionBudgets() *ResourceInfo {
	return build[PodDisruptionBudget, *PodDisruptionBudget, PodDisruptionBudgetList](ResourceInfo{
		Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Singular: "poddisruptionbudget", Kind: "PodDisruptionBudget", ListKind: "PodDisruptionBudgetList",
		Namespaced: true, ShortNames: []string{"pdb"}, Subresources: []string{"status"},
	}, kindFuncs[*PodDisruptionBudget]{
		defaults:     DefaultPodDisruptionBudget,
		create:       ValidatePodDisruptionBudget,
		update:       ValidatePodDisruptionBudgetUpdate,
		statusUpdate: ValidatePodDisruptionBudgetStatusUpdate,
		resetStatus:  func(o *PodDisruptionBudget) { o.Status = PodDisruptionBudgetStatus{} },
		keepStatus:   func(o, p *PodDisruptionBudget) { o.Status = p.Status },
		keepSpec:     func(o, p *PodDisruptionBudget) { o.Spec = p.Spec },
		specChanged:  func(o, p *PodDisruptionBudget) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}
