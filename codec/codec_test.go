package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

func mustKey(t testing.TB, id string) Key {
	t.Helper()
	k, err := GenerateKey(id)
	require.NoError(t, err)
	return k
}

func ring(t testing.TB, keys ...Key) Keys {
	t.Helper()
	r, err := NewKeys(keys...)
	require.NoError(t, err)
	return r
}

func mustCodec(t testing.TB, keys Keys) *Codec {
	t.Helper()
	c, err := New(keys)
	require.NoError(t, err)
	return c
}

const secretText = "the transcript says: rm -rf build && cat ~/.netrc"

func plainPayload(t testing.TB, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

func TestRoundTrip(t *testing.T) {
	k1 := mustKey(t, "k1")
	dc := NewDataConverter(ring(t, k1))
	type msg struct {
		Text  string `json:"text"`
		Count int    `json:"count"`
	}
	in := msg{Text: secretText, Count: 3}
	p, err := dc.ToPayload(in)
	require.NoError(t, err)
	require.Equal(t, MetadataEncodingEncrypted, string(p.Metadata[converter.MetadataEncoding]))
	require.Equal(t, "k1", string(p.Metadata[MetadataEncryptionKeyID]))
	require.Len(t, p.Metadata, 2, "nothing of the original metadata shows")
	require.NotContains(t, string(p.Data), "rm -rf")
	require.NotContains(t, p.String(), "json/plain")

	var out msg
	require.NoError(t, dc.FromPayload(p, &out))
	require.Equal(t, in, out)

	// Every encoding uses a fresh nonce.
	p2, err := dc.ToPayload(in)
	require.NoError(t, err)
	require.NotEqual(t, p.Data, p2.Data)

	// Many payloads, nil and empty values too.
	ps, err := dc.ToPayloads("a", nil, []byte{}, 42, map[string]any{"k": secretText})
	require.NoError(t, err)
	var (
		s  string
		n  any
		b  []byte
		i  int
		mp map[string]any
	)
	require.NoError(t, dc.FromPayloads(ps, &s, &n, &b, &i, &mp))
	require.Equal(t, "a", s)
	require.Nil(t, n)
	require.Empty(t, b)
	require.Equal(t, 42, i)
	require.Equal(t, secretText, mp["k"])
}

func TestCodecKeepsOriginalMetadata(t *testing.T) {
	c := mustCodec(t, ring(t, mustKey(t, "k1")))
	orig := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain"), "x-custom": []byte("v")}, Data: []byte(`"hi"`)}
	enc, err := c.Encode([]*commonpb.Payload{orig})
	require.NoError(t, err)
	dec, err := c.Decode(enc)
	require.NoError(t, err)
	require.Len(t, dec, 1)
	require.Equal(t, orig.Metadata, dec[0].Metadata)
	require.Equal(t, orig.Data, dec[0].Data)
}

func TestRotation(t *testing.T) {
	k1, k2 := mustKey(t, "k1"), mustKey(t, "k2")
	old := mustCodec(t, ring(t, k1))
	rotated := mustCodec(t, ring(t, k2, k1))

	byOld, err := old.Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	require.Equal(t, "k1", string(byOld[0].Metadata[MetadataEncryptionKeyID]))

	// The rotated ring still reads what the old key wrote...
	dec, err := rotated.Decode(byOld)
	require.NoError(t, err)
	require.Equal(t, plainPayload(t, secretText).Data, dec[0].Data)

	// ...and writes with the new key.
	byNew, err := rotated.Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	require.Equal(t, "k2", string(byNew[0].Metadata[MetadataEncryptionKeyID]))

	// A worker that only has the old key says which key it lacks.
	_, err = old.Decode(byNew)
	require.ErrorContains(t, err, `key "k2", which is not among the keys given (k1)`)

	// Rotation through the environment: put the new key first.
	env := map[string]string{EnvKeys: k2.Export() + "," + k1.Export()}
	keys, err := KeysFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, []string{"k2", "k1"}, keys.IDs())
	require.Equal(t, "k2", keys.Active().ID())
}

