package netagent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// LeaseNamespace holds the nodes' heartbeat Leases (name = node name).
const LeaseNamespace = "kube-node-lease"

// Node labels the agent sets, as the kubelet does: the hostname, and the
// os and arch under their stable and their deprecated beta names (old
// manifests still select beta.kubernetes.io/os).
const (
	LabelHostname = "kubernetes.io/hostname"
	LabelOS       = "kubernetes.io/os"
	LabelArch     = "kubernetes.io/arch"
	LabelOSBeta   = "beta.kubernetes.io/os"
	LabelArchBeta = "beta.kubernetes.io/arch"
)

// nodeState is what the node reports about itself; guarded by its mutex.
type nodeState struct {
	mu sync.Mutex
	// known: the agent has decided about readiness. Until then an existing
	// Ready condition is left alone, so an agent restart does not flip a
	// healthy node (and with it its pods) to not ready.
	known   bool
	ready   bool
	reason  string
	message string
	changed chan struct{} // poked when ready changes
}

func (s *nodeState) set(ready bool, reason, message string) {
	s.mu.Lock()
	changed := !s.known || s.ready != ready || s.reason != reason
	s.known, s.ready, s.reason, s.message = true, ready, reason, message
	s.mu.Unlock()
	if changed {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

func (s *nodeState) get() (known, ready bool, reason, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.known, s.ready, s.reason, s.message
}

// retry calls f until it succeeds or ctx ends, backing off from 200ms to
// 10s and logging every failure after the first few.
func (a *Agent) retry(ctx context.Context, what string, f func() error) error {
	delay := 200 * time.Millisecond
	for n := 1; ; n++ {
		err := f()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fatal fatalJoin
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if n >= 3 {
			a.log.Warn(what+" failed, retrying", "err", err, "attempt", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// desiredNode is the Node as the agent registers it.
func (a *Agent) desiredNode() *api.Node {
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: a.cfg.NodeName, Labels: map[string]string{
		LabelHostname: a.cfg.NodeName,
		LabelOS:       goruntime.GOOS,
		LabelArch:     goruntime.GOARCH,
		LabelOSBeta:   goruntime.GOOS,
		LabelArchBeta: goruntime.GOARCH,
	}}}
	n.Annotations = map[string]string{AnnotationStorageDir: a.storageDir()} // claims.go
	if url, sum, _ := a.nodeAPIInfo(); url != "" {
		n.Annotations[AnnotationNodeAPI], n.Annotations[AnnotationNodeAPICert] = url, sum
	}
	n.Status = a.nodeStatus(api.NodeStatus{})
	return n
}

// nodeAPIInfo is what the Node publishes of the node API.
func (a *Agent) nodeAPIInfo() (url, certSum string, port int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.napi == nil {
		return "", "", 0
	}
	return a.napi.url, a.napi.cert, a.napi.port
}

// nodeStatus is the node's status, keeping the transition time of an
// unchanged Ready condition from prev.
func (a *Agent) nodeStatus(prev api.NodeStatus) api.NodeStatus {
	now := api.NewTime(time.Now())
	known, ready, reason, msg := a.state.get()
	cond := api.NodeCondition{Type: api.NodeReady, Status: api.ConditionFalse, Reason: reason, Message: msg,
		LastHeartbeatTime: now, LastTransitionTime: now}
	if ready {
		cond.Status = api.ConditionTrue
	}
	for _, c := range prev.Conditions {
		if c.Type != api.NodeReady {
			continue
		}
		if !known {
			cond = c // not decided yet: keep what the node said before
		} else if c.Status == cond.Status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
	}
	res := api.ResourceList{
		"cpu":    api.Quantity(strconv.Itoa(a.host.cpus)),
		"memory": api.Quantity(strconv.FormatInt(a.host.memKi, 10) + "Ki"),
		"pods":   api.Quantity(strconv.Itoa(a.cfg.MaxPods)),
	}
	st := api.NodeStatus{
		Capacity:    res,
		Allocatable: maps.Clone(res),
		Conditions:  []api.NodeCondition{cond},
		NodeInfo:    a.host.nodeInfo,
	}
	if _, _, port := a.nodeAPIInfo(); port > 0 {
		st.DaemonEndpoints.KubeletEndpoint.Port = port
	}
	for _, ip := range a.cfg.NodeIPs {
		st.Addresses = append(st.Addresses, api.NodeAddress{Type: api.NodeInternalIP, Address: ip.String()})
	}
	st.Addresses = append(st.Addresses, api.NodeAddress{Type: api.NodeHostName, Address: a.cfg.NodeName})
	// Conditions other than Ready (set by others) are kept.
	for _, c := range prev.Conditions {
		if c.Type != api.NodeReady {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// register creates the Node (or adopts the existing one, fixing its
// labels) and posts its status.
func (a *Agent) register(ctx context.Context) error {
	return a.retry(ctx, "registering the node", func() error {
		want := a.desiredNode()
		err := a.api.Create(ctx, a.res.nodes, "", want)
		switch {
		case err == nil:
			a.log.Info("node registered", "node", a.cfg.NodeName)
		case client.IsAlreadyExists(err):
			var have api.Node
			if err := a.api.Get(ctx, a.res.nodes, "", a.cfg.NodeName, &have); err != nil {
				return err
			}
			missing := false
			for k, v := range want.Labels {
				if have.Labels[k] != v {
					missing = true
				}
			}
			for k, v := range want.Annotations {
				if have.Annotations[k] != v {
					missing = true
				}
			}
			if missing {
				if have.Labels == nil {
					have.Labels = map[string]string{}
				}
				maps.Copy(have.Labels, want.Labels)
				if len(want.Annotations) > 0 && have.Annotations == nil {
					have.Annotations = map[string]string{}
				}
				maps.Copy(have.Annotations, want.Annotations)
				if err := a.api.Update(ctx, a.res.nodes, "", &have); err != nil {
					return err
				}
			}
			a.log.Info("node already registered", "node", a.cfg.NodeName, "podCIDR", have.Spec.PodCIDR)
		default:
			return a.authErr(err)
		}
		return a.postStatus(ctx)
	})
}

// postStatus writes the node's status (Ready condition with a fresh
// heartbeat, addresses, capacity, nodeInfo).
func (a *Agent) postStatus(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		var n api.Node
		if err := a.api.Get(ctx, a.res.nodes, "", a.cfg.NodeName, &n); err != nil {
			return a.authErr(err)
		}
		n.Status = a.nodeStatus(n.Status)
		err := a.api.Update(ctx, a.res.nodes, "", &n, "status")
		if client.IsConflict(err) && attempt < 3 {
			continue
		}
		if err != nil {
			return a.authErr(err)
		}
		a.setNode(&n)
		return nil
	}
}

// setNode keeps the latest Node the agent saw.
func (a *Agent) setNode(n *api.Node) {
	a.mu.Lock()
	a.node = n
	a.mu.Unlock()
}

// waitPodCIDR polls the Node until the nodeipam controller has given it
// a podCIDR.
func (a *Agent) waitPodCIDR(ctx context.Context) (netip.Prefix, error) {
	var p netip.Prefix
	logged := false
	err := a.retry(ctx, "reading the node", func() error {
		for {
			var n api.Node
			if err := a.api.Get(ctx, a.res.nodes, "", a.cfg.NodeName, &n); err != nil {
				return a.authErr(err)
			}
			if n.Spec.PodCIDR != "" {
				q, err := netip.ParsePrefix(n.Spec.PodCIDR)
				if err != nil {
					return fmt.Errorf("netagent: node podCIDR %q: %w", n.Spec.PodCIDR, err)
				}
				p = q
				a.setNode(&n)
				return nil
			}
			if !logged {
				a.log.Info("waiting for a podCIDR (the server's nodeipam controller assigns it)")
				logged = true
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	return p, err
}

// serviceCIDR reads the default ServiceCIDR ("kubernetes").
func (a *Agent) readServiceCIDR(ctx context.Context) (netip.Prefix, error) {
	var p netip.Prefix
	err := a.retry(ctx, "reading the service CIDR", func() error {
		var sc api.ServiceCIDR
		if err := a.api.Get(ctx, a.res.serviceCIDRs, "", "kubernetes", &sc); err != nil {
			return a.authErr(err)
		}
		if len(sc.Spec.CIDRs) == 0 {
			return fmt.Errorf("netagent: ServiceCIDR kubernetes has no cidrs")
		}
		q, err := netip.ParsePrefix(sc.Spec.CIDRs[0])
		if err != nil {
			return err
		}
		p = q.Masked()
		return nil
	})
	return p, err
}

// heartbeat renews the node's Lease every LeaseRenewInterval and re-posts
// the node status on every readiness change and every NodeStatusInterval.
func (a *Agent) heartbeat(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { a.leaseLoop(ctx) })
	wg.Go(func() {
		t := time.NewTicker(a.cfg.NodeStatusInterval)
		defer t.Stop()
		for {
			if err := a.postStatus(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("posting the node status failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-a.state.changed:
			}
		}
	})
	wg.Wait()
}

func (a *Agent) leaseLoop(ctx context.Context) {
	t := time.NewTicker(a.cfg.LeaseRenewInterval)
	defer t.Stop()
	var lease *api.Lease
	for {
		var err error
		lease, err = a.renewLease(ctx, lease)
		if err != nil && ctx.Err() == nil {
			a.log.Warn("renewing the node lease failed", "err", err)
			lease = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// renewLease updates (or creates) the node's Lease; cur is the last
// version written (nil: read it first).
func (a *Agent) renewLease(ctx context.Context, cur *api.Lease) (*api.Lease, error) {
	now := api.MicroTime{Time: time.Now().UTC().Truncate(time.Microsecond)}
	if cur == nil {
		var l api.Lease
		err := a.api.Get(ctx, a.res.leases, LeaseNamespace, a.cfg.NodeName, &l)
		switch {
		case client.IsNotFound(err):
			holder := a.cfg.NodeName
			dur := int32(a.cfg.LeaseDuration / time.Second)
			l = api.Lease{
				ObjectMeta: api.ObjectMeta{Name: a.cfg.NodeName, Namespace: LeaseNamespace},
				Spec:       api.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now},
			}
			a.mu.Lock()
			if n := a.node; n != nil && n.UID != "" {
				l.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}}
			}
			a.mu.Unlock()
			if err := a.api.Create(ctx, a.res.leases, LeaseNamespace, &l); err != nil {
				return nil, a.authErr(err)
			}
			return &l, nil
		case err != nil:
			return nil, a.authErr(err)
		}
		cur = &l
	}
	l := api.DeepCopy(cur)
	l.Spec.RenewTime = &now
	if err := a.api.Update(ctx, a.res.leases, LeaseNamespace, l); err != nil {
		return nil, a.authErr(err)
	}
	return l, nil
}
