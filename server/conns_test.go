package server

import (
	"net/http/httptest"
	"testing"
)

func TestIsLongRunning(t *testing.T) {
	for target, want := range map[string]bool{
		"/api/v1/pods?watch=true":                               true,
		"/api/v1/pods?watch=1":                                  true,
		"/api/v1/pods?watch=false":                              false,
		"/api/v1/watch/namespaces/default/pods":                 true,
		"/apis/apps/v1/watch/deployments":                       true,
		"/api/v1/namespaces/default/pods/web-1/log?follow=true": true,
		"/api/v1/namespaces/default/pods/web-1/exec":            true,
		"/api/v1/namespaces/default/pods/web-1/portforward":     true,
		"/api/v1/namespaces/default/services/web/proxy":         true,
		"/api/v1/namespaces/default/pods/web-1":                 false,
		"/api/v1/namespaces/default/pods/log":                   false, // a pod named log
		"/api/v1/namespaces":                                    false,
		"/ui/watch":                                             true,
		"/ui/proxy/api/v1/pods?watch=1":                         true,
		"/ui/proxy/api/v1/pods":                                 false,
		"/healthz":                                              false,
		"/log":                                                  false,
	} {
		if got := isLongRunning(httptest.NewRequest("GET", target, nil)); got != want {
			t.Errorf("isLongRunning(%s) = %v, want %v", target, got, want)
		}
	}
}
