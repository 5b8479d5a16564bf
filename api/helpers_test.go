package api

import "testing"

func TestScaleHelpers(t *testing.T) {
	d := validDeployment()
	d.Spec.Replicas = ptrTo[int32](3)
	d.Status.Replicas = 2
	d.ResourceVersion = "42"
	s, ok := ScaleOf(d)
	if !ok || s.Spec.Replicas != 3 || s.Status.Replicas != 2 || s.Status.Selector != "app=web" || s.ResourceVersion != "42" || s.Kind != "Scale" {
		t.Fatalf("ScaleOf(deployment) = %+v, %v", s, ok)
	}
	ss := validStatefulSet()
	if s, ok := ScaleOf(ss); !ok || s.Spec.Replicas != 1 || s.Status.Selector != "app=db" {
		t.Fatalf("ScaleOf(statefulset) = %+v, %v", s, ok)
	}
	if _, ok := ScaleOf(validPod()); ok {
		t.Fatal("ScaleOf(pod) ok")
	}
	if !SetReplicas(d, 7) || *d.Spec.Replicas != 7 || !SetReplicas(ss, 0) || *ss.Spec.Replicas != 0 || SetReplicas(validService(), 1) {
		t.Fatal("SetReplicas")
	}
}

func TestPodHelpers(t *testing.T) {
	p := validPod()
	if IsPodReady(p) {
		t.Fatal("ready without conditions")
	}
	p.Status.Conditions = []PodCondition{{Type: PodScheduled, Status: ConditionTrue}, {Type: PodReady, Status: ConditionFalse}}
	if IsPodReady(p) {
		t.Fatal("ready with Ready=False")
	}
	GetPodCondition(&p.Status, PodReady).Status = ConditionTrue
	if !IsPodReady(p) {
		t.Fatal("not ready with Ready=True")
	}
	if ControllerRef(&p.ObjectMeta) != nil {
		t.Fatal("controller ref without owners")
	}
	p.OwnerReferences = []OwnerReference{{Kind: "Node", Name: "n"}, {Kind: "ReplicaSet", Name: "rs", Controller: ptrTo(true)}}
	if r := ControllerRef(&p.ObjectMeta); r == nil || r.Name != "rs" {
		t.Fatalf("ControllerRef = %+v", r)
	}
}
