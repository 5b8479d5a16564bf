package cni

import "errors"

var (
	// ErrInvalidConfig is returned by New for a Config it cannot run.
	ErrInvalidConfig = errors.New("cni: invalid config")
	// ErrNotSetUp is returned by AddPod before a successful Setup: a pod
	// must not create the bridge itself (without the service route).
	ErrNotSetUp = errors.New("cni: network not set up")
	// ErrInvalidPodUID is returned for a pod UID that cannot name a
	// namespace file or a CNI container ID.
	ErrInvalidPodUID = errors.New("cni: invalid pod UID")
	// ErrInvalidPortMapping is returned by AddPod for a bad port mapping.
	ErrInvalidPortMapping = errors.New("cni: invalid port mapping")
	// ErrLinkNotFound is wrapped by Links.Link when no link has the name.
	ErrLinkNotFound = errors.New("cni: link not found")
	// ErrNoPodIP is returned when a CNI result holds no IPv4 address in
	// the pod CIDR for the pod's interface.
	ErrNoPodIP = errors.New("cni: no pod IP in CNI result")
)
