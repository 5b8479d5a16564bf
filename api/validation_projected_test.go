package api

import "testing"

func TestValidateDownwardAPIAndProjectedVolumes(t *testing.T) {
	fr := func(p string) *ObjectFieldSelector { return &ObjectFieldSelector{FieldPath: p} }
	dv := func(items ...DownwardAPIVolumeFile) VolumeSource {
		return VolumeSource{DownwardAPI: &DownwardAPIVolumeSource{Items: items}}
	}
	pv := func(srcs ...VolumeProjection) VolumeSource {
		return VolumeSource{Projected: &ProjectedVolumeSource{Sources: srcs}}
	}
	tok := func(p string, exp int64) VolumeProjection {
		return VolumeProjection{ServiceAccountToken: &ServiceAccountTokenProjection{Path: p, ExpirationSeconds: ptrTo(exp)}}
	}
	tests := []struct {
		name string
		src  VolumeSource
		want []string
	}{
		{name: "valid downwardAPI", src: dv(
			DownwardAPIVolumeFile{Path: "labels", FieldRef: fr("metadata.labels")},
			DownwardAPIVolumeFile{Path: "app", FieldRef: fr("metadata.labels['app']"), Mode: ptrTo[int32](0o600)},
			DownwardAPIVolumeFile{Path: "cpu", ResourceFieldRef: &ResourceFieldSelector{ContainerName: "web", Resource: "limits.cpu"}},
		)},
		{name: "downwardAPI field not for volumes", src: dv(DownwardAPIVolumeFile{Path: "ip", FieldRef: fr("status.podIP")}),
			want: []string{"FieldValueNotSupported spec.volumes[0].downwardAPI.fieldRef.fieldPath"}},
		{name: "downwardAPI without path", src: dv(DownwardAPIVolumeFile{FieldRef: fr("metadata.name")}),
			want: []string{"FieldValueRequired spec.volumes[0].downwardAPI.path"}},
		{name: "downwardAPI absolute path", src: dv(DownwardAPIVolumeFile{Path: "/etc/x", FieldRef: fr("metadata.name")}),
			want: []string{"FieldValueInvalid spec.volumes[0].downwardAPI.path"}},
		{name: "downwardAPI backsteps", src: dv(DownwardAPIVolumeFile{Path: "a/../../x", FieldRef: fr("metadata.name")}),
			want: []string{"FieldValueInvalid spec.volumes[0].downwardAPI.path"}},
		{name: "downwardAPI neither ref", src: dv(DownwardAPIVolumeFile{Path: "x"}),
			want: []string{"FieldValueRequired spec.volumes[0].downwardAPI"}},
		{name: "downwardAPI both refs", src: dv(DownwardAPIVolumeFile{Path: "x", FieldRef: fr("metadata.name"),
			ResourceFieldRef: &ResourceFieldSelector{ContainerName: "web", Resource: "limits.cpu"}}),
			want: []string{"FieldValueInvalid spec.volumes[0].downwardAPI"}},
		{name: "downwardAPI resource without container", src: dv(DownwardAPIVolumeFile{Path: "x",
			ResourceFieldRef: &ResourceFieldSelector{Resource: "limits.cpu"}}),
			want: []string{"FieldValueRequired spec.volumes[0].downwardAPI.resourceFieldRef.containerName"}},
		{name: "downwardAPI bad mode", src: dv(DownwardAPIVolumeFile{Path: "x", FieldRef: fr("metadata.name"), Mode: ptrTo[int32](0o1000)}),
			want: []string{"FieldValueInvalid spec.volumes[0].downwardAPI.mode"}},
		{name: "downwardAPI bad defaultMode", src: VolumeSource{DownwardAPI: &DownwardAPIVolumeSource{DefaultMode: ptrTo[int32](-1)}},
			want: []string{"FieldValueInvalid spec.volumes[0].downwardAPI.defaultMode"}},

		{name: "valid projected", src: pv(
			tok("token", 3607),
			VolumeProjection{ConfigMap: &ConfigMapProjection{LocalObjectReference: LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			VolumeProjection{DownwardAPI: &DownwardAPIProjection{Items: []DownwardAPIVolumeFile{{Path: "namespace", FieldRef: fr("metadata.namespace")}}}},
			VolumeProjection{Secret: &SecretProjection{LocalObjectReference: LocalObjectReference{Name: "s"}}},
		)},
		{name: "token too short", src: pv(tok("token", 599)),
			want: []string{"FieldValueInvalid spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds"}},
		{name: "token too long", src: pv(tok("token", 1<<32+1)),
			want: []string{"FieldValueInvalid spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds"}},
		{name: "token without path", src: pv(tok("", 600)),
			want: []string{"FieldValueRequired spec.volumes[0].projected.path"}},
		{name: "token absolute path", src: pv(tok("/token", 600)),
			want: []string{"FieldValueInvalid spec.volumes[0].projected.path"}},
		{name: "duplicate paths", src: pv(tok("x", 600),
			VolumeProjection{ConfigMap: &ConfigMapProjection{LocalObjectReference: LocalObjectReference{Name: "c"}, Items: []KeyToPath{{Key: "k", Path: "x"}}}}),
			want: []string{"FieldValueInvalid spec.volumes[0].projected"}},
		{name: "two kinds in a source", src: pv(VolumeProjection{
			Secret:    &SecretProjection{LocalObjectReference: LocalObjectReference{Name: "s"}},
			ConfigMap: &ConfigMapProjection{LocalObjectReference: LocalObjectReference{Name: "c"}}}),
			want: []string{"FieldValueForbidden spec.volumes[0].projected.sources[0]"}},
		{name: "secret source without name", src: pv(VolumeProjection{Secret: &SecretProjection{}}),
			want: []string{"FieldValueRequired spec.volumes[0].projected.sources[0].secret.name"}},
		{name: "configMap source bad item", src: pv(VolumeProjection{ConfigMap: &ConfigMapProjection{LocalObjectReference: LocalObjectReference{Name: "c"},
			Items: []KeyToPath{{Key: "k", Path: "/x"}}}}),
			want: []string{"FieldValueInvalid spec.volumes[0].projected.sources[0].configMap.items[0].path"}},
		{name: "downwardAPI source bad field", src: pv(VolumeProjection{DownwardAPI: &DownwardAPIProjection{Items: []DownwardAPIVolumeFile{{Path: "n", FieldRef: fr("spec.nodeName")}}}}),
			want: []string{"FieldValueNotSupported spec.volumes[0].projected.sources[0].downwardAPI.fieldRef.fieldPath"}},
		{name: "projected and configMap", src: VolumeSource{Projected: &ProjectedVolumeSource{}, ConfigMap: &ConfigMapVolumeSource{LocalObjectReference: LocalObjectReference{Name: "c"}}},
			want: []string{"FieldValueForbidden spec.volumes[0].projected"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPod()
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: tt.src}}
			DefaultPod(p)
			checkErrs(t, ValidatePod(p), tt.want...)
		})
	}
}

