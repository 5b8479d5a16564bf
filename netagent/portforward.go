package netagent

import "net/http"

// portForwardHandler serves the node API's
// /portforward/{namespace}/{pod} (an upgrade, as the kubelet's); nil
// answers 501 (streamRoutes).
func (a *Agent) portForwardHandler() http.Handler { return nil }