func TestTamperingDetected(t *testing.T) {
	c := mustCodec(t, ring(t, mustKey(t, "k1")))
	enc, err := c.Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	good := enc[0]

	tampered := func(mutate func(d []byte) []byte) *commonpb.Payload {
		return &commonpb.Payload{Metadata: good.Metadata, Data: mutate(bytes.Clone(good.Data))}
	}
	cases := map[string]*commonpb.Payload{
		"flip in nonce":      tampered(func(d []byte) []byte { d[0] ^= 1; return d }),
		"flip in ciphertext": tampered(func(d []byte) []byte { d[20] ^= 0x80; return d }),
		"flip in tag":        tampered(func(d []byte) []byte { d[len(d)-1] ^= 1; return d }),
		"truncated":          tampered(func(d []byte) []byte { return d[:len(d)-1] }),
		"extended":           tampered(func(d []byte) []byte { return append(d, 0) }),
		"too short":          tampered(func(d []byte) []byte { return d[:10] }),
		"empty":              tampered(func(d []byte) []byte { return nil }),
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = c.Decode([]*commonpb.Payload{p}) })
			require.Error(t, err)
			require.Regexp(t, `codec: (payload encrypted with key "k1" failed authentication: tampered|encrypted payload \(key "k1"\) is \d+ bytes, too short)`, err.Error())
		})
	}
	// Every single-bit flip anywhere is caught.
	for i := range good.Data {
		p := tampered(func(d []byte) []byte { d[i] ^= 0x04; return d })
		_, err := c.Decode([]*commonpb.Payload{p})
		require.Error(t, err, "flip at byte %d", i)
	}
	// Through the data converter the error reaches the caller, no panic.
	var s string
	err = NewDataConverter(ring(t, mustKey(t, "k1"))).FromPayload(cases["flip in tag"], &s)
	require.ErrorContains(t, err, "failed authentication")
}

func TestWrongKey(t *testing.T) {
	mine, theirs := mustKey(t, "k1"), mustKey(t, "k1") // same id, other secret
	enc, err := mustCodec(t, ring(t, theirs)).Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	_, err = mustCodec(t, ring(t, mine)).Decode(enc)
	require.EqualError(t, err, `codec: payload encrypted with key "k1" failed authentication: tampered or sealed with a different key of that name`)
}

func TestMissingKeyID(t *testing.T) {
	c := mustCodec(t, ring(t, mustKey(t, "k1")))
	enc, err := c.Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	delete(enc[0].Metadata, MetadataEncryptionKeyID)
	_, err = c.Decode(enc)
	require.EqualError(t, err, "codec: encrypted payload has no encryption-key-id metadata")

	enc[0].Metadata[MetadataEncryptionKeyID] = nil
	_, err = c.Decode(enc)
	require.EqualError(t, err, "codec: encrypted payload has no encryption-key-id metadata")

	enc[0].Metadata[MetadataEncryptionKeyID] = []byte(strings.Repeat("x", 500))
	_, err = c.Decode(enc)
	require.ErrorContains(t, err, "…")
	require.Less(t, len(err.Error()), 200, "an attacker's key id is clipped")
}

func TestUnencryptedPassesThrough(t *testing.T) {
	keys := ring(t, mustKey(t, "k1"))
	c := mustCodec(t, keys)
	plain := []*commonpb.Payload{
		plainPayload(t, secretText),
		plainPayload(t, nil),
		{Metadata: map[string][]byte{"encoding": []byte("binary/zlib")}, Data: []byte{1, 2, 3}},
		{},
	}
	dec, err := c.Decode(plain)
	require.NoError(t, err)
	for i := range plain {
		require.Same(t, plain[i], dec[i])
	}
	// A history written before encryption was turned on still reads.
	var s string
	require.NoError(t, NewDataConverter(keys).FromPayload(plainPayload(t, secretText), &s))
	require.Equal(t, secretText, s)
}

func TestEmptyKeysMeanDefaultConverter(t *testing.T) {
	require.Equal(t, converter.GetDefaultDataConverter(), NewDataConverter(Keys{}))
	require.Equal(t, temporal.GetDefaultFailureConverter(), NewFailureConverter(Keys{}))
	_, err := New(Keys{})
	require.Error(t, err)
}

