// Package netexec is Skiff's test workload, `skiff netexec`, modelled on
// Kubernetes' agnhost netexec (test/images/agnhost/netexec): an HTTP server
// and a UDP server that end-to-end tests run as pods to check reachability,
// source addresses, DNS and probes.
//
// # HTTP (Config.HTTPPort, 8080 by default)
//
//   - /             "NOW: <time>"
//   - /hostname     the pod name (Config.PodName: $POD_NAME, else the host
//     name, which the process runtime sets to the pod name); /hostName too
//   - /clientip     the caller's ip:port as the server sees it
//   - /echo?msg=M[&code=C]   M, with status C (default 200)
//   - /healthz      200 until /sethealth?status=N sets another status
//   - /sethealth?status=N    N in 100..599, for probe tests
//   - /exit?code=N  answers, then the server shuts down and Run returns
//     *ExitError{Code: N} (N in 0..255, default 0); `skiff netexec` exits
//     the process with N
//   - /dial?host=&port=&request=&protocol=http|udp&tries=N makes N requests
//     to host:port from this pod and answers
//     {"responses":[...],"errors":[...]} (a key is left out when its list is
//     empty, as agnhost does). host is resolved once, through
//     Config.Resolver: by default Go's own resolver (PreferGo), which reads
//     /etc/hosts and /etc/resolv.conf, so inside a pod it uses the pod's
//     files. protocol http sends GET http://host:port/<request>; udp sends
//     <request> as one datagram and takes one datagram back. Each try has
//     its own connection and Config.DialTimeout (default 5 s). Bad
//     parameters, or a host that does not resolve, answer 400 as agnhost.
//
// # UDP (Config.UDPPort, 8081 by default; negative: none)
//
// One datagram in, at most one out: "hostname" answers the pod name,
// "echo <msg>" answers <msg>, "clientip" answers the sender's ip:port.
// Commands match case-insensitively; unlike agnhost, the echoed message
// keeps its case.
//
// # Invariants
//
//   - Nothing here calls os.Exit: /exit makes Run return *ExitError and the
//     command turns that into the exit status, after the response has been
//     written (the HTTP server shuts down gracefully first).
//   - Run returns nil when ctx is cancelled, after a graceful shutdown.
package netexec
