package codec

import (
	"regexp"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// FuzzDecode feeds arbitrary encrypted-looking payloads (any key id, any
// bytes) to the codec: it never panics and never accepts what it did not
// seal; what it sealed always opens.
func FuzzDecode(f *testing.F) {
	k1, err := GenerateKey("k1")
	if err != nil {
		f.Fatal(err)
	}
	keys, _ := NewKeys(k1)
	c, err := New(keys)
	if err != nil {
		f.Fatal(err)
	}
	sealed, _ := c.Encode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"hi"`)}})
	f.Add("k1", sealed[0].Data, true)
	f.Add("k1", []byte{}, true)
	f.Add("", []byte("x"), true)
	f.Add("k9", sealed[0].Data, true)
	f.Add("k1", []byte(`"plain"`), false)
	f.Fuzz(func(t *testing.T, keyID string, data []byte, encrypted bool) {
		p := &commonpb.Payload{Metadata: map[string][]byte{MetadataEncryptionKeyID: []byte(keyID)}, Data: data}
		if encrypted {
			p.Metadata[converter.MetadataEncoding] = []byte(MetadataEncodingEncrypted)
		}
		out, err := c.Decode([]*commonpb.Payload{p})
		switch {
		case !encrypted && (err != nil || out[0] != p):
			t.Fatalf("an unencrypted payload did not pass through: %v", err)
		case encrypted && err == nil && keyID == "k1" && len(data) > 0 && !strings.HasPrefix(string(data), string(sealed[0].Data[:12])):
			t.Fatalf("accepted ciphertext it did not seal")
		case err != nil && !strings.HasPrefix(err.Error(), "codec: "):
			t.Fatalf("unexpected error form: %v", err)
		}
		// What the codec seals always opens to the same bytes.
		re, err := c.Encode([]*commonpb.Payload{{Data: data}})
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(re)
		if err != nil || string(back[0].Data) != string(data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// parseKeysError is every error ParseKeys gives: only positions and sizes
// come from the input, never its text.
var parseKeysError = regexp.MustCompile(`^codec keys: (no key given|entries \d+ and \d+ have the same id|entry \d+: ` +
	`(want id:base64key|the id must be 1 to 64 letters, digits, '-', '_' or '\.'|the key is not valid base64|the key is \d+ bytes, want 32 \(AES-256\)))$`)

// FuzzParseKeys: any key list parses or fails without a panic, and an
// error never quotes the input.
func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{
		"k2:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,k1:q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s",
		"k1:", ":x", "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\nk1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:k1", "", ",,,", "k 1:AA==",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := ParseKeys(s)
		if err == nil {
			if keys.Empty() {
				t.Fatal("no error and no key")
			}
			return
		}
		if !parseKeysError.MatchString(err.Error()) {
			t.Fatalf("unexpected error text: %q", err)
		}
	})
}
