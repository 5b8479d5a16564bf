package apiserver

import (
	"strings"
	"testing"
	"time"
)

func TestDeletePropagation(t *testing.T) {
	cases := []struct {
		name      string
		query     string
		body      string
		finalizer string
	}{
		{"foreground by query", "?propagationPolicy=Foreground", "", "foregroundDeletion"},
		{"orphan by query", "?propagationPolicy=Orphan", "", "orphan"},
		{"foreground by body", "", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`, "foregroundDeletion"},
		{"orphanDependents true", "?orphanDependents=true", "", "orphan"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.createWidget("w", nil, map[string]any{"size": 1})
			var body any
			if tc.body != "" {
				body = tc.body
			}
			var w widget
			e.must(200, "DELETE", widgetsPath+"/w"+tc.query, body).into(t, &w)
			if w.DeletionTimestamp == nil || !w.DeletionTimestamp.Equal(testNow) || w.DeletionGracePeriodSeconds == nil || *w.DeletionGracePeriodSeconds != 0 {
				t.Fatalf("deletion metadata: %+v", w.ObjectMeta)
			}
			if len(w.Finalizers) != 1 || w.Finalizers[0] != tc.finalizer {
				t.Fatalf("finalizers %v, want [%s]", w.Finalizers, tc.finalizer)
			}
			// Still there; a second delete changes nothing.
			var again widget
			e.must(200, "DELETE", widgetsPath+"/w"+tc.query, body).into(t, &again)
			if again.ResourceVersion != w.ResourceVersion {
				t.Errorf("second delete wrote a new version")
			}
			// No new finalizers while deleting.
			w.Finalizers = append(w.Finalizers, "extra")
			e.must(422, "PUT", widgetsPath+"/w", w)
			// Removing the last finalizer deletes the object.
			w.Finalizers = nil
			e.must(200, "PUT", widgetsPath+"/w", w)
			e.must(404, "GET", widgetsPath+"/w", nil)
		})
	}
}

func TestDeleteOptionsErrors(t *testing.T) {
	e := newEnv(t)
	w := e.createWidget("w", nil, nil)
	cases := []struct {
		name  string
		query string
		body  any
		code  int
	}{
		{"bad policy", "?propagationPolicy=Sideways", nil, 422},
		{"bad grace", "?gracePeriodSeconds=soon", nil, 400},
		{"uid precondition", "", `{"preconditions":{"uid":"other"}}`, 409},
		{"rv precondition", "", `{"preconditions":{"resourceVersion":"1"}}`, 409},
		{"unknown option field", "", `{"sideways":true}`, 400},
		{"wrong kind", "", `{"kind":"Widget"}`, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.must(tc.code, "DELETE", widgetsPath+"/w"+tc.query, tc.body).status(t)
		})
	}
	e.t = t
	e.must(200, "DELETE", widgetsPath+"/w", `{"preconditions":{"uid":"`+w.UID+`"}}`)
}

func TestGracefulPodDeletion(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", podsPath, `{"metadata":{"name":"bound"},"spec":{"nodeName":"n1","terminationGracePeriodSeconds":30}}`)
	var p pod
	e.must(200, "DELETE", podsPath+"/bound", nil).into(t, &p)
	if p.DeletionTimestamp == nil || !p.DeletionTimestamp.Equal(testNow.Add(30*time.Second)) ||
		p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("graceful delete: %+v", p.ObjectMeta)
	}
	e.must(200, "GET", podsPath+"/bound", nil)
	// A status update by the node agent keeps it.
	e.must(200, "PATCH", podsPath+"/bound/status", `{"status":{"phase":"Running"}}`, "Content-Type: application/merge-patch+json")
	// A shorter grace period shortens the deadline.
	e.must(200, "DELETE", podsPath+"/bound?gracePeriodSeconds=10", nil).into(t, &p)
	if !p.DeletionTimestamp.Equal(testNow.Add(10*time.Second)) || *p.DeletionGracePeriodSeconds != 10 {
		t.Fatalf("shortened: %+v", p.ObjectMeta)
	}
	// A longer one does not extend it.
	e.must(200, "DELETE", podsPath+"/bound?gracePeriodSeconds=60", nil).into(t, &p)
	if *p.DeletionGracePeriodSeconds != 10 {
		t.Fatalf("extended: %+v", p.ObjectMeta)
	}
	// The node agent's final delete with grace 0 removes it.
	e.must(200, "DELETE", podsPath+"/bound", `{"gracePeriodSeconds":0}`)
	e.must(404, "GET", podsPath+"/bound", nil)

	// Default grace (no terminationGracePeriodSeconds) is 30s.
	e.must(201, "POST", podsPath, `{"metadata":{"name":"dflt"},"spec":{"nodeName":"n1"}}`)
	e.must(200, "DELETE", podsPath+"/dflt", nil).into(t, &p)
	if *p.DeletionGracePeriodSeconds != 30 {
		t.Errorf("default grace %d", *p.DeletionGracePeriodSeconds)
	}

	cases := []struct {
		name, body, query string
	}{
		{"unbound", `{"metadata":{"name":"x"},"spec":{"terminationGracePeriodSeconds":30}}`, ""},
		{"grace zero", `{"metadata":{"name":"x"},"spec":{"nodeName":"n1","terminationGracePeriodSeconds":30}}`, "?gracePeriodSeconds=0"},
		{"spec grace zero", `{"metadata":{"name":"x"},"spec":{"nodeName":"n1","terminationGracePeriodSeconds":0}}`, ""},
		{"terminal", `{"metadata":{"name":"x"},"spec":{"nodeName":"n1"},"status":{"phase":"Succeeded"}}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.must(201, "POST", podsPath, tc.body)
			e.must(200, "DELETE", podsPath+"/x"+tc.query, nil)
			e.must(404, "GET", podsPath+"/x", nil)
		})
	}
	e.t = t

	// Finalizers and grace together: the final delete leaves it while a
	// finalizer remains; removing the finalizer then deletes it.
	e.must(201, "POST", podsPath, `{"metadata":{"name":"f","finalizers":["x/y"]},"spec":{"nodeName":"n1"}}`)
	e.must(200, "DELETE", podsPath+"/f", nil)
	e.must(200, "DELETE", podsPath+"/f?gracePeriodSeconds=0", nil).into(t, &p)
	if *p.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("grace after final delete: %d", *p.DeletionGracePeriodSeconds)
	}
	e.must(200, "PATCH", podsPath+"/f", `{"metadata":{"finalizers":null}}`, "Content-Type: application/merge-patch+json")
	e.must(404, "GET", podsPath+"/f", nil)
}

