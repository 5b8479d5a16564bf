package kubectlcompat

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubectlJobsAndCronJobs: kubectl create cronjob, get cronjobs (its
// columns), create job --from=cronjob/X (kubectl reads the CronJob and
// creates a Job annotated cronjob.kubernetes.io/instantiate: manual), the
// Job controller's pod (the test plays the node and marks it Succeeded),
// kubectl wait --for=condition=complete, get jobs; an invalid schedule is
// a 422 naming spec.schedule.
func TestKubectlJobsAndCronJobs(t *testing.T) {
	ns := namespace(t, "batch-kubectl")
	if spdyOnly() {
		// Debian's kubectl 1.20 writes and reads CronJobs as batch/v1beta1,
		// which Skiff does not serve (batch/v1 only): a clear 404, and the
		// rest of this test needs a kubectl of batch/v1 CronJobs.
		_, errOut, err := kubectlErr(t, "create", "cronjob", "backup", "-n", ns, "--image=busybox:1.36", "--schedule=0 3 * * *", "--", "true")
		if err == nil || !strings.Contains(errOut, "the server could not find the requested resource") {
			t.Fatalf("kubectl 1.20 create cronjob (batch/v1beta1): err %v, stderr %q; want the 404 of a version not served", err, errOut)
		}
		return
	}
	out := kubectl(t, "create", "cronjob", "backup", "-n", ns, "--image=busybox:1.36", "--schedule=0 3 * * *", "--", "true")
	if strings.TrimSpace(out) != "cronjob.batch/backup created" {
		t.Errorf("create cronjob: %q", out)
	}
	rows := lines(kubectl(t, "get", "cronjobs", "-n", ns))
	if len(rows) != 2 || strings.Join(fields(rows[0]), " ") != "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE" {
		t.Fatalf("get cronjobs:\n%s", strings.Join(rows, "\n"))
	}
	if f := fields(rows[1]); len(f) < 10 || f[0] != "backup" || strings.Join(f[1:6], " ") != "0 3 * * *" || f[6] != "<none>" || f[7] != "False" || f[8] != "0" || f[9] != "<none>" {
		t.Errorf("cronjob row %q", rows[1])
	}
	if out := kubectl(t, "get", "cj", "backup", "-n", ns, "-o", "jsonpath={.spec.concurrencyPolicy} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit}"); out != "Allow 3 1" {
		t.Errorf("cronjob defaults %q", out)
	}

	out = kubectl(t, "create", "job", "manual", "-n", ns, "--from=cronjob/backup")
	if strings.TrimSpace(out) != "job.batch/manual created" {
		t.Errorf("create job --from: %q", out)
	}
	var j batchv1.Job
	if err := json.Unmarshal([]byte(kubectl(t, "get", "job", "manual", "-n", ns, "-o", "json")), &j); err != nil {
		t.Fatal(err)
	}
	if j.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" || len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "CronJob" ||
		j.Spec.Selector == nil || j.Spec.Selector.MatchLabels["batch.kubernetes.io/controller-uid"] != string(j.UID) ||
		*j.Spec.BackoffLimit != 6 || *j.Spec.Completions != 1 || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Fatalf("job from cronjob: annotations %v owners %+v spec %+v", j.Annotations, j.OwnerReferences, j.Spec)
	}

	// Play the node: the Job's pod succeeds.
	var pod corev1.Pod
	eventually(t, 30*time.Second, func() error {
		l, err := env.cs.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=manual"})
		if err != nil {
			return err
		}
		if len(l.Items) != 1 {
			return fmt.Errorf("%d pods of job manual", len(l.Items))
		}
		pod = l.Items[0]
		return nil
	})
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "backup", Image: "busybox:1.36", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.Now()}}}}
	if _, err := env.cs.CoreV1().Pods(ns).UpdateStatus(ctx(t), &pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod status: %v", err)
	}
	out = kubectl(t, "wait", "-n", ns, "--for=condition=complete", "job/manual", "--timeout=30s")
	if strings.TrimSpace(out) != "job.batch/manual condition met" {
		t.Errorf("wait: %q", out)
	}
	rows = lines(kubectl(t, "get", "jobs", "-n", ns))
	if len(rows) != 2 || strings.Join(fields(rows[0]), " ") != "NAME STATUS COMPLETIONS DURATION AGE" {
		t.Fatalf("get jobs:\n%s", strings.Join(rows, "\n"))
	}
	if f := fields(rows[1]); len(f) != 5 || f[0] != "manual" || f[1] != "Complete" || f[2] != "1/1" {
		t.Errorf("job row %q", rows[1])
	}

	// describe reads both kinds (protobuf) and their Events.
	if out := kubectl(t, "describe", "job", "manual", "-n", ns); !strings.Contains(out, "Pods Statuses:") || !strings.Contains(out, "1 Succeeded") {
		t.Errorf("describe job:\n%s", out)
	}
	if out := kubectl(t, "describe", "cronjob", "backup", "-n", ns); !strings.Contains(out, "0 3 * * *") || !strings.Contains(out, "Concurrency Policy:") {
		t.Errorf("describe cronjob:\n%s", out)
	}
	// kubectl create job NAME --image: restartPolicy Never, generated selector.
	if out := kubectl(t, "create", "job", "pi", "-n", ns, "--image=perl:5.34.0", "--", "perl", "-e", "1"); strings.TrimSpace(out) != "job.batch/pi created" {
		t.Errorf("create job: %q", out)
	}
	if out := kubectl(t, "get", "job", "pi", "-n", ns, "-o", "jsonpath={.spec.template.spec.restartPolicy} {.metadata.labels.job-name}"); out != "Never pi" {
		t.Errorf("job pi: %q", out)
	}
	// get all lists both kinds.
	if out := kubectl(t, "get", "all", "-n", ns); !strings.Contains(out, "cronjob.batch/backup") || !strings.Contains(out, "job.batch/manual") {
		t.Errorf("get all:\n%s", out)
	}

	// An invalid schedule: 422 naming spec.schedule.
	_, errOut, err := kubectlErr(t, "create", "cronjob", "bad", "-n", ns, "--image=busybox", "--schedule=61 * * * *")
	if err == nil || !strings.Contains(errOut, "spec.schedule: Invalid value") {
		t.Errorf("invalid schedule: err %v, stderr %q", err, errOut)
	}
}
