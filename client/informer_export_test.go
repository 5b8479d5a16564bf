package client

import "time"

// SetInformerTunables shortens an informer's page size and back-off for
// tests; call it before Run.
func SetInformerTunables(i *Informer, pageSize int64, backoffBase, backoffMax time.Duration) {
	i.pageSize = pageSize
	i.backoffBase = backoffBase
	i.backoffMax = backoffMax
}
