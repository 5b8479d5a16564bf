package api

func priorityClasses() *ResourceInfo {
	return build[PriorityClass, *PriorityClass, PriorityClassList](ResourceInfo{
		Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Singular: "priorityclass", Kind: "PriorityClass", ListKind: "PriorityClassList",
		ShortNames: []string{"pc"},
	}, kindFuncs[*PriorityClass]{
		defaults: DefaultPriorityClass,
		create:   ValidatePriorityClass,
		update:   ValidatePriorityClassUpdate,
	})
}
