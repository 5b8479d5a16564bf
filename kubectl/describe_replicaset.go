package kubectl

import (
	"context"

	"github.com/skiff-dev/skiff/api"
)

// describeReplicas is kubectl's ReplicaSetDescriber and
// ReplicationControllerDescriber: they differ only in the selector's form
// and the template's pointer.
func (s *session) describeReplicas(ctx context.Context, p *prefixWriter, m *api.ObjectMeta, sel *api.LabelSelector,
	selText string, replicas *int32, current int32, t *api.PodTemplateSpec, conds []api.ReplicaSetCondition) {
	p.meta(m, true)
	p.write(0, "Selector:\t%s\n", selText)
	p.labelsAndAnnotations(m)
	if c := controlledBy(m); c != "" {
		p.write(0, "Controlled By:\t%s\n", c)
	}
	desired := int32(1)
	if replicas != nil {
		desired = *replicas
	}
	p.write(0, "Replicas:\t%d current / %d desired\n", current, desired)
	var running, waiting, succeeded, failed int
	for _, pod := range s.podsOf(ctx, m.Namespace, sel) {
		switch pod.Status.Phase {
		case api.PodRunning:
			running++
		case api.PodSucceeded:
			succeeded++
		case api.PodFailed:
			failed++
		default:
			waiting++
		}
	}
	p.write(0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	if t != nil {
		describeTemplate(p, t)
	}
	if len(conds) > 0 {
		p.write(0, "Conditions:\n")
		p.write(1, "Type\tStatus\tReason\n")
		p.write(1, "----\t------\t------\n")
		for _, c := range conds {
			p.write(1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
		}
	}
}

func (s *session) describeReplicaSet(ctx context.Context, p *prefixWriter, rs *api.ReplicaSet) {
	s.describeReplicas(ctx, p, &rs.ObjectMeta, rs.Spec.Selector, api.SelectorString(rs.Spec.Selector),
		rs.Spec.Replicas, rs.Status.Replicas, &rs.Spec.Template, rs.Status.Conditions)
}

func (s *session) describeReplicationController(ctx context.Context, p *prefixWriter, rc *api.ReplicationController) {
	sel := &api.LabelSelector{MatchLabels: rc.Spec.Selector}
	conds := make([]api.ReplicaSetCondition, len(rc.Status.Conditions))
	for i, c := range rc.Status.Conditions {
		conds[i] = api.ReplicaSetCondition(c)
	}
	s.describeReplicas(ctx, p, &rc.ObjectMeta, sel, api.SelectorString(sel),
		rc.Spec.Replicas, rc.Status.Replicas, rc.Spec.Template, conds)
}
