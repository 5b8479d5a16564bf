package server

// Secrets encrypted at rest (--secrets-encryption, as k3s's flag): the
// store the API server gets is store/encrypt's wrapper over the bbolt
// store, with the key file <data-dir>/cred/encryption-config.json (k3s's
// path; an EncryptionConfiguration of one aesgcm provider for secrets,
// then identity). The rules:
//
//   - with the flag, a missing key file is made (one AES-256 key, 0600)
//     unless encrypted Secrets are stored (the file was lost: the start is
//     refused),
//     new Secrets are written encrypted with the file's first key, and at
//     start every stored Secret that is plaintext or of an older key is
//     written again encrypted (logged: how many);
//   - without the flag, a key file that exists is still used to read the
//     Secrets it encrypted; new writes are plaintext;
//   - at every start, every stored Secret is read once (store/encrypt's
//     Scan): one that cannot be decrypted (no key file, a key the file
//     does not hold, a wrong key) refuses the start with an error that
//     names the key file, instead of serving errors later;
//   - `skiff secrets-encrypt status|rotate` work offline, under the data
//     dir's lock, as `skiff backup`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/encrypt"
)

// EncryptionConfigFile is the key file of Secrets' encryption at rest,
// under the data dir.
const EncryptionConfigFile = "cred/encryption-config.json"

// secretsKeyPrefix is the store prefix of every Secret.
func secretsKeyPrefix(rs []*api.ResourceInfo) string {
	return podsPrefix(apiserver.KeyFor(resourceTable(rs)["secrets"], "", ""))
}

// restampSecret sets a stored Secret's resourceVersion to rev: Rewrite's
// writes commit at a new revision, and the stored JSON carries it.
func restampSecret(value []byte, rev int64) ([]byte, error) {
	var s api.Secret
	if err := json.Unmarshal(value, &s); err != nil {
		return nil, err
	}
	s.ResourceVersion = strconv.FormatInt(rev, 10)
	return json.Marshal(&s)
}

// openSecretsStore wraps st in store/encrypt by the rules above. enable is
// --secrets-encryption.
func openSecretsStore(ctx context.Context, dataDir string, rs []*api.ResourceInfo, st store.Interface, enable bool, log *slog.Logger) (*encrypt.Store, encrypt.Report, error) {
	path := filepath.Join(dataDir, EncryptionConfigFile)
	keys, err := encrypt.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && enable:
		// A lost key file is not replaced by a new one while Secrets
		// encrypted with it are stored.
		es, err := encrypt.New(st, encrypt.Options{Prefix: secretsKeyPrefix(rs), KeyFile: path})
		if err != nil {
			return nil, encrypt.Report{}, err
		}
		if _, err := es.Scan(ctx); err != nil {
			return nil, encrypt.Report{}, fmt.Errorf("server: the stored Secrets: %w", err)
		}
		if keys, err = encrypt.Create(path, time.Now()); err != nil {
			return nil, encrypt.Report{}, fmt.Errorf("server: --secrets-encryption: %w", err)
		}
		log.Info("secrets encryption: made a new key", "file", path, "key", keys.WriteKey())
	case errors.Is(err, fs.ErrNotExist):
		keys = nil
	case err != nil:
		return nil, encrypt.Report{}, fmt.Errorf("server: %w", err)
	}
	es, err := encrypt.New(st, encrypt.Options{
		Prefix: secretsKeyPrefix(rs), Keys: keys, KeyFile: path, Encrypt: enable, Restamp: restampSecret,
	})
	if err != nil {
		return nil, encrypt.Report{}, err
	}
	var rep encrypt.Report
	if enable {
		rep, err = es.Rewrite(ctx)
	} else {
		rep, err = es.Scan(ctx)
	}
	if err != nil {
		return nil, rep, fmt.Errorf("server: the stored Secrets: %w", err)
	}
	switch {
	case enable:
		log.Info("secrets encryption on", "file", path, "key", keys.WriteKey(),
			"secrets", rep.Plaintext+rep.Encrypted(), "rewritten", rep.Rewritten, "wasPlaintext", rep.Plaintext)
	case rep.Encrypted() > 0:
		log.Warn("secrets encryption off, but stored Secrets are encrypted: they are read with the key file, new writes are plaintext",
			"file", path, "encrypted", rep.Encrypted(), "plaintext", rep.Plaintext)
	}
	return es, rep, nil
}

