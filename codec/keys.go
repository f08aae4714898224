package codec

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Environment variables the worker, the starter and the codec server read.
const (
	// EnvKeys holds the keys as "id:base64key,id:base64key"; the first
	// encrypts, all decrypt.
	EnvKeys = "AGENTLOOP_CODEC_KEYS"
	// EnvKeysFile names a file holding the same list (a mounted secret);
	// used when EnvKeys is empty.
	EnvKeysFile = "AGENTLOOP_CODEC_KEYS_FILE"
	// EnvToken is the bearer token the codec server requires.
	EnvToken = "AGENTLOOP_CODEC_TOKEN"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// Key is one named AES-256 key. Its secret is unexported so that printing a
// Key or Keys (%v, a log field) shows only the id.
type Key struct {
	id     string
	secret []byte
}

// NewKey checks id and secret (32 bytes) and returns the key.
func NewKey(id string, secret []byte) (Key, error) {
	if err := checkID(id); err != nil {
		return Key{}, err
	}
	if len(secret) != KeySize {
		return Key{}, fmt.Errorf("codec key %q: %d bytes, want %d (AES-256)", id, len(secret), KeySize)
	}
	return Key{id: id, secret: slices.Clone(secret)}, nil
}

// GenerateKey returns a new random key named id.
func GenerateKey(id string) (Key, error) {
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, err
	}
	return NewKey(id, secret)
}

// ID is the key's name, written into every payload it encrypts.
func (k Key) ID() string { return k.id }

// String returns the id only, never the secret.
func (k Key) String() string { return k.id }

// Export returns "id:base64key", the form EnvKeys takes. It is the only way
// the secret leaves a Key.
func (k Key) Export() string { return k.id + ":" + base64.StdEncoding.EncodeToString(k.secret) }

// Keys is a validated key ring: the first key encrypts, every key decrypts.
// The zero value holds no key and means encryption is off.
type Keys struct {
	list []Key
}

// NewKeys returns a key ring; the first key encrypts. Ids must be unique.
func NewKeys(keys ...Key) (Keys, error) {
	seen := map[string]bool{}
	for _, k := range keys {
		if k.id == "" || len(k.secret) != KeySize {
			return Keys{}, errors.New("codec keys: use NewKey or GenerateKey to make a key")
		}
		if seen[k.id] {
			return Keys{}, fmt.Errorf("codec keys: id %q appears twice", k.id)
		}
		seen[k.id] = true
	}
	return Keys{list: slices.Clone(keys)}, nil
}

// ParseKeys parses "id:base64key,id:base64key" (commas or newlines between
// entries; standard or URL base64, padded or not). Errors name entries by
// their position and never quote an id or a key, so a list written the
// wrong way round cannot put a key into a log.
func ParseKeys(s string) (Keys, error) {
	var keys []Key
	firstEntry := map[string]int{}
	n := 0
	for _, entry := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n++
		id, b64, ok := strings.Cut(entry, ":")
		id, b64 = strings.TrimSpace(id), strings.TrimSpace(b64)
		if !ok || id == "" || b64 == "" {
			return Keys{}, fmt.Errorf("codec keys: entry %d: want id:base64key", n)
		}
		if checkID(id) != nil {
			return Keys{}, fmt.Errorf("codec keys: entry %d: the id must be 1 to 64 letters, digits, '-', '_' or '.'", n)
		}
		secret, err := decodeBase64(b64)
		if err != nil {
			return Keys{}, fmt.Errorf("codec keys: entry %d: the key is not valid base64", n)
		}
		if len(secret) != KeySize {
			return Keys{}, fmt.Errorf("codec keys: entry %d: the key is %d bytes, want %d (AES-256)", n, len(secret), KeySize)
		}
		if first, dup := firstEntry[id]; dup {
			return Keys{}, fmt.Errorf("codec keys: entries %d and %d have the same id", first, n)
		}
		firstEntry[id] = n
		keys = append(keys, Key{id: id, secret: secret})
	}
	if len(keys) == 0 {
		return Keys{}, errors.New("codec keys: no key given")
	}
	return NewKeys(keys...)
}

// KeysFromEnv reads the key ring from AGENTLOOP_CODEC_KEYS, else from the
// file AGENTLOOP_CODEC_KEYS_FILE names. With neither set it returns the zero
// Keys and no error: encryption is off. getenv is os.Getenv in a program.
func KeysFromEnv(getenv func(string) string) (Keys, error) {
	if s := getenv(EnvKeys); strings.TrimSpace(s) != "" {
		keys, err := ParseKeys(s)
		if err != nil {
			return Keys{}, fmt.Errorf("%s: %w", EnvKeys, err)
		}
		return keys, nil
	}
	if path := getenv(EnvKeysFile); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Keys{}, fmt.Errorf("%s: %w", EnvKeysFile, err)
		}
		keys, err := ParseKeys(string(b))
		if err != nil {
			return Keys{}, fmt.Errorf("%s: %w", EnvKeysFile, err)
		}
		return keys, nil
	}
	return Keys{}, nil
}

// Empty reports whether the ring holds no key (encryption off).
func (k Keys) Empty() bool { return len(k.list) == 0 }

// Active is the key that encrypts: the first.
func (k Keys) Active() Key {
	if len(k.list) == 0 {
		return Key{}
	}
	return k.list[0]
}

// IDs lists the key ids, the encrypting one first.
func (k Keys) IDs() []string {
	ids := make([]string, len(k.list))
	for i, key := range k.list {
		ids[i] = key.id
	}
	return ids
}

// String lists the ids only.
func (k Keys) String() string { return strings.Join(k.IDs(), ",") }

func checkID(id string) error {
	const rule = "codec key id: want 1 to 64 letters, digits, '-', '_' or '.'"
	if id == "" || len(id) > 64 {
		return errors.New(rule)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return errors.New(rule)
		}
	}
	return nil
}

func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("invalid base64")
}

// GoString keeps %#v from printing the secret.
func (k Key) GoString() string { return fmt.Sprintf("codec.Key{id: %q}", k.id) }

// GoString keeps %#v from printing the secrets.
func (k Keys) GoString() string { return fmt.Sprintf("codec.Keys%q", k.IDs()) }
