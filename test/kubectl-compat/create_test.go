package kubectlcompat

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// kubectl's create verbs and run send their objects as protobuf.
func TestKubectlCreateVerbsSendProtobuf(t *testing.T) {
	ns := namespace(t, "create-verbs") // kubectl create namespace
	if out := kubectl(t, "get", "ns", ns, "-o", "jsonpath={.status.phase}"); out != "Active" {
		t.Errorf("namespace phase %q", out)
	}

	out := kubectl(t, "create", "deployment", "web", "-n", ns, "--image=nginx:1.27", "--replicas=2", "--port=8080")
	if strings.TrimSpace(out) != "deployment.apps/web created" {
		t.Errorf("create deployment: %q", out)
	}
	var d appsv1.Deployment
	if err := json.Unmarshal([]byte(kubectl(t, "get", "deploy", "web", "-n", ns, "-o", "json")), &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers
	if *d.Spec.Replicas != 2 || len(c) != 1 || c[0].Image != "nginx:1.27" || len(c[0].Ports) != 1 || c[0].Ports[0].ContainerPort != 8080 ||
		d.Spec.Selector.MatchLabels["app"] != "web" || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("deployment %+v", d.Spec)
	}

	out = kubectl(t, "create", "service", "clusterip", "web", "-n", ns, "--tcp=80:8080")
	if strings.TrimSpace(out) != "service/web created" {
		t.Errorf("create service: %q", out)
	}
	var svc corev1.Service
	if err := json.Unmarshal([]byte(kubectl(t, "get", "svc", "web", "-n", ns, "-o", "json")), &svc); err != nil {
		t.Fatal(err)
	}
	p := svc.Spec.Ports
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP == "" || len(p) != 1 || p[0].Port != 80 || p[0].TargetPort.IntVal != 8080 ||
		p[0].Name != "80-8080" || svc.Spec.Selector["app"] != "web" {
		t.Errorf("service %+v", svc.Spec)
	}
	out = kubectl(t, "create", "service", "nodeport", "web-np", "-n", ns, "--tcp=80:8080")
	if strings.TrimSpace(out) != "service/web-np created" {
		t.Errorf("create service nodeport: %q", out)
	}

	out = kubectl(t, "run", "once", "-n", ns, "--image=busybox", "--restart=Never", "--labels=job=once", "--", "echo", "hi")
	if strings.TrimSpace(out) != "pod/once created" {
		t.Errorf("run: %q", out)
	}
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(kubectl(t, "get", "pod", "once", "-n", ns, "-o", "json")), &pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Labels["job"] != "once" || len(pod.Spec.Containers) != 1 ||
		strings.Join(pod.Spec.Containers[0].Args, " ") != "echo hi" {
		t.Errorf("pod %+v", pod.Spec)
	}

	// A field Skiff does not serve is refused by name, as in JSON.
	// (spec.overhead: a field every kubectl here knows, so it reaches the
	// server; a field kubectl 1.20 lacks it would drop itself.)
	_, errOut, err := kubectlErr(t, "run", "gated", "-n", ns, "--image=busybox", "--overrides", `{"spec":{"overhead":{"cpu":"1"}}}`)
	if err == nil || !strings.Contains(errOut, `unknown field "spec.overhead"`) {
		t.Errorf("run with a field Skiff lacks: err %v, stderr %q", err, errOut)
	}
}

// client-go's typed clients with the protobuf content type stated: create,
// update, update scale, status and delete with options.
func TestClientGoProtobuf(t *testing.T) {
	rc, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	if _, err := cs.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pb"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := "pb"
	svc := createService(t, ns, "pb-svc", corev1.ServiceTypeNodePort) // env.cs: protobuf by default
	svc.Labels["tier"] = "front"
	svc, err = cs.CoreV1().Services(ns).Update(c, svc, metav1.UpdateOptions{})
	if err != nil || svc.Labels["tier"] != "front" || svc.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("update service: %v %+v", err, svc)
	}

	d, err := cs.AppsV1().Deployments(ns).Create(c, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-d"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pb"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pb"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "1d"}}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil || *d.Spec.Replicas != 0 {
		t.Fatalf("create deployment (replicas 0 kept): %v %+v", err, d)
	}
	sc, err := cs.AppsV1().Deployments(ns).UpdateScale(c, "pb-d", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-d", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 2},
	}, metav1.UpdateOptions{})
	if err != nil || sc.Spec.Replicas != 2 {
		t.Fatalf("update scale: %v %+v", err, sc)
	}

	es, err := cs.DiscoveryV1().EndpointSlices(ns).Create(c, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "pb-es", Labels: map[string]string{discoveryv1.LabelServiceName: "pb-svc"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.9"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{})
	if err != nil || len(es.Endpoints) != 1 || !*es.Endpoints[0].Conditions.Ready {
		t.Fatalf("create endpointslice: %v %+v", err, es)
	}

	now := metav1.NowMicro()
	l, err := cs.CoordinationV1().Leases(ns).Create(c, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-lease"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr("me"), LeaseDurationSeconds: ptr(int32(15)), RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil || *l.Spec.HolderIdentity != "me" || l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Truncate(1e3).Equal(now.Time.Truncate(1e3)) {
		t.Fatalf("create lease: %v %+v", err, l)
	}

	// A PriorityClass that does not exist: 403 from the Priority admission.
	_, err = cs.CoreV1().Pods(ns).Create(c, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "prio"},
		Spec:       corev1.PodSpec{PriorityClassName: "high", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `no PriorityClass with name high was found`) {
		t.Errorf("priorityClassName: %v", err)
	}

	// Delete sends DeleteOptions as protobuf (in the body only): a dry run
	// leaves the object; Foreground marks it until the garbage collector
	// finishes it.
	if err := cs.AppsV1().Deployments(ns).Delete(c, "pb-d", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run delete: %v", err)
	}
	if d, err := cs.AppsV1().Deployments(ns).Get(c, "pb-d", metav1.GetOptions{}); err != nil || d.DeletionTimestamp != nil {
		t.Fatalf("after a dry-run delete: %v %v", err, d.DeletionTimestamp)
	}
	fg := metav1.DeletePropagationForeground
	if err := cs.AppsV1().Deployments(ns).Delete(c, "pb-d", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	eventually(t, 30*time.Second, func() error {
		d, err := cs.AppsV1().Deployments(ns).Get(c, "pb-d", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case !slices.Contains(d.Finalizers, metav1.FinalizerDeleteDependents):
			t.Fatalf("foreground delete: finalizers %v", d.Finalizers)
		}
		return fmt.Errorf("deployment still there (finalizers %v)", d.Finalizers)
	})
}
