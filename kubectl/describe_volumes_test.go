package kubectl

import (
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func TestDescribeProjectedAndDownwardAPIVolumes(t *testing.T) {
	exp := int64(3607)
	p := newPrefixWriter()
	describeVolumes(p, []api.Volume{
		{Name: "kube-api-access-abcde", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
			{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "kube-root-ca.crt"}}},
			{DownwardAPI: &api.DownwardAPIProjection{}},
		}}}},
		{Name: "info", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{Items: []api.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		}}}},
	}, 0)
	got := p.String()
	for _, want := range []string{
		"Type:                    Projected (a volume that contains injected data from multiple sources)\n",
		"TokenExpirationSeconds:  3607\n", "ConfigMapName:           kube-root-ca.crt\n", "ConfigMapOptional:       <nil>\n", "DownwardAPI:             true\n",
		"Type:  DownwardAPI (a volume populated by information about the pod)\n", "metadata.labels -> labels\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}
