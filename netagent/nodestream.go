package netagent

import (
	"net/http"
)

// streamRoutes adds the node API's upgrade paths: exec, attach (this
// file) and portforward (portForwardHandler).
func (a *Agent) streamRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", a.serveExec)
	mux.HandleFunc("/attach/{namespace}/{pod}/{container}", a.serveAttach)
	if h := a.portForwardHandler(); h != nil {
		mux.Handle("/portforward/{namespace}/{pod}", h)
	} else {
		mux.HandleFunc("/portforward/{namespace}/{pod}", func(w http.ResponseWriter, _ *http.Request) {
			writeNodeAPIError(w, nodeAPIErrorf(http.StatusNotImplemented, "node %s does not serve port-forward", a.cfg.NodeName))
		})
	}
}

func (a *Agent) serveExec(w http.ResponseWriter, r *http.Request) {
	writeNodeAPIError(w, nodeAPIErrorf(http.StatusNotImplemented, "node %s does not serve exec yet", a.cfg.NodeName))
}

func (a *Agent) serveAttach(w http.ResponseWriter, r *http.Request) {
	writeNodeAPIError(w, nodeAPIErrorf(http.StatusNotImplemented, "node %s does not serve attach yet", a.cfg.NodeName))
}
