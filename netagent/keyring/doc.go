// Package keyring turns a pod's image pull secrets into the credentials
// of one image pull, by the kubelet's rules (k8s.io/kubernetes
// pkg/credentialprovider: keyring.go, config.go, secrets.go).
//
// # Secrets
//
// A Secret of type kubernetes.io/dockerconfigjson gives its
// .dockerconfigjson key's "auths" map; one of type kubernetes.io/dockercfg
// gives its .dockercfg key, which is that map itself. Other Secrets, and
// those whose key is missing or empty, give nothing. A key that is not
// JSON, or an "auth" that is not base64("user:password"), is an error
// (the kubelet fails the pull with it). An entry's "auth" wins over its
// "username" and "password" fields.
//
// # Matching
//
// Each entry's key is a registry host[:port] with an optional path; a
// scheme (https:// or http://) is stripped, and a path starting /v1/ or
// /v2/ counts as the host alone. An image (its repository, without tag or
// digest: "127.0.0.1:5000/team/app") matches a key when the port is the
// same, the host has as many dot-separated parts, each part matches as a
// glob (path.Match: "*.example.com"), and the key's path is a prefix of
// the image's. Every matching key's credentials are returned, the keys in
// reverse lexical order (more specific paths first), and, under one key,
// in the order of the pod's secrets. When nothing matches, the
// credentials of "index.docker.io" (or "https://index.docker.io/v1/")
// apply to an image of Docker Hub. No credentials means an anonymous pull;
// the caller tries the credentials one by one and stops at the first that
// pulls.
//
// # Never logged
//
// AuthConfig's String and LogValue print the user name only, so a
// credential reaching a log line or an error by %v shows no password.
package keyring