func TestFailureMessagesEncrypted(t *testing.T) {
	keys := ring(t, mustKey(t, "k1"))
	fc := NewFailureConverter(keys)
	f := fc.ErrorToFailure(temporal.NewApplicationError("tool failed: "+secretText, "ToolExecutionError"))
	require.NotContains(t, f.String(), "rm -rf")
	require.Equal(t, "Encoded failure", f.GetMessage())
	require.Equal(t, MetadataEncodingEncrypted, string(f.GetEncodedAttributes().GetMetadata()[converter.MetadataEncoding]))

	err := fc.FailureToError(f)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr))
	require.Equal(t, "tool failed: "+secretText, appErr.Message())
	require.Equal(t, "ToolExecutionError", appErr.Type())
}

func TestParseKeys(t *testing.T) {
	secret := bytes.Repeat([]byte{0xAB}, KeySize)
	std := base64.StdEncoding.EncodeToString(secret)
	url := base64.RawURLEncoding.EncodeToString(secret)

	keys, err := ParseKeys(" k2:" + std + " ,\n k1 : " + url + "\n")
	require.NoError(t, err)
	require.Equal(t, []string{"k2", "k1"}, keys.IDs())

	short := base64.StdEncoding.EncodeToString(secret[:16])
	for in, want := range map[string]string{
		"":                           "no key given",
		" , ":                        "no key given",
		std:                          "entry 1: want id:base64key",
		"k1:":                        "entry 1: want id:base64key",
		":" + std:                    "entry 1: want id:base64key",
		"k1:" + std + ",k2":          "entry 2: want id:base64key",
		"k1:not*base64!":             "entry 1: the key is not valid base64",
		"k1:" + short:                "entry 1: the key is 16 bytes, want 32 (AES-256)",
		"k1:" + std + ",\nk1:" + std: "entries 1 and 2 have the same id",
		"k 1:" + std:                 "entry 1: the id must be",
		// Written the wrong way round: the key is never quoted.
		std + ":k1": "entry 1: the id must be",
		url + ":k1": "entry 1: the key is 1 bytes",
	} {
		_, err := ParseKeys(in)
		require.ErrorContains(t, err, want, "input %q", in)
		require.NotContains(t, err.Error(), std[:8], "errors never quote key material")
		require.NotContains(t, err.Error(), url[:8], "errors never quote key material")
		require.NotContains(t, err.Error(), short[:8], "errors never quote key material")
	}
	_, err = NewKey("k/1", secret)
	require.ErrorContains(t, err, "codec key id: want 1 to 64")
	_, err = NewKey("k1", secret[:31])
	require.ErrorContains(t, err, "31 bytes, want 32")
}

func TestKeysFromEnv(t *testing.T) {
	none, err := KeysFromEnv(func(string) string { return "" })
	require.NoError(t, err)
	require.True(t, none.Empty())

	k := mustKey(t, "file-key")
	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(k.Export()+"\n"), 0o600))
	env := map[string]string{EnvKeysFile: path}
	keys, err := KeysFromEnv(func(s string) string { return env[s] })
	require.NoError(t, err)
	require.Equal(t, []string{"file-key"}, keys.IDs())

	env[EnvKeys] = "bad"
	_, err = KeysFromEnv(func(s string) string { return env[s] })
	require.ErrorContains(t, err, EnvKeys+": codec keys: entry 1")

	env = map[string]string{EnvKeysFile: filepath.Join(t.TempDir(), "missing")}
	_, err = KeysFromEnv(func(s string) string { return env[s] })
	require.ErrorContains(t, err, EnvKeysFile)
}

func TestKeysNeverPrintSecrets(t *testing.T) {
	k := mustKey(t, "k1")
	keys := ring(t, k)
	b64 := strings.TrimPrefix(k.Export(), "k1:")
	raw := string(k.secret)
	for _, s := range []string{
		fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k),
		fmt.Sprint(keys), fmt.Sprintf("%v %+v %#v %s", keys, keys, keys, keys),
		fmt.Sprintf("%v", []Key{k}), fmt.Sprintf("%+v", struct{ K Keys }{keys}),
	} {
		require.NotContains(t, s, b64)
		require.NotContains(t, s, raw)
		require.Contains(t, s, "k1")
	}
	_, err := NewKeys(Key{})
	require.Error(t, err)
}
