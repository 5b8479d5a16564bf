package podautoscaler

import (
	"math"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// recommendation is one unstabilised proposal and when it was made.
type recommendation struct {
	At       time.Time
	Replicas int32
}

// scaleEvent is one rescale: replicas added (up) or removed (down).
type scaleEvent struct {
	At     time.Time
	Change int32
}

// History is what the controller remembers of one autoscaler between
// syncs: its recent recommendations and rescales.
type History struct {
	Recommendations []recommendation
	ScaleUp         []scaleEvent
	ScaleDown       []scaleEvent
}

// condition is a condition to set: type, status, reason, message.
type condition struct {
	Type    string
	Status  api.ConditionStatus
	Reason  string
	Message string
}

// normalizeInput is the bounds and rules one proposal is normalised with.
type normalizeInput struct {
	current, desired, min, max int32
	behavior                   *api.HorizontalPodAutoscalerBehavior
	now                        time.Time
}

// normalize stabilises and limits a proposal (horizontal.go's
// normalizeDesiredReplicas and normalizeDesiredReplicasWithBehaviors),
// returning the count, the AbleToScale and ScalingLimited conditions,
// and the history with this proposal recorded.
func normalize(in normalizeInput, h History) (int32, []condition, History) {
	var stabilized int32
	var reason, msg string
	if in.behavior == nil {
		stabilized, h.Recommendations = stabilize(in, h.Recommendations)
		if stabilized != in.desired {
			reason, msg = "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
		}
	} else {
		stabilized, h.Recommendations = stabilizeWithBehaviors(in, h.Recommendations)
		switch {
		case stabilized < in.desired:
			reason, msg = "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
		case stabilized > in.desired:
			reason, msg = "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
		}
	}
	if reason == "" {
		reason, msg = "ReadyForNewScale", "recommended size matches current size"
	}
	conds := []condition{{api.HPAAbleToScale, api.ConditionTrue, reason, msg}}
	in.desired = stabilized
	var out int32
	if in.behavior == nil {
		out, reason, msg = limitWithRules(in)
	} else {
		out, reason, msg = limitWithBehaviors(in, h)
	}
	status := api.ConditionFalse
	if out != stabilized {
		status = api.ConditionTrue
	}
	conds = append(conds, condition{api.HPAScalingLimited, status, reason, msg})
	return out, conds, h
}

// stabilize: the highest recommendation of the last 5 minutes, this one
// included; older ones are dropped.
func stabilize(in normalizeInput, recs []recommendation) (int32, []recommendation) {
	best := in.desired
	cutoff := in.now.Add(-defaultDownscaleStabilisation)
	kept := recs[:0:0]
	for _, r := range recs {
		if r.At.After(cutoff) {
			best = max(best, r.Replicas)
			kept = append(kept, r)
		}
	}
	return best, append(kept, recommendation{in.now, in.desired})
}

// stabilizeWithBehaviors: the current count brought within [the lowest
// recommendation of the scale-up window, the highest of the scale-down
// window], both windows including this proposal.
func stabilizeWithBehaviors(in normalizeInput, recs []recommendation) (int32, []recommendation) {
	up := api.DefaultHPAScalingRules(in.behavior.ScaleUp, true)
	down := api.DefaultHPAScalingRules(in.behavior.ScaleDown, false)
	upCut := in.now.Add(-time.Duration(*up.StabilizationWindowSeconds) * time.Second)
	downCut := in.now.Add(-time.Duration(*down.StabilizationWindowSeconds) * time.Second)
	upRec, downRec := in.desired, in.desired
	kept := recs[:0:0]
	for _, r := range recs {
		if r.At.After(upCut) {
			upRec = min(upRec, r.Replicas)
		}
		if r.At.After(downCut) {
			downRec = max(downRec, r.Replicas)
		}
		if r.At.After(upCut) || r.At.After(downCut) {
			kept = append(kept, r)
		}
	}
	rec := in.current
	if rec < upRec {
		rec = upRec
	}
	if rec > downRec {
		rec = downRec
	}
	return rec, append(kept, recommendation{in.now, in.desired})
}

// limitWithRules clamps to [min, max] and to the default scale-up limit.
func limitWithRules(in normalizeInput) (int32, string, string) {
	upLimit := int32(math.Max(defaultScaleUpLimitFactor*float64(in.current), defaultScaleUpLimitMinimum))
	maxAllowed, reason, msg := in.max, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if in.max > upLimit {
		maxAllowed, reason, msg = upLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case in.desired < in.min:
		return in.min, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case in.desired > maxAllowed:
		return maxAllowed, reason, msg
	}
	return in.desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// limitWithBehaviors applies the policies of the direction of change,
// counting the replicas already changed within each policy's period,
// then clamps to [min, max].
func limitWithBehaviors(in normalizeInput, h History) (int32, string, string) {
	switch {
	case in.desired > in.current:
		rules := api.DefaultHPAScalingRules(in.behavior.ScaleUp, true)
		limit := max(scaleUpLimit(in.current, h.ScaleUp, rules, in.now), in.current)
		maxAllowed, reason, msg := in.max, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxAllowed > limit {
			maxAllowed, reason, msg = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if in.desired > maxAllowed {
			return maxAllowed, reason, msg
		}
	case in.desired < in.current:
		rules := api.DefaultHPAScalingRules(in.behavior.ScaleDown, false)
		limit := min(scaleDownLimit(in.current, h.ScaleDown, rules, in.now), in.current)
		minAllowed, reason, msg := in.min, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minAllowed < limit {
			minAllowed, reason, msg = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if in.desired < minAllowed {
			return minAllowed, reason, msg
		}
	}
	// Out of bounds with no change to limit (current == desired): clamp.
	if in.desired > in.max {
		return in.max, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	}
	if in.desired < in.min {
		return in.min, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	}
	return in.desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// changedWithin sums the changes of the events of the last period.
func changedWithin(events []scaleEvent, periodSeconds int32, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var n int32
	for _, e := range events {
		if e.At.After(cutoff) {
			n += e.Change
		}
	}
	return n
}

func scaleUpLimit(current int32, events []scaleEvent, rules *api.HPAScalingRules, now time.Time) int32 {
	if *rules.SelectPolicy == api.DisabledPolicySelect {
		return current
	}
	pickMin := *rules.SelectPolicy == api.MinChangePolicySelect
	result := int32(math.MinInt32)
	if pickMin {
		result = math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := current - changedWithin(events, p.PeriodSeconds, now)
		var proposed int32
		if p.Type == api.PodsScalingPolicy {
			proposed = start + p.Value
		} else {
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if pickMin {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

func scaleDownLimit(current int32, events []scaleEvent, rules *api.HPAScalingRules, now time.Time) int32 {
	if *rules.SelectPolicy == api.DisabledPolicySelect {
		return current
	}
	pickMin := *rules.SelectPolicy == api.MinChangePolicySelect
	// Max picks the policy allowing the largest change: the lowest count.
	result := int32(math.MaxInt32)
	if pickMin {
		result = math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current + changedWithin(events, p.PeriodSeconds, now)
		var proposed int32
		if p.Type == api.PodsScalingPolicy {
			proposed = start - p.Value
		} else {
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		if pickMin {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}

// recordRescale remembers a rescale from prev to next, and forgets events
// older than the longest policy period of either direction.
func recordRescale(h History, behavior *api.HorizontalPodAutoscalerBehavior, prev, next int32, now time.Time) History {
	longest := int32(0)
	if behavior != nil {
		for _, r := range []*api.HPAScalingRules{api.DefaultHPAScalingRules(behavior.ScaleUp, true), api.DefaultHPAScalingRules(behavior.ScaleDown, false)} {
			for _, p := range r.Policies {
				longest = max(longest, p.PeriodSeconds)
			}
		}
	}
	prune := func(events []scaleEvent) []scaleEvent {
		cutoff := now.Add(-time.Duration(longest) * time.Second)
		out := events[:0:0]
		for _, e := range events {
			if e.At.After(cutoff) {
				out = append(out, e)
			}
		}
		return out
	}
	h.ScaleUp, h.ScaleDown = prune(h.ScaleUp), prune(h.ScaleDown)
	if behavior == nil {
		return h
	}
	if next > prev {
		h.ScaleUp = append(h.ScaleUp, scaleEvent{now, next - prev})
	} else if next < prev {
		h.ScaleDown = append(h.ScaleDown, scaleEvent{now, prev - next})
	}
	return h
}