func TestDeleteCollection(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		lbl := map[string]string{"keep": "no"}
		if n == "b" {
			lbl["keep"] = "yes"
		}
		e.createWidget(n, lbl, nil)
	}
	var list struct {
		Kind  string   `json:"kind"`
		Items []widget `json:"items"`
	}
	e.must(200, "DELETE", widgetsPath+"?labelSelector=keep%3Dno", nil).into(t, &list)
	if list.Kind != "WidgetList" || len(list.Items) != 2 {
		t.Fatalf("deleted %+v", list)
	}
	e.must(200, "GET", widgetsPath, nil).into(t, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "b" {
		t.Fatalf("left %+v", list.Items)
	}
}

func TestNamespaceLifecycle(t *testing.T) {
	e := newEnv(t)
	r := e.must(404, "POST", "/apis/example.com/v1/namespaces/nope/widgets", `{"metadata":{"name":"w"}}`)
	if st := r.status(t); st.Message != `namespaces "nope" not found` {
		t.Errorf("message %q", st.Message)
	}
	e.createNS("team")
	teamWidgets := "/apis/example.com/v1/namespaces/team/widgets"
	e.must(201, "POST", teamWidgets, `{"metadata":{"name":"w"}}`)

	var ns namespace
	e.must(200, "DELETE", "/api/v1/namespaces/team", nil).into(t, &ns)
	if ns.DeletionTimestamp == nil || ns.Status.Phase != "Terminating" || len(ns.Spec.Finalizers) != 1 {
		t.Fatalf("terminating namespace: %+v", ns)
	}
	r = e.must(403, "POST", teamWidgets, `{"metadata":{"name":"w2"}}`)
	if st := r.status(t); !strings.Contains(st.Message, "unable to create new content in namespace team because it is being terminated") {
		t.Errorf("message %q", st.Message)
	}
	// Existing content can still be updated and deleted.
	e.must(200, "PATCH", teamWidgets+"/w", `{"spec":{"size":3}}`, "Content-Type: application/merge-patch+json")
	e.must(200, "DELETE", teamWidgets+"/w", nil)
	// Deleting again while terminating conflicts, as in Kubernetes.
	e.must(409, "DELETE", "/api/v1/namespaces/team", nil)
	// A status update does not remove it.
	e.must(200, "PATCH", "/api/v1/namespaces/team/status", `{"status":{"phase":"Terminating"}}`, "Content-Type: application/merge-patch+json")
	e.must(200, "GET", "/api/v1/namespaces/team", nil)
	// finalize with a stale resourceVersion conflicts.
	e.must(409, "PUT", "/api/v1/namespaces/team/finalize", `{"metadata":{"name":"team","resourceVersion":"1"},"spec":{"finalizers":[]}}`)
	// finalize emptying spec.finalizers removes the namespace.
	e.must(200, "PUT", "/api/v1/namespaces/team/finalize", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},"spec":{"finalizers":[]}}`)
	e.must(404, "GET", "/api/v1/namespaces/team", nil)

	// finalize on a live namespace only replaces the finalizers.
	e.createNS("live")
	var live namespace
	e.must(200, "PUT", "/api/v1/namespaces/live/finalize", `{"metadata":{"name":"live"},"spec":{"finalizers":["a/b"]}}`).into(t, &live)
	if len(live.Spec.Finalizers) != 1 || live.Spec.Finalizers[0] != "a/b" || live.DeletionTimestamp != nil {
		t.Fatalf("finalized live namespace: %+v", live)
	}
	// A namespace created with no spec finalizer left is deleted at once.
	e.must(200, "PUT", "/api/v1/namespaces/live/finalize", `{"metadata":{"name":"live"},"spec":{}}`)
	e.must(200, "DELETE", "/api/v1/namespaces/live", nil)
	e.must(404, "GET", "/api/v1/namespaces/live", nil)
}
