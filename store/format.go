package store

import (
	"bytes"
	"compress/gzip"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/durable-agents/agentloop/codec"
)

// A blob at rest is
//
//	'a' 'l' 'b' 1      magic and format version
//	flags              flagGzip | flagSealed
//	len id nonce       when sealed: the key id (1-byte length) and the 12-byte nonce
//	body               gzip of the plaintext; when sealed, AES-256-GCM of that,
//	                   with every byte before the body as additional data
//
// Compression comes first because ciphertext does not compress, and
// transcript segments (JSON) shrink 5-10x. The header is authenticated so
// that its flags and key id cannot be changed without failing to open.
const (
	flagGzip   = 1
	flagSealed = 2
	nonceSize  = 12
)

var magic = []byte{'a', 'l', 'b', 1}

// ring holds the ciphers of a key ring; the zero ring stores plaintext.
type ring struct {
	active string
	ids    []string
	aeads  map[string]cipher.AEAD
}

func newRing(keys codec.Keys) (ring, error) {
	r := ring{active: keys.Active().ID(), ids: keys.IDs(), aeads: map[string]cipher.AEAD{}}
	for _, id := range r.ids {
		aead, ok := keys.AEAD(id)
		if !ok || aead.NonceSize() != nonceSize {
			return ring{}, fmt.Errorf("content store: key %q does not make AES-GCM", id)
		}
		r.aeads[id] = aead
	}
	return r, nil
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// encode turns plaintext into the bytes stored.
func (r ring) encode(plain []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(magic)
	if r.active == "" {
		buf.WriteByte(flagGzip)
	} else {
		buf.WriteByte(flagGzip | flagSealed)
		buf.WriteByte(byte(len(r.active)))
		buf.WriteString(r.active)
		nonce := make([]byte, nonceSize)
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("content store: nonce: %w", err)
		}
		buf.Write(nonce)
	}
	header := len(buf.Bytes())
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := zw.Write(plain); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if r.active == "" {
		return buf.Bytes(), nil
	}
	out := buf.Bytes()
	hdr := out[:header]
	return r.aeads[r.active].Seal(bytes.Clone(hdr), hdr[header-nonceSize:], out[header:], hdr), nil
}

// decode returns the plaintext of stored bytes, reading at most limit
// bytes of it (more is an error: the reference says how large it is, and a
// forged gzip stream must not fill memory). Errors wrap ErrCorrupt.
func (r ring) decode(data []byte, limit int) ([]byte, error) {
	if len(data) < len(magic)+1 || !bytes.Equal(data[:len(magic)-1], magic[:len(magic)-1]) {
		return nil, fmt.Errorf("%w: not a content blob", ErrCorrupt)
	}
	if data[len(magic)-1] != magic[len(magic)-1] {
		return nil, fmt.Errorf("%w: blob format version %d, want %d", ErrCorrupt, data[len(magic)-1], magic[len(magic)-1])
	}
	flags := data[len(magic)]
	if flags&^(flagGzip|flagSealed) != 0 {
		return nil, fmt.Errorf("%w: unknown blob flags %#x", ErrCorrupt, flags)
	}
	body := data[len(magic)+1:]
	if flags&flagSealed != 0 {
		var err error
		if body, err = r.open(data); err != nil {
			return nil, err
		}
	}
	var src io.Reader = bytes.NewReader(body)
	if flags&flagGzip != 0 {
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
		}
		src = zr
	}
	plain, err := io.ReadAll(io.LimitReader(src, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
	}
	if len(plain) > limit {
		return nil, fmt.Errorf("%w: holds more than the %d bytes its reference names", ErrCorrupt, limit)
	}
	return plain, nil
}

// open authenticates and decrypts the body of a sealed blob.
func (r ring) open(data []byte) ([]byte, error) {
	rest := data[len(magic)+1:]
	if len(rest) < 1 || len(rest) < 1+int(rest[0])+nonceSize {
		return nil, fmt.Errorf("%w: sealed blob too short", ErrCorrupt)
	}
	id := string(rest[1 : 1+rest[0]])
	header := len(magic) + 1 + 1 + len(id) + nonceSize
	aead, ok := r.aeads[id]
	if !ok {
		have := "no keys are given"
		if len(r.ids) > 0 {
			have = "the keys given are " + strings.Join(r.ids, ", ")
		}
		return nil, fmt.Errorf("%w: encrypted with key %q; %s", ErrCorrupt, clip(id), have)
	}
	plain, err := aead.Open(nil, data[header-nonceSize:header], data[header:], data[:header])
	if err != nil {
		return nil, fmt.Errorf("%w: encrypted with key %q and fails authentication: tampered, or sealed with another key of that name", ErrCorrupt, clip(id))
	}
	return plain, nil
}

// clip bounds a key id read from a blob before an error quotes it.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
