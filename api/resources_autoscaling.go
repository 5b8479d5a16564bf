package api

import "fmt"

func horizontalPodAutoscalers() *ResourceInfo {
	return build[HorizontalPodAutoscaler, *HorizontalPodAutoscaler, HorizontalPodAutoscalerList](ResourceInfo{
		Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler",
		Kind: "HorizontalPodAutoscaler", ListKind: "HorizontalPodAutoscalerList",
		Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}, Subresources: []string{"status"},
	}, kindFuncs[*HorizontalPodAutoscaler]{
		defaults:     DefaultHorizontalPodAutoscaler,
		create:       ValidateHorizontalPodAutoscaler,
		update:       ValidateHorizontalPodAutoscalerUpdate,
		statusUpdate: ValidateHorizontalPodAutoscalerStatusUpdate,
		resetStatus:  func(o *HorizontalPodAutoscaler) { o.Status = HorizontalPodAutoscalerStatus{} },
		keepStatus:   func(o, p *HorizontalPodAutoscaler) { o.Status = p.Status },
		keepSpec:     func(o, p *HorizontalPodAutoscaler) { o.Spec = p.Spec },
		specChanged:  func(o, p *HorizontalPodAutoscaler) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}

// ServedByConversion returns the resources served in a version they are
// not stored in (each with a Conversion): autoscaling/v1
// HorizontalPodAutoscalers, stored as autoscaling/v2 (autoscaling_v1.go).
// They are not in Resources(): controllers, the garbage collector,
// namespace deletion and clients work on the stored version; only the API
// server serves these, built fresh on each call.
func ServedByConversion() []*ResourceInfo {
	v1 := *horizontalPodAutoscalers()
	v1.Version, v1.StorageVersion = "v1", "v2"
	v1.Conversion = &Conversion{
		New:     func() any { return &HorizontalPodAutoscalerV1{} },
		NewList: func() any { return &HorizontalPodAutoscalerListV1{} },
		ToStorage: func(o any) (Object, error) {
			h, ok := o.(*HorizontalPodAutoscalerV1)
			if !ok {
				return nil, fmt.Errorf("autoscaling/v1: converting %T", o)
			}
			return HPAFromV1(h)
		},
		FromStorage: func(o Object) (any, error) {
			h, ok := o.(*HorizontalPodAutoscaler)
			if !ok {
				return nil, fmt.Errorf("autoscaling/v1: converting %T", o)
			}
			return HPAToV1(h)
		},
	}
	return []*ResourceInfo{&v1}
}
