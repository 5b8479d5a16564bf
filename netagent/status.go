package netagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/workqueue"
)

// API is what the agent needs of the API server; *client.Client
// satisfies it.
type API interface {
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
}

var _ API = (*client.Client)(nil)

// podCache is the informer of the node's pods.
type podCache interface {
	Get(namespace, name string) (api.Object, bool)
}

// Status write retries: conflicts come back fast, outages back off.
const (
	statusBackoffBase = 200 * time.Millisecond
	statusBackoffMax  = 10 * time.Second
)

// statusManager writes pod statuses through pods/status: only when the
// status the workers want differs from what the API holds, retried until
// it lands (an outage of the server delays writes, never drops them).
//
// The API's view is the informer's pod, unless it is older than a status
// this manager wrote itself (then that write is the view), so a lagging
// cache does not cause rewrites.
type statusManager struct {
	api  API
	pods podCache
	res  *api.ResourceInfo
	log  *slog.Logger

	queue *workqueue.Queue[string]

	// mu protects want.
	mu   sync.Mutex
	want map[string]*statusEntry // by pod UID
}

type statusEntry struct {
	ns, name string
	st       api.PodStatus
	// written is the last status this manager wrote, at writtenRV.
	written   *api.PodStatus
	writtenRV int64
}

func newStatusManager(a API, pods podCache, log *slog.Logger) *statusManager {
	return &statusManager{
		api: a, pods: pods, log: log,
		res:   api.Lookup(api.Resources(), "v1", "pods"),
		queue: workqueue.New[string](statusBackoffBase, statusBackoffMax),
		want:  map[string]*statusEntry{},
	}
}

// set records the status pod (its UID, namespace and name) should have.
func (m *statusManager) set(pod *api.Pod, st api.PodStatus) {
	uid := string(pod.UID)
	m.mu.Lock()
	e := m.want[uid]
	if e == nil {
		e = &statusEntry{ns: pod.Namespace, name: pod.Name}
		m.want[uid] = e
	}
	e.st = st
	m.mu.Unlock()
	m.queue.Add(uid)
}

// forget drops a pod (after it is gone).
func (m *statusManager) forget(uid string) {
	m.mu.Lock()
	delete(m.want, uid)
	m.mu.Unlock()
	m.queue.Forget(uid)
}

// run writes statuses with workers goroutines until ctx ends
// (workqueue.Run: a failed write is retried with back-off, logged at Debug
// for its first three retries and at Warn after).
func (m *statusManager) run(ctx context.Context, workers int) {
	workqueue.Run(ctx, m.queue, m.sync, workqueue.Options[string]{
		Workers: workers,
		Log:     m.log,
		KeyName: "uid",
		RetryLevel: func(f workqueue.Failure[string]) slog.Level {
			if f.Retries > 3 {
				return slog.LevelWarn
			}
			return slog.LevelDebug
		},
	})
}

// sync writes uid's wanted status if the API's view differs.
func (m *statusManager) sync(ctx context.Context, uid string) error {
	m.mu.Lock()
	e, ok := m.want[uid]
	if !ok {
		m.mu.Unlock()
		return nil
	}
	ns, name, want := e.ns, e.name, e.st
	written, writtenRV := e.written, e.writtenRV
	m.mu.Unlock()

	obj, ok := m.pods.Get(ns, name)
	if !ok {
		return nil // gone from the API: nothing to write
	}
	cur := obj.(*api.Pod)
	if string(cur.UID) != uid {
		return nil // another pod of that name
	}
	view := cur.Status
	rv, _ := strconv.ParseInt(cur.ResourceVersion, 10, 64)
	p := api.DeepCopy(cur)
	if written != nil && rv < writtenRV {
		view = *written
		p.ResourceVersion = strconv.FormatInt(writtenRV, 10)
	}
	if statusEqual(view, want) {
		return nil
	}
	p.Status = want
	t0 := time.Now()
	err := m.api.Update(ctx, m.res, ns, p, "status")
	m.log.Debug("pod status written", "pod", ns+"/"+name, "took", time.Since(t0), "err", err, "ready", podReadyOf(want))
	if err != nil {
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("netagent: status of pod %s/%s: %w", ns, name, err)
	}
	newRV, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
	m.mu.Lock()
	if e, ok := m.want[uid]; ok {
		st := want
		e.written, e.writtenRV = &st, newRV
	}
	m.mu.Unlock()
	return nil
}

// statusEqual compares two statuses as the API would serialize them.
func statusEqual(a, b api.PodStatus) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func podReadyOf(st api.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}
