package api

import "fmt"

func replicaSets() *ResourceInfo {
	return build[ReplicaSet, *ReplicaSet, ReplicaSetList](ResourceInfo{
		Group: "apps", Version: "v1", Resource: "replicasets", Singular: "replicaset", Kind: "ReplicaSet", ListKind: "ReplicaSetList",
		Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"}, Subresources: []string{"status", "scale"},
	}, kindFuncs[*ReplicaSet]{
		defaults:     DefaultReplicaSet,
		create:       ValidateReplicaSet,
		update:       ValidateReplicaSetUpdate,
		statusUpdate: ValidateReplicaSetStatusUpdate,
		resetStatus:  func(o *ReplicaSet) { o.Status = ReplicaSetStatus{} },
		keepStatus:   func(o, p *ReplicaSet) { o.Status = p.Status },
		keepSpec:     func(o, p *ReplicaSet) { o.Spec = p.Spec },
		specChanged:  func(o, p *ReplicaSet) bool { return !semanticEqual(o.Spec, p.Spec) },
		fields: func(o *ReplicaSet, m map[string]string) {
			m["status.replicas"] = fmt.Sprint(o.Status.Replicas)
		},
	})
}

func replicationControllers() *ResourceInfo {
	return build[ReplicationController, *ReplicationController, ReplicationControllerList](ResourceInfo{
		Version: "v1", Resource: "replicationcontrollers", Singular: "replicationcontroller", Kind: "ReplicationController", ListKind: "ReplicationControllerList",
		Namespaced: true, ShortNames: []string{"rc"}, Categories: []string{"all"}, Subresources: []string{"status", "scale"},
	}, kindFuncs[*ReplicationController]{
		defaults:     DefaultReplicationController,
		create:       ValidateReplicationController,
		update:       ValidateReplicationControllerUpdate,
		statusUpdate: ValidateReplicationControllerStatusUpdate,
		resetStatus:  func(o *ReplicationController) { o.Status = ReplicationControllerStatus{} },
		keepStatus:   func(o, p *ReplicationController) { o.Status = p.Status },
		keepSpec:     func(o, p *ReplicationController) { o.Spec = p.Spec },
		specChanged:  func(o, p *ReplicationController) bool { return !semanticEqual(o.Spec, p.Spec) },
		fields: func(o *ReplicationController, m map[string]string) {
			m["status.replicas"] = fmt.Sprint(o.Status.Replicas)
		},
	})
}
