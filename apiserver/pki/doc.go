// Package pki bootstraps, on the server's first start, the TLS material and
// tokens Skiff's API needs, in its data dir, and loads them on every later
// start.
//
//	b, err := pki.Ensure(ctx, dataDir, pki.Options{
//		SANs:   append(nodeAddrs, tlsSANs...),
//		Server: "https://127.0.0.1:6443",
//		Logger: log,
//	})
//	srv := &http.Server{TLSConfig: b.ServerTLS, ...}
//
// # Layout
//
//	<dir>/                  0700 when created (an existing dir is left as is)
//	  tls/                  0700
//	    ca.crt              0644  CA certificate (ECDSA P-256, 10 years)
//	    ca.key              0600  CA key (PKCS #8 PEM)
//	    server.crt          0644  serving certificate (ECDSA P-256, 1 year)
//	    server.key          0600  serving key
//	    service-account.key 0600  signs ServiceAccount tokens (ServiceAccountKey;
//	                              made on first use, never renewed; delete to rotate)
//	  tokens/               0700
//	    admin               0600  full-access bearer token
//	    node                0600  node-join token
//	    dashboard           0600  read-only token for the dashboard
//	  admin.kubeconfig      0600  kubeconfig for the admin token
//
// Tokens are 32 bytes from crypto/rand, hex encoded (64 characters).
//
// # Invariants
//
//   - Every write is atomic: a temporary file in the same directory,
//     fsynced, renamed over the target, then the directory fsynced. A crash
//     leaves each file whole or absent; leftover temporary files
//     (.skiff-tmp-*) are removed on the next start.
//   - A restart reuses every file byte for byte; Ensure is idempotent.
//   - The CA and the tokens are never replaced. A CA certificate without
//     its key, a CA key that does not match, an empty token: Ensure fails
//     rather than mint new ones, which would strand every kubeconfig and
//     joined node. (A CA key without a certificate, which only a crash
//     between the two writes can leave, gets its certificate.) Files an
//     operator puts there first (their own CA, chosen tokens) are used.
//   - The serving certificate is derived data: it is re-issued, from the
//     same CA and with the same key when that key is readable, when it is
//     missing or unreadable, does not match its key, does not chain to the
//     CA, has less than 30 days left, or lacks a requested SAN (a new
//     --tls-san or node address). SANs dropped from the request do not
//     trigger a re-issue.
//   - The serving certificate always names localhost, 127.0.0.1, ::1 and
//     the host of Options.Server, plus Options.SANs, split into DNSNames
//     and IPAddresses; it never outlives the CA.
//   - admin.kubeconfig always holds Options.Server, the CA and the admin
//     token: it is rewritten when any of them changed, and only then.
//   - Secrets (keys, tokens, kubeconfig) and the tls/ and tokens/ dirs are
//     never readable by group or others: looser modes found on start are
//     tightened.
//   - Ensure runs before the server listens, in one process per data dir;
//     it takes no lock.
//
// # Kubeconfig
//
// WriteKubeconfig writes the standard kubeconfig YAML that kubectl and
// client-go read (one cluster, user and context, current-context skiff).
// LoadKubeconfig resolves a kubeconfig's current context to a server URL,
// CA, token and namespace, for Skiff's CLI.
package pki