func TestDefaultProjectedAndDownwardAPI(t *testing.T) {
	p := validPod()
	p.Spec.Volumes = []Volume{
		{Name: "d", VolumeSource: VolumeSource{DownwardAPI: &DownwardAPIVolumeSource{Items: []DownwardAPIVolumeFile{{Path: "n", FieldRef: &ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
		{Name: "p", VolumeSource: VolumeSource{Projected: &ProjectedVolumeSource{Sources: []VolumeProjection{
			{ServiceAccountToken: &ServiceAccountTokenProjection{Path: "token"}},
			{DownwardAPI: &DownwardAPIProjection{Items: []DownwardAPIVolumeFile{{Path: "ns", FieldRef: &ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
		}}}},
	}
	DefaultPod(p)
	d, pr := p.Spec.Volumes[0].DownwardAPI, p.Spec.Volumes[1].Projected
	if *d.DefaultMode != 0o644 || d.Items[0].FieldRef.APIVersion != "v1" {
		t.Errorf("downwardAPI defaults: mode %o apiVersion %q", *d.DefaultMode, d.Items[0].FieldRef.APIVersion)
	}
	if *pr.DefaultMode != 0o644 || *pr.Sources[0].ServiceAccountToken.ExpirationSeconds != 3600 || pr.Sources[1].DownwardAPI.Items[0].FieldRef.APIVersion != "v1" {
		t.Errorf("projected defaults: %+v", pr)
	}
}
