package codec

import (
	"crypto/aes"
	"crypto/cipher"
)

// AEAD returns AES-256-GCM under the key named id, for data encrypted
// outside Temporal payloads (the content store's blobs) with the same ring.
// The secret stays inside the returned cipher.
func (k Keys) AEAD(id string) (cipher.AEAD, bool) {
	for _, key := range k.list {
		if key.id != id {
			continue
		}
		block, err := aes.NewCipher(key.secret)
		if err != nil {
			return nil, false
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, false
		}
		return aead, true
	}
	return nil, false
}
