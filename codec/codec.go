package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// Metadata keys and values of an encrypted payload.
const (
	MetadataEncodingEncrypted = "binary/encrypted"
	MetadataEncryptionKeyID   = "encryption-key-id"
)

// Codec is a converter.PayloadCodec that encrypts with the ring's first key
// and decrypts with whichever key a payload names.
type Codec struct {
	active string
	ids    []string
	aeads  map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns the codec for a non-empty key ring.
func New(keys Keys) (*Codec, error) {
	if keys.Empty() {
		return nil, fmt.Errorf("codec: no key")
	}
	c := &Codec{active: keys.Active().id, ids: keys.IDs(), aeads: map[string]cipher.AEAD{}}
	for _, k := range keys.list {
		block, err := aes.NewCipher(k.secret)
		if err != nil {
			return nil, fmt.Errorf("codec key %q: %w", k.id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("codec key %q: %w", k.id, err)
		}
		c.aeads[k.id] = aead
	}
	return c, nil
}

// NewDataConverter returns Temporal's default data converter wrapped in the
// encryption codec. With an empty key ring it returns the default converter
// unchanged: encryption is off.
func NewDataConverter(keys Keys) converter.DataConverter {
	if keys.Empty() {
		return converter.GetDefaultDataConverter()
	}
	c, err := New(keys)
	if err != nil {
		// Keys are validated when built; AES accepts every 32-byte key.
		panic(err)
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// NewFailureConverter returns a failure converter that also moves failure
// messages and stack traces into an encrypted payload (Temporal's
// EncodeCommonAttributes), since a tool or provider error message can
// quote file contents or command output. With an empty key ring it returns
// the default failure converter.
func NewFailureConverter(keys Keys) converter.FailureConverter {
	if keys.Empty() {
		return temporal.GetDefaultFailureConverter()
	}
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter:          NewDataConverter(keys),
		EncodeCommonAttributes: true,
	})
}

// Encode encrypts every payload with the active key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.active]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("codec: marshal payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("codec: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(MetadataEncodingEncrypted),
				MetadataEncryptionKeyID:    []byte(c.active),
			},
			Data: aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode decrypts every encrypted payload and passes the others through.
// A payload that names no key or an unknown key, or whose ciphertext fails
// authentication (tampered, truncated or sealed with another key), is an
// error that says which.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != MetadataEncodingEncrypted {
			out[i] = p
			continue
		}
		id, ok := p.GetMetadata()[MetadataEncryptionKeyID]
		if !ok || len(id) == 0 {
			return nil, fmt.Errorf("codec: encrypted payload has no %s metadata", MetadataEncryptionKeyID)
		}
		aead, ok := c.aeads[string(id)]
		if !ok {
			return nil, fmt.Errorf("codec: payload encrypted with key %q, which is not among the keys given (%s)",
				clip(string(id)), strings.Join(c.ids, ", "))
		}
		data := p.GetData()
		if len(data) < aead.NonceSize()+aead.Overhead() {
			return nil, fmt.Errorf("codec: encrypted payload (key %q) is %d bytes, too short to be ciphertext", id, len(data))
		}
		nonce, sealed := data[:aead.NonceSize()], data[aead.NonceSize():]
		plain, err := aead.Open(nil, nonce, sealed, nil)
		if err != nil {
			return nil, fmt.Errorf("codec: payload encrypted with key %q failed authentication: tampered or sealed with a different key of that name", id)
		}
		var orig commonpb.Payload
		if err := orig.Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("codec: decrypted payload (key %q) is not a payload: %w", id, err)
		}
		out[i] = &orig
	}
	return out, nil
}

// clip bounds an attacker-controlled key id quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
