package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resJobs     = api.Lookup(resources, "batch/v1", "jobs")
	resCronJobs = api.Lookup(resources, "batch/v1", "cronjobs")
	resHPAs     = api.Lookup(resources, "autoscaling/v2", "horizontalpodautoscalers")
	resPVCs     = api.Lookup(resources, "v1", "persistentvolumeclaims")
	resDSs      = api.Lookup(resources, "apps/v1", "daemonsets")
)

// workloadsFixture: a Deployment rolled out twice (two ReplicaSets), a
// DaemonSet, a Job, a CronJob, an HPA and a claim of the default
// local-path class.
func workloadsFixture(t *testing.T, ts *servertest.Server) {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	c := ts.Client()
	one := int32(1)
	labels := map[string]string{"app": "web"}
	tmpl := func(image string) api.PodTemplateSpec {
		return api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels}, Spec: api.PodSpec{Containers: []api.Container{{Name: "web", Image: image}}}}
	}
	d := &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.DeploymentSpec{Replicas: &one, Selector: &api.LabelSelector{MatchLabels: labels}, Template: tmpl("web:1")}}
	if err := c.Create(ctx, resDeploys, "default", d); err != nil {
		t.Fatal(err)
	}
	// The second revision, once the first ReplicaSet exists.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var cur api.Deployment
		if err := c.Get(ctx, resDeploys, "default", "web", &cur); err != nil {
			t.Fatal(err)
		}
		if cur.Annotations["deployment.kubernetes.io/revision"] == "1" {
			cur.Spec.Template = tmpl("web:2")
			if err := c.Update(ctx, resDeploys, "default", &cur); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the Deployment never reached revision 1")
		}
		time.Sleep(100 * time.Millisecond)
	}
	never := api.RestartPolicyNever
	objs := []struct {
		res *api.ResourceInfo
		obj api.Object
	}{
		{resDSs, &api.DaemonSet{ObjectMeta: api.ObjectMeta{Name: "agent"}, Spec: api.DaemonSetSpec{
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "agent"}}, Spec: api.PodSpec{Containers: []api.Container{{Name: "a", Image: "agent:1"}}}}}}},
		{resJobs, &api.Job{ObjectMeta: api.ObjectMeta{Name: "pi"}, Spec: api.JobSpec{
			Template: api.PodTemplateSpec{Spec: api.PodSpec{RestartPolicy: never, Containers: []api.Container{{Name: "pi", Image: "perl"}}}}}}},
		{resCronJobs, &api.CronJob{ObjectMeta: api.ObjectMeta{Name: "backup"}, Spec: api.CronJobSpec{Schedule: "0 3 * * *",
			JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{RestartPolicy: never, Containers: []api.Container{{Name: "b", Image: "restic"}}}}}}}}},
		{resHPAs, &api.HorizontalPodAutoscaler{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: api.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 3}}},
		{resPVCs, &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "data"}, Spec: api.PersistentVolumeClaimSpec{
			AccessModes: []string{api.ReadWriteOnce}, Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": "1Gi"}}}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o.res, "default", o.obj); err != nil {
			t.Fatalf("create %s: %v", o.res.Resource, err)
		}
	}
}

