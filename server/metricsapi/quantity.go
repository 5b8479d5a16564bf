package metricsapi

import (
	"sort"
	"strconv"
)

// CPUQuantity is nanocores as Kubernetes' canonical decimal quantity
// (resource.NewScaledQuantity(n, -9).String()): the largest of the
// suffixes n, u, m and none that keeps an integer ("12345n", "250m", "2").
func CPUQuantity(nanocores uint64) string {
	switch {
	case nanocores == 0:
		return "0"
	case nanocores%1e9 == 0:
		return strconv.FormatUint(nanocores/1e9, 10)
	case nanocores%1e6 == 0:
		return strconv.FormatUint(nanocores/1e6, 10) + "m"
	case nanocores%1e3 == 0:
		return strconv.FormatUint(nanocores/1e3, 10) + "u"
	}
	return strconv.FormatUint(nanocores, 10) + "n"
}

// MemoryQuantity is bytes as Kubernetes' canonical binary quantity
// (resource.NewQuantity(b, BinarySI).String()): the largest power-of-1024
// suffix that keeps an integer ("37276Ki"), plain bytes otherwise.
func MemoryQuantity(bytes uint64) string {
	if bytes == 0 {
		return "0"
	}
	suffixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	i := 0
	for bytes%1024 == 0 && i < len(suffixes)-1 {
		bytes /= 1024
		i++
	}
	return strconv.FormatUint(bytes, 10) + suffixes[i]
}

func sortContainers(c []ContainerUsage) {
	sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
}
