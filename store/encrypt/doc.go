// Package encrypt keeps Secrets encrypted at rest: a store.Interface
// wrapper that seals the values under one key prefix (the Secrets') with
// AES-GCM on their way into the store and opens them on the way out, as
// kube-apiserver's aesgcm encryption provider does under an
// EncryptionConfiguration that names only secrets (k3s's
// --secrets-encryption).
//
// # Values
//
// An encrypted value is
//
//	k8s:enc:aesgcm:v1:<key name>:<12-byte random nonce><ciphertext and 16-byte tag>
//
// upstream's layout: a new random nonce for every write, and the store key
// (/registry/core/secrets/<ns>/<name>) as the additional authenticated
// data, so a value copied under another key does not decrypt. A value that
// does not start with "k8s:enc:" is plaintext (upstream's identity
// provider) and is read as it is: a store written before encryption was
// turned on, or by a server without it, stays readable. A value that
// starts with "k8s:enc:" and cannot be opened (no key file, a key name the
// file does not hold, a wrong key, another provider) is an error wrapping
// ErrDecrypt that names the store key, the key and the key file, never an
// empty value.
//
// Only values are encrypted; keys (the namespace and name of each Secret),
// revisions and the sizes of values are not, as upstream. The watch
// history holds values as they were written, so it holds the encrypted
// ones; plaintext written before encryption was turned on stays in it
// (and in bbolt's free pages) until it is trimmed and overwritten.
//
// # What passes through
//
// Get, List, Watch and the Txn of Update decrypt what they read under the
// prefix and Put encrypts what it writes there; a List or Watch whose
// prefix cannot hold a covered key (every resource but Secrets) is the
// inner store's, untouched, so the wrapper costs nothing off the Secrets.
// Revisions, create and mod revisions, pagination and the watch's
// progress, compaction and slow-watcher errors are the inner store's.
// A watch over Secrets decrypts in a goroutine between the inner channel
// and its own (of the same capacity); a value it cannot open ends the
// watch with an EventError. The API server's size limit applies to the
// object before encryption (1.5 MiB); the stored value is 47 bytes and
// the key name longer.
//
// # The key file
//
// Keys is a JSON file in the form of kube-apiserver's
// EncryptionConfiguration (apiserver.config.k8s.io/v1), limited to what
// Skiff does:
//
//	{
//	  "kind": "EncryptionConfiguration",
//	  "apiVersion": "apiserver.config.k8s.io/v1",
//	  "resources": [{
//	    "resources": ["secrets"],
//	    "providers": [
//	      {"aesgcm": {"keys": [{"name": "aesgcmkey-20261202T065000Z", "secret": "<base64 of 32 bytes>"}]}},
//	      {"identity": {}}
//	    ]
//	  }]
//	}
//
// The first key encrypts, every key decrypts (upstream's rule); identity
// last reads plaintext. Create makes the file (0600, in a 0700 directory,
// through a synced temporary file renamed into place) with one AES-256
// key; Rotate puts a new key first and keeps the older ones after it. Keys
// of 16, 24 or 32 bytes are read. Anything else in the file (another
// resource, another provider, an unknown field) is an error naming the
// file and the field.
//
// # Rewrite
//
// Rewrite writes again, in transactions of 100, every value that is not as
// a write would store it now: with encryption on, the plaintext ones and
// those of older keys. Each commits at a new revision with its
// resourceVersion restamped, as upstream's storage migration does (a
// no-op update that the transformer marks stale). Scan only counts, and
// fails on the first value it cannot open.
package encrypt
