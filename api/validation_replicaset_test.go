package api

import (
	"testing"
)

func validReplicaSet() *ReplicaSet {
	rs := &ReplicaSet{
		ObjectMeta: ObjectMeta{Name: "frontend", Namespace: "default"},
		Spec: ReplicaSetSpec{
			Selector: &LabelSelector{MatchLabels: map[string]string{"tier": "frontend"}},
			Template: PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: map[string]string{"tier": "frontend"}},
				Spec:       validPodSpec(),
			},
		},
	}
	DefaultReplicaSet(rs)
	return rs
}

func validReplicationController() *ReplicationController {
	rc := &ReplicationController{
		ObjectMeta: ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: ReplicationControllerSpec{
			Template: &PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec:       validPodSpec(),
			},
		},
	}
	DefaultReplicationController(rc)
	return rc
}

func TestDefaultReplicaSet(t *testing.T) {
	rs := &ReplicaSet{Spec: ReplicaSetSpec{Template: PodTemplateSpec{ObjectMeta: ObjectMeta{Labels: map[string]string{"a": "b"}}}}}
	DefaultReplicaSet(rs)
	if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 1 {
		t.Fatalf("replicas %v", rs.Spec.Replicas)
	}
	if rs.Spec.Selector != nil || rs.Labels != nil {
		t.Fatalf("apps/v1 does not default selector or labels: %v %v", rs.Spec.Selector, rs.Labels)
	}
	if rs.Spec.Template.Spec.RestartPolicy != RestartPolicyAlways {
		t.Fatalf("template not defaulted: %q", rs.Spec.Template.Spec.RestartPolicy)
	}
}

func TestDefaultReplicationController(t *testing.T) {
	tests := []struct {
		name                string
		rc                  ReplicationController
		wantSel, wantLabels map[string]string
		wantReplicas        int32
	}{
		{name: "selector and labels from template",
			rc:      ReplicationController{Spec: ReplicationControllerSpec{Template: &PodTemplateSpec{ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "x"}}}}},
			wantSel: map[string]string{"app": "x"}, wantLabels: map[string]string{"app": "x"}, wantReplicas: 1},
		{name: "own selector and labels kept",
			rc: ReplicationController{ObjectMeta: ObjectMeta{Labels: map[string]string{"own": "l"}}, Spec: ReplicationControllerSpec{
				Replicas: ptrTo[int32](0), Selector: map[string]string{"app": "x"},
				Template: &PodTemplateSpec{ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "x", "v": "1"}}}}},
			wantSel: map[string]string{"app": "x"}, wantLabels: map[string]string{"own": "l"}, wantReplicas: 0},
		{name: "no template", rc: ReplicationController{}, wantReplicas: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := tt.rc
			DefaultReplicationController(&rc)
			if !semanticEqual(rc.Spec.Selector, tt.wantSel) || !semanticEqual(rc.Labels, tt.wantLabels) || *rc.Spec.Replicas != tt.wantReplicas {
				t.Fatalf("selector %v labels %v replicas %d", rc.Spec.Selector, rc.Labels, *rc.Spec.Replicas)
			}
		})
	}
}

func TestValidateReplicaSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ReplicaSet)
		want   []string
	}{
		{name: "valid", mutate: func(*ReplicaSet) {}},
		{name: "valid zero replicas", mutate: func(rs *ReplicaSet) { rs.Spec.Replicas = ptrTo[int32](0) }},
		{name: "valid matchExpressions", mutate: func(rs *ReplicaSet) {
			rs.Spec.Selector = &LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: LabelSelectorOpIn, Values: []string{"frontend"}}}}
		}},
		{name: "bad name", mutate: func(rs *ReplicaSet) { rs.Name = "Front_End" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "negative replicas", mutate: func(rs *ReplicaSet) { rs.Spec.Replicas = ptrTo[int32](-1) },
			want: []string{"FieldValueInvalid spec.replicas"}},
		{name: "negative minReadySeconds", mutate: func(rs *ReplicaSet) { rs.Spec.MinReadySeconds = -1 },
			want: []string{"FieldValueInvalid spec.minReadySeconds"}},
		{name: "missing selector", mutate: func(rs *ReplicaSet) { rs.Spec.Selector = nil },
			want: []string{"FieldValueRequired spec.selector"}},
		{name: "empty selector", mutate: func(rs *ReplicaSet) { rs.Spec.Selector = &LabelSelector{} },
			want: []string{"FieldValueInvalid spec.selector"}},
		{name: "selector does not match template", mutate: func(rs *ReplicaSet) {
			rs.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"tier": "backend"}}
		}, want: []string{"FieldValueInvalid spec.template.metadata.labels"}},
		{name: "template restartPolicy OnFailure", mutate: func(rs *ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = RestartPolicyOnFailure },
			want: []string{"FieldValueNotSupported spec.template.spec.restartPolicy"}},
		{name: "template activeDeadlineSeconds", mutate: func(rs *ReplicaSet) { rs.Spec.Template.Spec.ActiveDeadlineSeconds = ptrTo[int64](5) },
			want: []string{"FieldValueForbidden spec.template.spec.activeDeadlineSeconds"}},
		{name: "bad template container", mutate: func(rs *ReplicaSet) { rs.Spec.Template.Spec.Containers[0].Name = "" },
			want: []string{"FieldValueRequired spec.template.spec.containers[0].name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := validReplicaSet()
			tt.mutate(rs)
			checkErrs(t, ValidateReplicaSet(rs), tt.want...)
		})
	}
}

