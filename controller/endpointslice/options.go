package endpointslice

import (
	"errors"
	"fmt"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Names the controller writes and reads, as Kubernetes spells them.
const (
	// ControllerName is the value of the managed-by label on every slice
	// this controller owns; slices with another value are never touched.
	ControllerName = "endpointslice-controller.k8s.io"
	// LabelHeadless marks the slices of a headless Service.
	LabelHeadless = "service.kubernetes.io/headless"
	// AnnotationLastChangeTriggerTime is the time (RFC 3339 with
	// nanoseconds) of the change that led to the slice's last write: the
	// pod's Ready transition, or the Service's creation.
	AnnotationLastChangeTriggerTime = "endpoints.kubernetes.io/last-change-trigger-time"
)

// Limits of Options.MaxEndpointsPerSlice.
const (
	DefaultMaxEndpointsPerSlice = 100
	MaxMaxEndpointsPerSlice     = api.MaxEndpointsPerSlice // 1000, the API's limit
)

// ErrInvalidOptions is returned by Options.Validate and by Run for bad
// options.
var ErrInvalidOptions = errors.New("endpointslice: invalid options")

// Retries of a failed sync.
const (
	// maxRetries is how many times in a row a Service's sync may fail
	// and be retried; then it is dropped (and logged) until its next
	// change.
	maxRetries = 15
	// Back-off of failed syncs.
	backoffBase = 20 * time.Millisecond
	backoffMax  = 100 * time.Second
)

// DefaultWorkers is the default of Options.Workers.
const DefaultWorkers = 4

// EventRecorder records Kubernetes Events about an object. It is the
// consumer-side view of client/record; nil means no events.
type EventRecorder interface {
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Options tune the controller. The zero value is valid: every field has a
// default.
type Options struct {
	// MaxEndpointsPerSlice bounds the endpoints of one slice
	// (--max-endpoints-per-slice): 0 means DefaultMaxEndpointsPerSlice,
	// otherwise 1..1000.
	MaxEndpointsPerSlice int
	// Workers is how many Services are synced at once; 0 means
	// DefaultWorkers.
	Workers int
}

// Validate reports options out of range.
func (o Options) Validate() error {
	if o.MaxEndpointsPerSlice < 0 || o.MaxEndpointsPerSlice > MaxMaxEndpointsPerSlice {
		return fmt.Errorf("%w: max endpoints per slice %d: must be between 1 and %d (0 for the default %d)",
			ErrInvalidOptions, o.MaxEndpointsPerSlice, MaxMaxEndpointsPerSlice, DefaultMaxEndpointsPerSlice)
	}
	return nil
}

// withDefaults fills unset fields.
func (o Options) withDefaults() Options {
	if o.MaxEndpointsPerSlice == 0 {
		o.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	return o
}
