package kubectlcompat

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const daemonSetYAML = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      nodeSelector: {compat: none} # no node runs it: the history is the point
      containers:
      - name: agent
        image: %s
`

const statefulSetYAML = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeSelector: {compat: none}
      containers:
      - name: web
        image: %s
`

// TestRolloutHistoryUndoDaemonSetStatefulSet: a DaemonSet's and a
// StatefulSet's templates are ControllerRevisions, which kubectl reads
// itself: rollout history (with the change-cause annotation, and
// --revision), get controllerrevisions, and rollout undo (kubectl patches
// the revision's data back) to the previous revision and --to-revision.
func TestRolloutHistoryUndoDaemonSetStatefulSet(t *testing.T) {
	ns := namespace(t, "rollout-revisions")
	for _, w := range []struct{ kind, ref, yaml string }{
		{"daemonset.apps", "ds/agent", daemonSetYAML},
		{"statefulset.apps", "sts/web", statefulSetYAML},
	} {
		t.Run(w.kind, func(t *testing.T) {
			name := strings.TrimPrefix(strings.TrimPrefix(w.ref, "ds/"), "sts/")
			image := func() string {
				return kubectl(t, "get", w.ref, "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}")
			}
			history := func(want ...string) {
				t.Helper()
				eventually(t, 20*time.Second, func() error {
					out := kubectl(t, "rollout", "history", "-n", ns, w.ref)
					got := lines(out)
					want := append([]string{w.kind + "/" + name, "REVISION  CHANGE-CAUSE"}, want...)
					if len(got) != len(want) {
						return fmt.Errorf("history %q", out)
					}
					for i := range want {
						if strings.Join(fields(got[i]), " ") != strings.Join(fields(want[i]), " ") {
							return fmt.Errorf("history line %d %q, want %q", i, got[i], want[i])
						}
					}
					return nil
				})
			}
			kubectl(t, "apply", "-n", ns, "-f", manifest(t, name+"1.yaml", fmt.Sprintf(w.yaml, "busybox:1")))
			history("1 <none>")
			kubectl(t, "apply", "-n", ns, "-f", manifest(t, name+"2.yaml", fmt.Sprintf(w.yaml, "busybox:2")))
			kubectl(t, "annotate", "-n", ns, w.ref, "kubernetes.io/change-cause=to busybox 3")
			kubectl(t, "apply", "-n", ns, "-f", manifest(t, name+"3.yaml", fmt.Sprintf(w.yaml, "busybox:3")))
			history("1 <none>", "2 <none>", "3 to busybox 3")
			if out := kubectl(t, "rollout", "history", "-n", ns, w.ref, "--revision=1"); !strings.Contains(out, "with revision #1") ||
				!strings.Contains(out, "busybox:1") || strings.Contains(out, "busybox:3") {
				t.Errorf("history --revision=1:\n%s", out)
			}
			revs := lines(kubectl(t, "get", "controllerrevisions", "-n", ns, "-l", "app="+name))
			if len(revs) != 4 || strings.Join(fields(revs[0]), " ") != "NAME CONTROLLER REVISION AGE" ||
				!strings.Contains(revs[1], w.kind[:strings.Index(w.kind, ".")]+".apps/"+name) {
				t.Errorf("get controllerrevisions:\n%s", strings.Join(revs, "\n"))
			}

			if out := kubectl(t, "rollout", "undo", "-n", ns, w.ref); strings.TrimSpace(out) != w.kind+"/"+name+" rolled back" {
				t.Errorf("undo: %q", out)
			}
			if img := image(); img != "busybox:2" {
				t.Errorf("image after undo %q", img)
			}
			history("1 <none>", "3 to busybox 3", "4 <none>")
			if out := kubectl(t, "rollout", "undo", "-n", ns, w.ref, "--to-revision=1"); strings.TrimSpace(out) != w.kind+"/"+name+" rolled back" {
				t.Errorf("undo --to-revision=1: %q", out)
			}
			if img := image(); img != "busybox:1" {
				t.Errorf("image after undo --to-revision=1 %q", img)
			}
			history("3 to busybox 3", "4 <none>", "5 <none>")
		})
	}
}
