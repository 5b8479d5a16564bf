package endpointslice

// Idle reports whether the controller has no Service queued, being synced
// or waiting for a retry (for the integration tests' barriers).
func Idle(c *Controller) bool { return c.idle() }