// SecretsEncryptStatus is `skiff secrets-encrypt status`: the key file and
// how the stored Secrets are kept. The server must be stopped.
func SecretsEncryptStatus(ctx context.Context, dataDir string, out io.Writer) error {
	return withSecretsStore(ctx, dataDir, "status", func(st store.Interface, keys *encrypt.Keys, path string) error {
		es, err := newSecretsStore(st, keys, path, false)
		if err != nil {
			return err
		}
		rep, err := es.Scan(ctx)
		if err != nil {
			return err
		}
		if keys == nil {
			fmt.Fprintf(out, "Encryption key file: none (%s)\n", path)
		} else {
			fmt.Fprintf(out, "Encryption key file: %s\nKeys: %s (the first encrypts)\n", path, strings.Join(keys.Names(), ", "))
		}
		fmt.Fprintf(out, "Secrets: %d plaintext, %d encrypted\n", rep.Plaintext, rep.Encrypted())
		names := make([]string, 0, len(rep.ByKey))
		for n := range rep.ByKey {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(out, "  with %s: %d\n", n, rep.ByKey[n])
		}
		return nil
	})
}

// SecretsEncryptRotate is `skiff secrets-encrypt rotate`: a new key goes
// first in the key file (made if missing) and every stored Secret is
// written again with it. The older keys stay in the file after it: the
// watch history may hold values they encrypted. The server must be
// stopped; start it with --secrets-encryption afterwards.
func SecretsEncryptRotate(ctx context.Context, dataDir string, out io.Writer) error {
	return withSecretsStore(ctx, dataDir, "rotate", func(st store.Interface, keys *encrypt.Keys, path string) error {
		// Every Secret must be readable before the key changes.
		es, err := newSecretsStore(st, keys, path, false)
		if err != nil {
			return err
		}
		if _, err := es.Scan(ctx); err != nil {
			return err
		}
		if keys == nil {
			if keys, err = encrypt.Create(path, time.Now()); err != nil {
				return err
			}
		} else if err := keys.Rotate(time.Now()); err != nil {
			return err
		}
		if es, err = newSecretsStore(st, keys, path, true); err != nil {
			return err
		}
		rep, err := es.Rewrite(ctx)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "new key %s first in %s (keys: %s)\nre-encrypted %d Secrets with it\nstart the server with --secrets-encryption\n",
			keys.WriteKey(), path, strings.Join(keys.Names(), ", "), rep.Rewritten)
		return err
	})
}

func newSecretsStore(st store.Interface, keys *encrypt.Keys, path string, enable bool) (*encrypt.Store, error) {
	return encrypt.New(st, encrypt.Options{
		Prefix: secretsKeyPrefix(api.Resources()), Keys: keys, KeyFile: path, Encrypt: enable, Restamp: restampSecret,
	})
}

// withSecretsStore opens dataDir's store offline (under its lock) and its
// key file (nil when there is none), for the secrets-encrypt verbs.
func withSecretsStore(ctx context.Context, dataDir, verb string, fn func(st store.Interface, keys *encrypt.Keys, path string) error) error {
	lock, err := lockDataDir(dataDir, false)
	if err != nil {
		return fmt.Errorf("secrets-encrypt %s: %w", verb, err)
	}
	defer lock.release()
	db := filepath.Join(dataDir, dbFile)
	if _, err := os.Stat(db); err != nil {
		return fmt.Errorf("secrets-encrypt %s: %w", verb, err)
	}
	bolt, err := store.OpenBolt(ctx, db, store.BoltOptions{})
	if err != nil {
		return fmt.Errorf("secrets-encrypt %s: %w", verb, storeOpenError(dataDir, db, err))
	}
	path := filepath.Join(dataDir, EncryptionConfigFile)
	keys, err := encrypt.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		keys, err = nil, nil
	}
	if err == nil {
		err = fn(bolt, keys, path)
	}
	if err != nil {
		bolt.Close()
		return fmt.Errorf("secrets-encrypt %s: %w", verb, err)
	}
	return bolt.Close()
}
