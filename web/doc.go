// Package web is Skiff's dashboard: a single-page app (plain JavaScript
// modules and CSS, embedded with go:embed, no build step and no CDN) and
// the few endpoints behind it, served by `skiff server` on its HTTPS
// listener at "/".
//
// # Routes
//
// "/" is the app; "/ui/assets/*" its files (versioned, gzipped, immutable);
// "/ui/login", "/ui/logout" and "/ui/session" the session; "/ui/proxy/*"
// forwards to the API ("/ui/proxy/api/v1/pods" is GET /api/v1/pods);
// "/ui/watch" is one Server-Sent Events stream of the API's watches;
// "/ui/apply" applies a YAML manifest (kubectl's client-side apply:
// the last-applied-configuration annotation and a three-way strategic
// merge patch from kubectl/threeway, so a field removed from the manifest
// is removed from the object); "/ui/trace" a pod's packet path;
// "/ui/secrets" Secrets as names, types and key sizes (never a value: the
// page reveals one through /ui/proxy, from the API itself);
// "/ui/services/{ns}/{name}" a Service's DNS names (as package dns
// answers them, through dns/source's conversion) and its Endpoints object
// with the stored sizes of it and of its EndpointSlices;
// "/ui/exec/{ns}/{pod}" the pod terminal's WebSocket, handed to the API's
// pods/exec in process with the session's token (exec.go).
// Everything else on the listener is the API's (Owns tells them apart).
//
// # Sessions
//
// A login takes a bearer token (the admin token, or the read-only
// dashboard token) and keeps it in a sealed cookie (AES-256-GCM under a
// key derived from Config.SessionKey): HttpOnly, Secure, SameSite=Strict,
// with the __Host- prefix. The server keeps no session state, so a session
// survives a server restart when the key does. Every request re-checks
// the token with Config.Authenticate, so rotating a token ends its
// sessions. Wrong tokens are limited per client address (loginlimit.go):
// after a burst of 10, one every 6 s, and while an address waits every
// login from it, good or not, gets 429 with Retry-After.
//
// # Invariants
//
//   - The dashboard never acts with more rights than the session's token:
//     every API call, read or write, carries that token and goes through
//     the API's own authentication and authorization, in process.
//   - Every request but GET/HEAD needs the session's CSRF token (an HMAC of
//     the session's nonce, which only a same-origin page can read from
//     /ui/session) in the X-Skiff-CSRF header, and must not come from
//     another origin (Origin, Sec-Fetch-Site). Login takes JSON only.
//   - The browser's watch stream restarts from the current state whenever
//     any underlying API watch ends, so the page never shows a state with
//     a change missed; EventSource reconnects by itself, and the app
//     reconnects again after a restart that outlasts EventSource's retry.
//     The page keeps showing a resource's old state until its new one is
//     complete (the initial-events-end bookmark), then swaps.
//   - A Secret's value reaches the browser only when the user reveals
//     it, straight from the API with the session's token; nothing here
//     logs a value, and the watch stream never carries Secrets.
//   - A WebSocket (the terminal) is accepted only on /ui/exec and only
//     with an Origin header naming this host; the API sees the session's
//     token and neither the cookie nor the Origin.
//   - No asset is fetched from another origin; the Content-Security-Policy
//     allows only 'self'.
package web
