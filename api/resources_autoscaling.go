package api

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