func TestValidateReplicaSetUpdate(t *testing.T) {
	old := validReplicaSet()
	old.ResourceVersion, old.UID = "5", "u1"
	rs := validReplicaSet()
	rs.ResourceVersion, rs.UID = "5", "u1"
	rs.Spec.Replicas = ptrTo[int32](7)
	checkErrs(t, ValidateReplicaSetUpdate(rs, old))
	rs.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"tier": "frontend", "v": "2"}}
	rs.Spec.Template.Labels["v"] = "2"
	checkErrs(t, ValidateReplicaSetUpdate(rs, old), "FieldValueInvalid spec.selector")
}

func TestValidateReplicaSetStatusUpdate(t *testing.T) {
	tests := []struct {
		name string
		st   ReplicaSetStatus
		want []string
	}{
		{name: "valid", st: ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 2}},
		{name: "negative", st: ReplicaSetStatus{ReadyReplicas: -1, TerminatingReplicas: ptrTo[int32](-1)},
			want: []string{"FieldValueInvalid status.readyReplicas", "FieldValueInvalid status.availableReplicas", "FieldValueInvalid status.terminatingReplicas"}},
		{name: "above replicas", st: ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
			want: []string{"FieldValueInvalid status.fullyLabeledReplicas", "FieldValueInvalid status.readyReplicas", "FieldValueInvalid status.availableReplicas"}},
		{name: "available above ready", st: ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 2},
			want: []string{"FieldValueInvalid status.availableReplicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validReplicaSet()
			rs := validReplicaSet()
			rs.Status = tt.st
			checkErrs(t, ValidateReplicaSetStatusUpdate(rs, old), tt.want...)
		})
	}
}

func TestValidateReplicationController(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ReplicationController)
		want   []string
	}{
		{name: "valid", mutate: func(*ReplicationController) {}},
		{name: "valid selector subset of labels", mutate: func(rc *ReplicationController) {
			rc.Spec.Template.Labels["version"] = "v1"
		}},
		{name: "negative replicas", mutate: func(rc *ReplicationController) { rc.Spec.Replicas = ptrTo[int32](-2) },
			want: []string{"FieldValueInvalid spec.replicas"}},
		{name: "negative minReadySeconds", mutate: func(rc *ReplicationController) { rc.Spec.MinReadySeconds = -1 },
			want: []string{"FieldValueInvalid spec.minReadySeconds"}},
		{name: "empty selector", mutate: func(rc *ReplicationController) { rc.Spec.Selector = nil },
			want: []string{"FieldValueRequired spec.selector"}},
		{name: "bad selector value", mutate: func(rc *ReplicationController) { rc.Spec.Selector = map[string]string{"app": "-x"} },
			want: []string{"FieldValueInvalid spec.selector[app]", "FieldValueInvalid spec.template.metadata.labels"}},
		{name: "selector does not match template", mutate: func(rc *ReplicationController) { rc.Spec.Selector = map[string]string{"app": "web"} },
			want: []string{"FieldValueInvalid spec.template.metadata.labels"}},
		{name: "missing template", mutate: func(rc *ReplicationController) { rc.Spec.Template = nil },
			want: []string{"FieldValueRequired spec.template"}},
		{name: "template restartPolicy Never", mutate: func(rc *ReplicationController) { rc.Spec.Template.Spec.RestartPolicy = RestartPolicyNever },
			want: []string{"FieldValueNotSupported spec.template.spec.restartPolicy"}},
		{name: "template activeDeadlineSeconds", mutate: func(rc *ReplicationController) { rc.Spec.Template.Spec.ActiveDeadlineSeconds = ptrTo[int64](5) },
			want: []string{"FieldValueForbidden spec.template.spec.activeDeadlineSeconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := validReplicationController()
			tt.mutate(rc)
			checkErrs(t, ValidateReplicationController(rc), tt.want...)
		})
	}
}

func TestValidateReplicationControllerUpdate(t *testing.T) {
	old := validReplicationController()
	rc := validReplicationController()
	// A ReplicationController's selector may change, unlike a ReplicaSet's.
	rc.Spec.Selector = map[string]string{"app": "nginx", "v": "2"}
	rc.Spec.Template.Labels["v"] = "2"
	checkErrs(t, ValidateReplicationControllerUpdate(rc, old))
	rc.Status = ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 2}
	checkErrs(t, ValidateReplicationControllerStatusUpdate(rc, old), "FieldValueInvalid status.readyReplicas")
}

func TestScaleOfReplicaKinds(t *testing.T) {
	rs := validReplicaSet()
	rs.Status.Replicas = 2
	sc, ok := ScaleOf(rs)
	if !ok || sc.Spec.Replicas != 1 || sc.Status.Replicas != 2 || sc.Status.Selector != "tier=frontend" {
		t.Fatalf("rs scale %+v", sc)
	}
	rc := validReplicationController()
	if !SetReplicas(rc, 4) || *rc.Spec.Replicas != 4 {
		t.Fatal("SetReplicas on rc")
	}
	sc, ok = ScaleOf(rc)
	if !ok || sc.Spec.Replicas != 4 || sc.Status.Selector != "app=nginx" {
		t.Fatalf("rc scale %+v", sc)
	}
}
