package netagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// callLog records what the fakes were asked, in order, with the time.
type callLog struct {
	mu    sync.Mutex
	start time.Time
	calls []string
}

func (l *callLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("%v %s", time.Since(l.start).Round(100*time.Millisecond), fmt.Sprintf(format, args...)))
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// find returns the index of the first call containing s after from, or -1.
func (l *callLog) find(s string, from int) int {
	for i, c := range l.all() {
		if i >= from && strings.Contains(c, s) {
			return i
		}
	}
	return -1
}

// fakeContainer is one "process" of the fake runtime.
type fakeContainer struct {
	st   runtime.ContainerStatus
	spec runtime.ContainerSpec
	sb   runtime.Sandbox
	// ignoreTerm: SIGTERM does nothing, only SIGKILL (after the grace)
	// ends it.
	ignoreTerm bool
}

// fakeRuntime is a stateful in-memory runtime.Runtime. Exec answers probe
// commands from per-container health flags: "ready" and "live" succeed
// while the flag of that name is true.
type fakeRuntime struct {
	log *callLog

	mu         sync.Mutex
	next       int
	containers map[string]*fakeContainer
	health     map[string]map[string]bool // pod name/container -> flag -> ok
	ignoreTerm map[string]bool            // container name -> ignores SIGTERM
	failStart  map[string]int             // container name -> fail this many starts
	starts     []runtime.ContainerSpec
}

func newFakeRuntime(log *callLog) *fakeRuntime {
	return &fakeRuntime{log: log, containers: map[string]*fakeContainer{}, health: map[string]map[string]bool{},
		ignoreTerm: map[string]bool{}, failStart: map[string]int{}}
}

func (r *fakeRuntime) Name() string { return "fake" }

func (r *fakeRuntime) Start(ctx context.Context, sb runtime.Sandbox, c runtime.ContainerSpec) (runtime.ContainerStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failStart[c.Name] > 0 {
		r.failStart[c.Name]--
		r.log.add("start-failed %s/%s", sb.Name, c.Name)
		return runtime.ContainerStatus{}, errors.New("exec: no such file")
	}
	r.next++
	id := fmt.Sprintf("c%d", r.next)
	st := runtime.ContainerStatus{ID: id, PodUID: sb.PodUID, Name: c.Name, State: runtime.StateRunning,
		StartedAt: time.Now(), Pid: 1000 + r.next}
	r.containers[id] = &fakeContainer{st: st, spec: c, sb: sb, ignoreTerm: r.ignoreTerm[c.Name]}
	r.starts = append(r.starts, c)
	r.log.add("start %s/%s %s", sb.Name, c.Name, id)
	return st, nil
}

func (r *fakeRuntime) exitLocked(c *fakeContainer, code int) {
	if c.st.State != runtime.StateRunning {
		return
	}
	c.st.State, c.st.ExitCode, c.st.FinishedAt = runtime.StateExited, code, time.Now()
}

// Stop: SIGTERM ends the container at once (exit 143) unless it ignores
// SIGTERM; then SIGKILL after grace (exit 137). It blocks until the end.
func (r *fakeRuntime) Stop(ctx context.Context, id string, grace time.Duration) error {
	r.mu.Lock()
	c, ok := r.containers[id]
	if !ok {
		r.mu.Unlock()
		return fmt.Errorf("stop %s: %w", id, runtime.ErrNotFound)
	}
	r.log.add("sigterm %s/%s %s grace=%v", c.sb.Name, c.st.Name, id, grace.Round(time.Second))
	if c.st.State != runtime.StateRunning {
		r.mu.Unlock()
		return nil
	}
	if !c.ignoreTerm {
		r.exitLocked(c, 143)
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	if grace > 0 {
		select {
		case <-time.After(grace):
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.st.State == runtime.StateRunning {
		r.log.add("sigkill %s/%s %s", c.sb.Name, c.st.Name, id)
		r.exitLocked(c, 137)
	}
	return nil
}

func (r *fakeRuntime) Remove(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return fmt.Errorf("remove %s: %w", id, runtime.ErrNotFound)
	}
	if c.st.State == runtime.StateRunning {
		return fmt.Errorf("remove %s: still running", id)
	}
	delete(r.containers, id)
	r.log.add("remove %s", id)
	return nil
}

func (r *fakeRuntime) List(ctx context.Context) ([]runtime.ContainerStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]runtime.ContainerStatus, 0, len(r.containers))
	for _, c := range r.containers {
		out = append(out, c.st)
	}
	return out, nil
}

func (r *fakeRuntime) Status(ctx context.Context, id string) (runtime.ContainerStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return runtime.ContainerStatus{}, fmt.Errorf("status %s: %w", id, runtime.ErrNotFound)
	}
	return c.st, nil
}

