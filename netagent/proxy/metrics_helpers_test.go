package proxy_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func metric(t *testing.T, reg *prometheus.Registry, name string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0]
		}
	}
	t.Fatalf("metric %s not found", name)
	return nil
}

func histogram(t *testing.T, reg *prometheus.Registry, name string) *dto.Histogram {
	return metric(t, reg, name).GetHistogram()
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	return metric(t, reg, name).GetCounter().GetValue()
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	return metric(t, reg, name).GetGauge().GetValue()
}
