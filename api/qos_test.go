package api

import "testing"

func TestPodQOSClass(t *testing.T) {
	res := func(req, lim ResourceList) Container {
		return Container{Name: "c", Resources: ResourceRequirements{Requests: req, Limits: lim}}
	}
	both := ResourceList{"cpu": "500m", "memory": "64Mi"}
	for _, tc := range []struct {
		name string
		spec PodSpec
		want string
	}{
		{"nothing", PodSpec{Containers: []Container{{Name: "c"}}}, PodQOSBestEffort},
		{"only other resources", PodSpec{Containers: []Container{res(ResourceList{"ephemeral-storage": "1Gi"}, nil)}}, PodQOSBestEffort},
		{"zero quantities", PodSpec{Containers: []Container{res(ResourceList{"cpu": "0"}, nil)}}, PodQOSBestEffort},
		{"limits equal requests", PodSpec{Containers: []Container{res(both, both)}}, PodQOSGuaranteed},
		{"limits only (requests default to them)", PodSpec{Containers: []Container{res(nil, both)}}, PodQOSGuaranteed},
		{"0.5 equals 500m", PodSpec{Containers: []Container{res(ResourceList{"cpu": "0.5", "memory": "64Mi"}, both)}}, PodQOSGuaranteed},
		{"request below limit", PodSpec{Containers: []Container{res(ResourceList{"cpu": "100m", "memory": "64Mi"}, both)}}, PodQOSBurstable},
		{"cpu limit only", PodSpec{Containers: []Container{res(nil, ResourceList{"cpu": "1"})}}, PodQOSBurstable},
		{"requests only", PodSpec{Containers: []Container{res(both, nil)}}, PodQOSBurstable},
		{"one guaranteed, one best effort", PodSpec{Containers: []Container{res(both, both), {Name: "d"}}}, PodQOSBurstable},
		{"init container counts", PodSpec{InitContainers: []Container{res(ResourceList{"memory": "1Mi"}, nil)}, Containers: []Container{{Name: "d"}}}, PodQOSBurstable},
	} {
		if got := PodQOSClass(&tc.spec); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