func (r *fakeRuntime) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (int, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return -1, nil, runtime.ErrNotFound
	}
	if c.st.State != runtime.StateRunning {
		return -1, nil, runtime.ErrNotRunning
	}
	flags := r.health[c.sb.Name+"/"+c.st.Name]
	if ok, set := flags[cmd[0]]; set && !ok {
		return 1, []byte(cmd[0] + " is failing"), nil
	}
	return 0, nil, nil
}

func (r *fakeRuntime) Logs(ctx context.Context, id string, follow bool, w io.Writer) error {
	return nil
}

// setHealth sets a probe flag ("ready", "live", "started") of a container.
func (r *fakeRuntime) setHealth(pod, container, flag string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := pod + "/" + container
	if r.health[k] == nil {
		r.health[k] = map[string]bool{}
	}
	r.health[k][flag] = ok
}

// crash makes the running instance of pod/container exit with code.
func (r *fakeRuntime) crash(pod, container string, code int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.containers {
		if c.sb.Name == pod && c.st.Name == container && c.st.State == runtime.StateRunning {
			r.log.add("crash %s/%s %s code=%d", pod, container, c.st.ID, code)
			r.exitLocked(c, code)
			return true
		}
	}
	return false
}

func (r *fakeRuntime) running(pod string) []runtime.ContainerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtime.ContainerStatus
	for _, c := range r.containers {
		if c.sb.Name == pod && c.st.State == runtime.StateRunning {
			out = append(out, c.st)
		}
	}
	return out
}

// adopt plants a container an earlier agent started.
func (r *fakeRuntime) adopt(sb runtime.Sandbox, name string, startedAt time.Time, state runtime.State) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	id := fmt.Sprintf("old%d", r.next)
	r.containers[id] = &fakeContainer{st: runtime.ContainerStatus{ID: id, PodUID: sb.PodUID, Name: name, State: state,
		StartedAt: startedAt}, sb: sb}
	return id
}

// fakeNet is a stateful PodNetwork: IPs from 10.244.1.0/24, re-used for a
// pod that already has one (adoption), released on DelPod.
type fakeNet struct {
	log *callLog
	gw  netip.Addr

	mu   sync.Mutex
	ips  map[string]netip.Addr // pod UID -> IP
	used map[netip.Addr]bool
	fail int
	// delFail: fail this many DelPod calls.
	delFail int
}

func newFakeNet(log *callLog) *fakeNet {
	return &fakeNet{log: log, gw: fakeGateway, ips: map[string]netip.Addr{}, used: map[netip.Addr]bool{}}
}

var fakeGateway = netip.MustParseAddr("10.244.1.1")

func (n *fakeNet) Setup(ctx context.Context) error { return nil }

func (n *fakeNet) AddPod(ctx context.Context, uid, ns, name string, ports []cni.PortMapping) (cni.PodNetwork, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail > 0 {
		n.fail--
		n.log.add("addpod-failed %s", name)
		return cni.PodNetwork{}, errors.New("plugin bridge failed")
	}
	ip, ok := n.ips[uid]
	if !ok {
		for a := n.gw.Next(); ; a = a.Next() {
			if !n.used[a] {
				ip = a
				break
			}
		}
		n.ips[uid], n.used[ip] = ip, true
		n.log.add("addpod %s %s", name, ip)
	} else {
		n.log.add("addpod-adopt %s %s", name, ip)
	}
	return cni.PodNetwork{NetNSPath: "/run/netns/skiff-" + uid, IP: ip, Gateway: n.gw, IfName: "eth0"}, nil
}

func (n *fakeNet) DelPod(ctx context.Context, uid string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.delFail > 0 {
		n.delFail--
		n.log.add("delpod-failed %s", uid)
		return errors.New("plugin bridge failed")
	}
	if ip, ok := n.ips[uid]; ok {
		delete(n.used, ip)
		delete(n.ips, uid)
		n.log.add("delpod %s %s", uid, ip)
	}
	return nil
}

func (n *fakeNet) Pods(ctx context.Context) ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for uid := range n.ips {
		out = append(out, uid)
	}
	slices.Sort(out)
	return out, nil
}

func (n *fakeNet) Gateway() netip.Addr { return n.gw }

func (n *fakeNet) has(uid string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.ips[uid]
	return ok
}

// fakeAPI holds pods as the API server would for the agent's calls (status
// writes with resourceVersion checks, graceful deletion, delete
// preconditions) and tells the agent about changes like an informer.
type fakeAPI struct {
	log *callLog

	mu       sync.Mutex
	rv       int64
	pods     map[string]*api.Pod // ns/name
	down     bool                // every call fails (an outage)
	statuses []api.PodStatus     // every status written, in order
	notify   func(obj api.Object, deleted bool)
}

func newFakeAPI(log *callLog) *fakeAPI { return &fakeAPI{log: log, pods: map[string]*api.Pod{}} }

