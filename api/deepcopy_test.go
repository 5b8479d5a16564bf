package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDeepCopyTyped(t *testing.T) {
	orig := validPod()
	orig.OwnerReferences = []OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "u1"}}
	before, _ := json.Marshal(orig)

	cp := DeepCopy(orig)
	if cp == orig {
		t.Fatal("DeepCopy returned the same pointer")
	}
	if !reflect.DeepEqual(cp, orig) {
		t.Fatalf("copy differs:\n got %+v\nwant %+v", cp, orig)
	}
	// Mutating every kind of shared storage in the copy leaves obj alone.
	cp.Labels["app"] = "changed"
	cp.OwnerReferences[0].Name = "changed"
	cp.Spec.Containers[0].Image = "changed"
	cp.Spec.Containers[0].Ports[0].ContainerPort = 1
	*cp.Spec.TerminationGracePeriodSeconds = 99
	after, _ := json.Marshal(orig)
	if string(before) != string(after) {
		t.Fatalf("mutating the copy changed the original:\nbefore %s\nafter  %s", before, after)
	}
}

func TestDeepCopyCases(t *testing.T) {
	svc := &Service{ObjectMeta: ObjectMeta{Name: "s", Namespace: "n", Labels: map[string]string{"a": "b"}}}
	var nilPod *Pod
	tests := []struct {
		name     string
		in       Object
		wantNil  bool
		wantType reflect.Type
	}{
		{name: "interface keeps dynamic type", in: svc, wantType: reflect.TypeOf(svc)},
		{name: "pod through interface", in: validPod(), wantType: reflect.TypeOf(&Pod{})},
		{name: "nil interface", in: nil, wantNil: true},
		{name: "typed nil pointer", in: nilPod, wantNil: true, wantType: reflect.TypeOf(nilPod)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DeepCopy(tc.in)
			if tc.wantNil {
				if got != tc.in {
					t.Fatalf("got %#v, want the nil input back", got)
				}
				return
			}
			if reflect.TypeOf(got) != tc.wantType {
				t.Fatalf("type %T, want %v", got, tc.wantType)
			}
			if got == tc.in {
				t.Fatal("same pointer returned")
			}
			if !reflect.DeepEqual(got, tc.in) {
				t.Fatalf("copy differs:\n got %+v\nwant %+v", got, tc.in)
			}
			got.GetObjectMeta().Name = "changed"
			if tc.in.GetObjectMeta().Name == "changed" {
				t.Fatal("copy shares metadata with the original")
			}
		})
	}
}
