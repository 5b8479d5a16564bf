package api

import (
	"strings"
	"testing"
)

func validPV() *PersistentVolume {
	pv := &PersistentVolume{
		ObjectMeta: ObjectMeta{Name: "pv-1", Labels: map[string]string{"volume": "pv-1"}},
		Spec: PersistentVolumeSpec{
			Capacity:               ResourceList{"storage": "10Gi"},
			AccessModes:            []string{ReadWriteOnce},
			PersistentVolumeSource: PersistentVolumeSource{HostPath: &HostPathVolumeSource{Path: "/var/lib/skiff/storage/pv-1"}},
			StorageClassName:       "local-path",
			NodeAffinity: &VolumeNodeAffinity{Required: &NodeSelector{NodeSelectorTerms: []NodeSelectorTerm{{
				MatchExpressions: []NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: NodeSelectorOpIn, Values: []string{"node-a"}}},
			}}}},
		},
	}
	DefaultPersistentVolume(pv)
	return pv
}

func validPVC() *PersistentVolumeClaim {
	c := &PersistentVolumeClaim{
		ObjectMeta: ObjectMeta{Name: "data", Namespace: "default"},
		Spec: PersistentVolumeClaimSpec{
			AccessModes: []string{ReadWriteOnce},
			Resources:   VolumeResourceRequirements{Requests: ResourceList{"storage": "1Gi"}},
		},
	}
	DefaultPersistentVolumeClaim(c)
	return c
}

func validStorageClass() *StorageClass {
	sc := &StorageClass{
		ObjectMeta:  ObjectMeta{Name: "local-path", Annotations: map[string]string{AnnIsDefaultStorageClass: "true"}},
		Provisioner: "skiff.dev/local-path",
		Parameters:  map[string]string{"type": "pd-ssd"},
	}
	DefaultStorageClass(sc)
	return sc
}