func (f *fakeAPI) outage(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

var errUnavailable = client.NewAPIError(http.StatusServiceUnavailable, "ServiceUnavailable", "the server is down")

// put stores a pod (as a create or a spec change by someone else) and
// tells the agent.
func (f *fakeAPI) put(p *api.Pod) *api.Pod {
	f.mu.Lock()
	f.rv++
	p = api.DeepCopy(p)
	p.ResourceVersion = strconv.FormatInt(f.rv, 10)
	f.pods[p.Namespace+"/"+p.Name] = p
	out := api.DeepCopy(p)
	notify := f.notify
	f.mu.Unlock()
	if notify != nil {
		notify(out, false)
	}
	return out
}

func (f *fakeAPI) Get(namespace, name string) (api.Object, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pods[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return api.DeepCopy(p), true
}

func (f *fakeAPI) pod(name string) *api.Pod {
	o, ok := f.Get("default", name)
	if !ok {
		return nil
	}
	return o.(*api.Pod)
}

func (f *fakeAPI) writes() []api.PodStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.statuses)
}

// API interface.

func (f *fakeAPI) get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error {
	return errors.New("fakeAPI: get not used by pod workers")
}

func (f *fakeAPI) Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error {
	return errors.New("fakeAPI: create not used by pod workers")
}

func (f *fakeAPI) Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, sub ...string) error {
	f.mu.Lock()
	if f.down {
		f.mu.Unlock()
		return errUnavailable
	}
	p := obj.(*api.Pod)
	cur, ok := f.pods[ns+"/"+p.Name]
	if !ok {
		f.mu.Unlock()
		return client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "pods %q not found", p.Name)
	}
	if len(sub) != 1 || sub[0] != "status" {
		f.mu.Unlock()
		return errors.New("fakeAPI: only status updates")
	}
	if p.ResourceVersion != cur.ResourceVersion {
		f.mu.Unlock()
		return client.NewAPIError(http.StatusConflict, api.StatusReasonConflict, "stale resourceVersion")
	}
	f.rv++
	next := api.DeepCopy(cur)
	next.Status = p.Status
	next.ResourceVersion = strconv.FormatInt(f.rv, 10)
	f.pods[ns+"/"+p.Name] = next
	f.statuses = append(f.statuses, next.Status)
	*p = *api.DeepCopy(next)
	f.log.add("status %s phase=%s ready=%v restarts=%v", p.Name, next.Status.Phase, readyOf(next), restartsOf(next))
	out := api.DeepCopy(next)
	notify := f.notify
	f.mu.Unlock()
	if notify != nil {
		notify(out, false)
	}
	return nil
}

func (f *fakeAPI) Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error {
	f.mu.Lock()
	if f.down {
		f.mu.Unlock()
		return errUnavailable
	}
	cur, ok := f.pods[ns+"/"+name]
	if !ok {
		f.mu.Unlock()
		return client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "pods %q not found", name)
	}
	if p := opts.Preconditions; p != nil && p.UID != "" && p.UID != string(cur.UID) {
		f.mu.Unlock()
		return client.NewAPIError(http.StatusConflict, api.StatusReasonConflict, "uid precondition")
	}
	grace := int64(-1)
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	f.log.add("delete %s grace=%d uid=%v", name, grace, opts.Preconditions != nil && opts.Preconditions.UID == string(cur.UID))
	if grace != 0 {
		f.mu.Unlock()
		return errors.New("fakeAPI: the agent deletes with grace 0 only")
	}
	delete(f.pods, ns+"/"+name)
	notify := f.notify
	f.mu.Unlock()
	if notify != nil {
		notify(cur, true)
	}
	return nil
}

// markDeleted is a user's graceful DELETE: deletionTimestamp and grace.
func (f *fakeAPI) markDeleted(name string, grace int64) {
	p := f.pod(name)
	t := api.NewTime(time.Now().Add(time.Duration(grace) * time.Second))
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &t, &grace
	f.log.add("user-delete %s grace=%d", name, grace)
	f.put(p)
}

// apiGet adapts fakeAPI to the API interface's Get.
type fakeAPIClient struct{ *fakeAPI }

func (c fakeAPIClient) Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error {
	return c.get(ctx, info, ns, name, into)
}

func readyOf(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func restartsOf(p *api.Pod) []int32 {
	var out []int32
	for _, cs := range p.Status.ContainerStatuses {
		out = append(out, cs.RestartCount)
	}
	return out
}

// fakeRecorder keeps events as "Type Reason: message".
type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *fakeRecorder) Eventf(obj api.Object, typ, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s: %s", typ, reason, fmt.Sprintf(format, args...)))
}

func (r *fakeRecorder) has(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if strings.Contains(e, sub) {
			return true
		}
	}
	return false
}