// TestBrowserWorkloads: the Workloads page lists a Deployment's two
// ReplicaSets (newest first, the current one marked) and rolls back to
// the older one with its button, as `kubectl rollout undo` does; it lists
// the DaemonSet on the one node, the Job, the CronJob and the HPA
// ("cpu: <unknown>/80%"); the Storage page lists the claim of the
// default class and the class itself.
func TestBrowserWorkloads(t *testing.T) {
	chromiumPath(t)
	ts := servertest.Start(t, testOptions())
	fakeNode(t, ts.Client(), "node-a")
	workloadsFixture(t, ts)
	ctx := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	step(t, ctx, "open", chromedp.Navigate(ts.URL()+"/#/workloads"))
	login(t, ctx, ts.Bundle().AdminToken)

	t.Run("workloads", func(t *testing.T) {
		waitJS(t, ctx, "two ReplicaSets, the DaemonSet scheduled on node-a", `document.querySelectorAll('[data-rs^="default/web-"]').length === 2 &&
			(document.querySelector('[data-ds="default/agent"]') || {}).textContent?.startsWith('agentdefault1')`)
		revs := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-rs^="default/web-"]')].map(r => r.children[3].textContent + ':' + (r.querySelector('button') ? 'button' : r.children[8].textContent))`)
		if strings.Join(revs, ",") != "2:current,1:button" {
			t.Fatalf("ReplicaSet rows (revision:action) %q, want the current revision 2 first, then 1 with its rollback button", revs)
		}
		for _, sel := range []string{`[data-job="default/pi"]`, `[data-cronjob="default/backup"]`} {
			waitJS(t, ctx, sel, `document.querySelector('`+sel+`')`)
		}
		if cj := eval[string](t, ctx, `document.querySelector('[data-cronjob="default/backup"]').textContent`); !strings.Contains(cj, "0 3 * * *") {
			t.Errorf("CronJob row %q", cj)
		}
		// Its next run: 03:00 of the server's zone (no timeZone), as the
		// CronJob controller computes it.
		waitJS(t, ctx, "the CronJob's next run", `document.querySelector('[data-cronjob="default/backup"] [data-next]')?.dataset.next`)
		now := time.Now()
		want := time.Date(now.Year(), now.Month(), now.Day(), 3, 0, 0, 0, time.Local)
		if !want.After(now) {
			want = want.AddDate(0, 0, 1)
		}
		if got := eval[string](t, ctx, `document.querySelector('[data-cronjob="default/backup"] [data-next]').dataset.next`); got != want.UTC().Format("2006-01-02T15:04:05.000Z") {
			t.Errorf("next run %q, want %s", got, want.UTC())
		}
		if got := eval[string](t, ctx, `document.querySelector('[data-hpa="default/web"] [data-targets]').dataset.targets`); got != "cpu: <unknown>/80%" {
			t.Errorf("HPA targets %q, want the default cpu 80%% before any reading", got)
		}
		checkPage(t, ctx, "workloads")
		shot(t, ctx, "workloads")

		step(t, ctx, "roll back", clickLive(`[data-rs^="default/web-"] button[data-rollback]`))
		waitJS(t, ctx, "the rollback message", `(document.getElementById('wl-msg') || {}).className === 'okmsg'`)
		// Rolled back: the old template is the Deployment's again, and its
		// ReplicaSet becomes the current revision 3.
		waitJS(t, ctx, "revision 3 current", `[...document.querySelectorAll('[data-rs^="default/web-"]')].some(r => r.children[3].textContent === '3' && !r.querySelector('button'))`)
		var d api.Deployment
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resDeploys, "default", "web", &d); err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "web:1" {
			t.Fatalf("image after the rollback %q, want web:1", img)
		}
		if _, ok := d.Spec.Template.Labels["pod-template-hash"]; ok {
			t.Fatal("the rollback copied the pod-template-hash label into the Deployment")
		}
	})

	t.Run("storage", func(t *testing.T) {
		goTo(t, ctx, "#/storage")
		waitJS(t, ctx, "the claim and the class", `document.querySelector('[data-pvc="default/data"]') && document.querySelector('[data-sc="local-path"]')`)
		row := eval[string](t, ctx, `document.querySelector('[data-pvc="default/data"]').textContent`)
		if !strings.Contains(row, "local-path") || !strings.Contains(row, "Pending") {
			t.Errorf("claim row %q: want Pending (WaitForFirstConsumer) in class local-path", row)
		}
		if sc := eval[string](t, ctx, `document.querySelector('[data-sc="local-path"]').textContent`); !strings.Contains(sc, "skiff.dev/local-path") || !strings.Contains(sc, "WaitForFirstConsumer") {
			t.Errorf("class row %q", sc)
		}
		checkPage(t, ctx, "storage")
		shot(t, ctx, "storage")
	})
}