func TestValidatePersistentVolume(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PersistentVolume)
		want   []string
	}{
		{name: "valid", mutate: func(*PersistentVolume) {}},
		{name: "nfs with mount options", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.NodeAffinity = nil, nil
			pv.Spec.NFS = &NFSVolumeSource{Server: "192.168.0.10", Path: "/volume1/x"}
			pv.Spec.MountOptions = []string{"hard", "nfsvers=3"}
		}},
		{name: "csi", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.CSI = &CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}
		}},
		{name: "no access modes", mutate: func(pv *PersistentVolume) { pv.Spec.AccessModes = nil },
			want: []string{"FieldValueRequired spec.accessModes"}},
		{name: "unknown access mode", mutate: func(pv *PersistentVolume) { pv.Spec.AccessModes = []string{"ReadWriteAll"} },
			want: []string{"FieldValueNotSupported spec.accessModes"}},
		{name: "ReadWriteOncePod with another", mutate: func(pv *PersistentVolume) {
			pv.Spec.AccessModes = []string{ReadWriteOncePod, ReadOnlyMany}
		}, want: []string{"FieldValueForbidden spec.accessModes"}},
		{name: "no capacity", mutate: func(pv *PersistentVolume) { pv.Spec.Capacity = nil },
			want: []string{"FieldValueRequired spec.capacity", "FieldValueNotSupported spec.capacity"}},
		{name: "capacity of cpu", mutate: func(pv *PersistentVolume) { pv.Spec.Capacity["cpu"] = "1" },
			want: []string{"FieldValueNotSupported spec.capacity"}},
		{name: "zero capacity", mutate: func(pv *PersistentVolume) { pv.Spec.Capacity["storage"] = "0" },
			want: []string{"FieldValueInvalid spec.capacity[storage]"}},
		{name: "bad class name", mutate: func(pv *PersistentVolume) { pv.Spec.StorageClassName = "Fast_SSD" },
			want: []string{"FieldValueInvalid spec.storageClassName"}},
		{name: "bad volume mode", mutate: func(pv *PersistentVolume) { pv.Spec.VolumeMode = ptrTo("Raw") },
			want: []string{"FieldValueNotSupported spec.volumeMode"}},
		{name: "bad reclaim policy", mutate: func(pv *PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Keep" },
			want: []string{"FieldValueNotSupported spec.persistentVolumeReclaimPolicy"}},
		{name: "recycle of /", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath.Path = "/"
			pv.Spec.PersistentVolumeReclaimPolicy = PersistentVolumeReclaimRecycle
		}, want: []string{"FieldValueForbidden spec.persistentVolumeReclaimPolicy"}},
		{name: "no source", mutate: func(pv *PersistentVolume) { pv.Spec.HostPath = nil },
			want: []string{"FieldValueRequired spec"}},
		{name: "two sources", mutate: func(pv *PersistentVolume) {
			pv.Spec.NFS = &NFSVolumeSource{Server: "s", Path: "/x"}
		}, want: []string{"FieldValueForbidden spec.nfs"}},
		{name: "hostPath without path", mutate: func(pv *PersistentVolume) { pv.Spec.HostPath.Path = "" },
			want: []string{"FieldValueRequired spec.hostPath.path"}},
		{name: "hostPath with ..", mutate: func(pv *PersistentVolume) { pv.Spec.HostPath.Path = "/a/../b" },
			want: []string{"FieldValueInvalid spec.hostPath.path"}},
		{name: "nfs relative path and no server", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.NFS = &NFSVolumeSource{Path: "export"}
		}, want: []string{"FieldValueRequired spec.nfs.server", "FieldValueInvalid spec.nfs.path"}},
		{name: "local needs node affinity", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.NodeAffinity = nil, nil
			pv.Spec.Local = &LocalVolumeSource{Path: "/mnt/disk"}
		}, want: []string{"FieldValueRequired spec.nodeAffinity"}},
		{name: "local with node affinity", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.Local = &LocalVolumeSource{Path: "/mnt/disk"}
		}},
		{name: "csi without driver and handle", mutate: func(pv *PersistentVolume) {
			pv.Spec.HostPath = nil
			pv.Spec.CSI = &CSIPersistentVolumeSource{}
		}, want: []string{"FieldValueRequired spec.csi.driver", "FieldValueRequired spec.csi.volumeHandle"}},
		{name: "node affinity without required", mutate: func(pv *PersistentVolume) { pv.Spec.NodeAffinity.Required = nil },
			want: []string{"FieldValueRequired spec.nodeAffinity.required"}},
		{name: "node affinity without terms", mutate: func(pv *PersistentVolume) { pv.Spec.NodeAffinity.Required.NodeSelectorTerms = nil },
			want: []string{"FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms"}},
		{name: "node selector In without values, bad key", mutate: func(pv *PersistentVolume) {
			pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0] = NodeSelectorRequirement{Key: "bad key", Operator: "In"}
		}, want: []string{
			"FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values",
			"FieldValueInvalid spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key",
		}},
		{name: "node selector Gt with two values", mutate: func(pv *PersistentVolume) {
			pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0] = NodeSelectorRequirement{Key: "k", Operator: "Gt", Values: []string{"1", "2"}}
		}, want: []string{"FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values"}},
		{name: "node selector bad operator", mutate: func(pv *PersistentVolume) {
			pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Operator = "Near"
		}, want: []string{"FieldValueInvalid spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator"}},
		{name: "node field selector on labels", mutate: func(pv *PersistentVolume) {
			pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchFields = []NodeSelectorRequirement{{Key: "metadata.labels", Operator: "In", Values: []string{"a", "b"}}}
		}, want: []string{
			"FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].values",
			"FieldValueInvalid spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key",
		}},
		{name: "claimRef without name", mutate: func(pv *PersistentVolume) { pv.Spec.ClaimRef = &ObjectReference{Namespace: "default"} },
			want: []string{"FieldValueRequired spec.claimRef.name"}},
		{name: "namespaced", mutate: func(pv *PersistentVolume) { pv.Namespace = "default" },
			want: []string{"FieldValueForbidden metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv := validPV()
			tt.mutate(pv)
			checkErrs(t, ValidatePersistentVolume(pv), tt.want...)
		})
	}
	t.Run("messages", func(t *testing.T) {
		pv := validPV()
		pv.Spec.AccessModes = []string{"RWO"}
		pv.Spec.HostPath, pv.Spec.NodeAffinity = nil, nil
		pv.Spec.Local = &LocalVolumeSource{Path: "/d"}
		got := ValidatePersistentVolume(pv).Error()
		for _, want := range []string{
			`spec.accessModes: Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
			`spec.nodeAffinity: Required value: Local volume requires node affinity`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%q lacks %q", got, want)
			}
		}
	})
}

func TestValidatePersistentVolumeUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PersistentVolume)
		want   []string
	}{
		{name: "claimRef, capacity and class may change", mutate: func(pv *PersistentVolume) {
			pv.Spec.ClaimRef = &ObjectReference{Namespace: "default", Name: "data", UID: "u"}
			pv.Spec.Capacity["storage"] = "20Gi"
			pv.Spec.PersistentVolumeReclaimPolicy = PersistentVolumeReclaimDelete
		}},
		{name: "source is immutable", mutate: func(pv *PersistentVolume) { pv.Spec.HostPath.Path = "/elsewhere" },
			want: []string{"FieldValueForbidden spec.persistentvolumesource"}},
		{name: "volume mode is immutable", mutate: func(pv *PersistentVolume) { pv.Spec.VolumeMode = ptrTo(PersistentVolumeBlock) },
			want: []string{"FieldValueInvalid volumeMode"}},
		{name: "node affinity is immutable once set", mutate: func(pv *PersistentVolume) {
			pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"node-b"}
		}, want: []string{"FieldValueInvalid nodeAffinity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validPV()
			old.ResourceVersion = "3"
			pv := validPV()
			pv.ResourceVersion = "3"
			tt.mutate(pv)
			checkErrs(t, ValidatePersistentVolumeUpdate(pv, old), tt.want...)
		})
	}
}

func TestValidatePersistentVolumeClaim(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PersistentVolumeClaim)
		want   []string
	}{
		{name: "valid", mutate: func(*PersistentVolumeClaim) {}},
		{name: "selector, class, volumeName, pvc data source", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"volume": "pv-1"}}
			c.Spec.StorageClassName = ptrTo("nfs")
			c.Spec.VolumeName = "pv-1"
			c.Spec.DataSource = &TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}
		}},
		{name: "empty class name is allowed", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("") }},
		{name: "no access modes", mutate: func(c *PersistentVolumeClaim) { c.Spec.AccessModes = nil },
			want: []string{"FieldValueRequired spec.accessModes"}},
		{name: "no storage request", mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests = nil },
			want: []string{"FieldValueRequired spec.resources[storage]"}},
		{name: "zero storage request", mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests["storage"] = "0" },
			want: []string{"FieldValueInvalid spec.resources[storage]"}},
		{name: "bad selector", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.Selector = &LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "k", Operator: "In"}}}
		}, want: []string{"FieldValueRequired spec.selector.matchExpressions[0].values"}},
		{name: "bad class", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("a b") },
			want: []string{"FieldValueInvalid spec.storageClassName"}},
		{name: "bad volume mode", mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeMode = ptrTo("x") },
			want: []string{"FieldValueNotSupported spec.volumeMode"}},
		{name: "core data source of another kind", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.DataSource = &TypedLocalObjectReference{Kind: "Pod", Name: "p"}
		}, want: []string{"FieldValueInvalid spec.dataSource"}},
		{name: "data source without name", mutate: func(c *PersistentVolumeClaim) {
			c.Spec.DataSource = &TypedLocalObjectReference{APIGroup: ptrTo("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot"}
		}, want: []string{"FieldValueRequired spec.dataSource.name"}},
		{name: "cluster-scoped", mutate: func(c *PersistentVolumeClaim) { c.Namespace = "" },
			want: []string{"FieldValueRequired metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validPVC()
			tt.mutate(c)
			checkErrs(t, ValidatePersistentVolumeClaim(c), tt.want...)
		})
	}
	t.Run("message", func(t *testing.T) {
		c := validPVC()
		c.Spec.AccessModes = nil
		if got, want := ValidatePersistentVolumeClaim(c).Error(), "spec.accessModes: Required value: at least 1 access mode is required"; !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	})
}

func TestValidatePersistentVolumeClaimUpdate(t *testing.T) {
	tests := []struct {
		name   string
		bound  bool
		old    func(*PersistentVolumeClaim)
		mutate func(*PersistentVolumeClaim)
		want   []string
	}{
		{name: "volumeName set once", mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeName = "pv-1" }},
		{name: "volumeName changed", old: func(c *PersistentVolumeClaim) { c.Spec.VolumeName = "pv-1" },
			mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeName = "pv-2" }, want: []string{"FieldValueForbidden spec"}},
		{name: "class set from unset", mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("local-path") }},
		{name: "class changed", old: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("a") },
			mutate: func(c *PersistentVolumeClaim) { c.Spec.StorageClassName = ptrTo("b") }, want: []string{"FieldValueForbidden spec"}},
		{name: "bound claim grows", bound: true, mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests["storage"] = "2Gi" }},
		{name: "pending claim may not grow", mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests["storage"] = "2Gi" },
			want: []string{"FieldValueForbidden spec"}},
		{name: "bound claim may not shrink", bound: true, mutate: func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests["storage"] = "512Mi" },
			want: []string{"FieldValueForbidden spec.resources.requests.storage"}},
		{name: "access modes immutable", bound: true, mutate: func(c *PersistentVolumeClaim) { c.Spec.AccessModes = []string{ReadWriteMany} },
			want: []string{"FieldValueForbidden spec"}},
		{name: "volume mode immutable", mutate: func(c *PersistentVolumeClaim) { c.Spec.VolumeMode = ptrTo(PersistentVolumeBlock) },
			want: []string{"FieldValueForbidden spec", "FieldValueInvalid volumeMode"}},
		{name: "beta class annotation immutable", old: func(c *PersistentVolumeClaim) { c.Annotations = map[string]string{AnnBetaStorageClass: "fast"} },
			mutate: func(c *PersistentVolumeClaim) { c.Annotations = map[string]string{AnnBetaStorageClass: "slow"} },
			want:   []string{"FieldValueInvalid metadata.annotations[volume.beta.kubernetes.io/storage-class]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validPVC()
			old.ResourceVersion = "3"
			if tt.old != nil {
				tt.old(old)
			}
			if tt.bound {
				old.Status.Phase = ClaimBound
			}
			c := DeepCopy(old)
			tt.mutate(c)
			checkErrs(t, ValidatePersistentVolumeClaimUpdate(c, old), tt.want...)
		})
	}
}

func TestValidateStorageClass(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*StorageClass)
		want   []string
	}{
		{name: "valid", mutate: func(*StorageClass) {}},
		{name: "no provisioner", mutate: func(sc *StorageClass) { sc.Provisioner = "" },
			want: []string{"FieldValueRequired provisioner"}},
		{name: "bad provisioner", mutate: func(sc *StorageClass) { sc.Provisioner = "a b" },
			want: []string{"FieldValueInvalid provisioner"}},
		{name: "recycle is not a class policy", mutate: func(sc *StorageClass) { sc.ReclaimPolicy = ptrTo(PersistentVolumeReclaimRecycle) },
			want: []string{"FieldValueNotSupported reclaimPolicy"}},
		{name: "no binding mode", mutate: func(sc *StorageClass) { sc.VolumeBindingMode = nil },
			want: []string{"FieldValueRequired volumeBindingMode"}},
		{name: "bad binding mode", mutate: func(sc *StorageClass) { sc.VolumeBindingMode = ptrTo("Later") },
			want: []string{"FieldValueNotSupported volumeBindingMode"}},
		{name: "empty parameter key", mutate: func(sc *StorageClass) { sc.Parameters[""] = "x" },
			want: []string{"FieldValueInvalid parameters"}},
		{name: "topology without values", mutate: func(sc *StorageClass) {
			sc.AllowedTopologies = []TopologySelectorTerm{{MatchLabelExpressions: []TopologySelectorLabelRequirement{{Key: "zone"}}}}
		}, want: []string{"FieldValueRequired allowedTopologies[0].matchLabelExpressions[0].values"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := validStorageClass()
			tt.mutate(sc)
			checkErrs(t, ValidateStorageClass(sc), tt.want...)
		})
	}
}

func TestValidateStorageClassUpdate(t *testing.T) {
	old := validStorageClass()
	old.ResourceVersion = "1"
	for _, tt := range []struct {
		name   string
		mutate func(*StorageClass)
		want   []string
	}{
		{name: "annotations may change", mutate: func(sc *StorageClass) { sc.Annotations = nil }},
		{name: "expansion may change", mutate: func(sc *StorageClass) { sc.AllowVolumeExpansion = ptrTo(true) }},
		{name: "parameters", mutate: func(sc *StorageClass) { sc.Parameters = nil }, want: []string{"FieldValueForbidden parameters"}},
		{name: "provisioner", mutate: func(sc *StorageClass) { sc.Provisioner = "x.io/y" }, want: []string{"FieldValueForbidden provisioner"}},
		{name: "reclaim policy", mutate: func(sc *StorageClass) { sc.ReclaimPolicy = ptrTo("Retain") }, want: []string{"FieldValueForbidden reclaimPolicy"}},
		{name: "binding mode", mutate: func(sc *StorageClass) { sc.VolumeBindingMode = ptrTo(VolumeBindingWaitForFirstConsumer) },
			want: []string{"FieldValueInvalid volumeBindingMode"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := DeepCopy(old)
			tt.mutate(sc)
			checkErrs(t, ValidateStorageClassUpdate(sc, old), tt.want...)
		})
	}
}

func TestValidatePodClaimAndNFSVolumes(t *testing.T) {
	for _, tt := range []struct {
		name string
		vol  VolumeSource
		want []string
	}{
		{name: "claim", vol: VolumeSource{PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: true}}},
		{name: "claim without name", vol: VolumeSource{PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{}},
			want: []string{"FieldValueRequired spec.volumes[0].persistentVolumeClaim.claimName"}},
		{name: "nfs", vol: VolumeSource{NFS: &NFSVolumeSource{Server: "10.0.0.1", Path: "/export"}}},
		{name: "nfs relative", vol: VolumeSource{NFS: &NFSVolumeSource{Server: "10.0.0.1", Path: "export"}},
			want: []string{"FieldValueInvalid spec.volumes[0].nfs.path"}},
		{name: "claim and nfs", vol: VolumeSource{
			PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{ClaimName: "data"},
			NFS:                   &NFSVolumeSource{Server: "10.0.0.1", Path: "/export"},
		}, want: []string{"FieldValueForbidden spec.volumes[0].nfs"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := validPod()
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: tt.vol}}
			checkErrs(t, ValidatePod(p), tt.want...)
		})
	}
}

func TestValidateStatefulSetClaims(t *testing.T) {
	withClaims := func(s *StatefulSet) {
		s.Spec.VolumeClaimTemplates = []PersistentVolumeClaim{*validPVC()}
		s.Spec.VolumeClaimTemplates[0].Namespace = ""
		s.Spec.Template.Spec.Containers[0].VolumeMounts = []VolumeMount{{Name: "data", MountPath: "/data"}}
	}
	for _, tt := range []struct {
		name   string
		mutate func(*StatefulSet)
		want   []string
	}{
		{name: "mounts a claim template", mutate: withClaims},
		{name: "mount of nothing", mutate: func(s *StatefulSet) {
			s.Spec.Template.Spec.Containers[0].VolumeMounts = []VolumeMount{{Name: "data", MountPath: "/data"}}
		}, want: []string{"FieldValueNotFound spec.template.spec.containers[0].volumeMounts[0].name"}},
		{name: "template without storage request", mutate: func(s *StatefulSet) {
			withClaims(s)
			s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests = nil
		}, want: []string{"FieldValueRequired spec.volumeClaimTemplates[0].spec.resources[storage]"}},
		{name: "duplicate template", mutate: func(s *StatefulSet) {
			withClaims(s)
			s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, s.Spec.VolumeClaimTemplates[0])
		}, want: []string{"FieldValueDuplicate spec.volumeClaimTemplates[1].metadata.name"}},
		{name: "bad retention policy", mutate: func(s *StatefulSet) {
			s.Spec.PersistentVolumeClaimRetentionPolicy = &StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Keep", WhenScaled: "Delete"}
		}, want: []string{"FieldValueNotSupported spec.persistentVolumeClaimRetentionPolicy.whenDeleted"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := validStatefulSet()
			tt.mutate(s)
			checkErrs(t, ValidateStatefulSet(s), tt.want...)
		})
	}
	t.Run("templates immutable, retention policy mutable", func(t *testing.T) {
		old := validStatefulSet()
		withClaims(old)
		old.ResourceVersion = "1"
		s := DeepCopy(old)
		s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = DeletePersistentVolumeClaimRetentionPolicyType
		checkErrs(t, ValidateStatefulSetUpdate(s, old))
		s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"] = "5Gi"
		checkErrs(t, ValidateStatefulSetUpdate(s, old), "FieldValueForbidden spec")
	})
}
