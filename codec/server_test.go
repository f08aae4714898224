package codec

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/converter"
)

const uiOrigin = "http://localhost:8233"

func payloadsJSON(t *testing.T, ps ...*commonpb.Payload) []byte {
	t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(&commonpb.Payloads{Payloads: ps})
	require.NoError(t, err)
	return b
}

func post(t *testing.T, srv *httptest.Server, path, auth string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	req.Header.Set("Origin", uiOrigin)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func decodeBody(t *testing.T, resp *http.Response) []*commonpb.Payload {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var out commonpb.Payloads
	require.NoError(t, temporalproto.CustomJSONUnmarshalOptions{}.Unmarshal(b, &out))
	return out.Payloads
}

func TestHandlerRefusesToStartWithoutToken(t *testing.T) {
	keys := ring(t, mustKey(t, "k1"))
	_, err := NewHandler(HandlerOptions{Keys: keys})
	require.ErrorIs(t, err, ErrNoToken)
	_, err = NewHandler(HandlerOptions{Token: "t"})
	require.ErrorContains(t, err, "no key")
	_, err = NewHandler(HandlerOptions{Keys: keys, AllowUnauthenticated: true})
	require.NoError(t, err)
}

func TestHandlerWithToken(t *testing.T) {
	keys := ring(t, mustKey(t, "k1"))
	h, err := NewHandler(HandlerOptions{Keys: keys, Token: "s3cret-token", AllowedOrigins: []string{uiOrigin + "/"}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	enc, err := mustCodec(t, keys).Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	body := payloadsJSON(t, enc...)

	for _, auth := range []string{"", "Bearer", "Bearer wrong", "Basic s3cret-token", "Bearer s3cret-token-and-more", "s3cret-token"} {
		resp := post(t, srv, "/decode", auth, body)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "auth %q", auth)
		require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
		b, _ := io.ReadAll(resp.Body)
		require.NotContains(t, string(b), "rm -rf")
		// The browser can still read the refusal.
		require.Equal(t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	}

	// The right token decodes, with the UI's CORS headers.
	resp := post(t, srv, "/decode", "Bearer s3cret-token", body)
	require.Equal(t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	dec := decodeBody(t, resp)
	require.Len(t, dec, 1)
	require.Equal(t, plainPayload(t, secretText).Data, dec[0].Data)

	// The UI's endpoint may carry a path prefix; the scheme is case-insensitive.
	resp = post(t, srv, "/ns/default/encode", "bearer s3cret-token", payloadsJSON(t, plainPayload(t, secretText)))
	encoded := decodeBody(t, resp)
	require.Equal(t, MetadataEncodingEncrypted, string(encoded[0].Metadata[converter.MetadataEncoding]))

	// Tampered payloads are a 400 with the reason, not a crash.
	enc[0].Data[len(enc[0].Data)-1] ^= 1
	resp = post(t, srv, "/decode", "Bearer s3cret-token", payloadsJSON(t, enc...))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(b), "failed authentication")

	// Only POST, and bodies are bounded.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/decode", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	getResp, err := srv.Client().Do(req)
	require.NoError(t, err)
	_ = getResp.Body.Close()
	require.Equal(t, http.StatusNotFound, getResp.StatusCode)
	resp = post(t, srv, "/decode", "Bearer s3cret-token", bytes.Repeat([]byte(" "), MaxRequestBytes+1))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestHandlerCORS(t *testing.T) {
	h, err := NewHandler(HandlerOptions{Keys: ring(t, mustKey(t, "k1")), Token: "tok", AllowedOrigins: []string{uiOrigin}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	// A preflight carries no token and is answered for the UI's origin.
	resp := preflight(uiOrigin)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, hdr := range []string{"authorization", "content-type", "x-namespace"} {
		require.Contains(t, allowed, hdr)
	}
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "POST")
	require.Contains(t, resp.Header.Values("Vary"), "Origin")

	// Another origin gets no CORS grant.
	resp = preflight("https://evil.example")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", strings.NewReader(`{"payloads":[]}`))
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Authorization", "Bearer tok")
	post, err := srv.Client().Do(req)
	require.NoError(t, err)
	_ = post.Body.Close()
	require.Empty(t, post.Header.Get("Access-Control-Allow-Origin"))
}

func TestHandlerUnauthenticatedWhenAllowed(t *testing.T) {
	keys := ring(t, mustKey(t, "k1"))
	h, err := NewHandler(HandlerOptions{Keys: keys, AllowUnauthenticated: true, AllowedOrigins: []string{"*"}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	enc, err := mustCodec(t, keys).Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	resp := post(t, srv, "/decode", "", payloadsJSON(t, enc...))
	require.Equal(t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, plainPayload(t, secretText).Data, decodeBody(t, resp)[0].Data)
}

// The SDK's remote codec, which the Temporal CLI's --codec-endpoint and
// --codec-auth use, talks to the handler.
func TestHandlerServesRemoteCodec(t *testing.T) {
	keys := ring(t, mustKey(t, "k1"))
	h, err := NewHandler(HandlerOptions{Keys: keys, Token: "tok"})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
		Endpoint: srv.URL,
		ModifyRequest: func(r *http.Request) error {
			r.Header.Set("Authorization", "Bearer tok")
			return nil
		},
	})
	enc, err := remote.Encode([]*commonpb.Payload{plainPayload(t, secretText)})
	require.NoError(t, err)
	require.Equal(t, "k1", string(enc[0].Metadata[MetadataEncryptionKeyID]))
	dec, err := mustCodec(t, keys).Decode(enc)
	require.NoError(t, err)
	require.Equal(t, plainPayload(t, secretText).Data, dec[0].Data)
	back, err := remote.Decode(enc)
	require.NoError(t, err)
	require.Equal(t, plainPayload(t, secretText).Data, back[0].Data)

	noAuth := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: srv.URL})
	_, err = noAuth.Decode(enc)
	require.ErrorContains(t, err, "nauthorized")
}

// A browser's preflight for GET /blobs/ is allowed; a codec server without
// a content store answers that path with a 404, after the token check, and
// never passes it to the remote codec.
func TestHandlerBlobsWithoutStore(t *testing.T) {
	h, err := NewHandler(HandlerOptions{Keys: ring(t, mustKey(t, "k1")), Token: "tok", AllowedOrigins: []string{uiOrigin}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	path := BlobsPath + "default/wf/" + strings.Repeat("a", 64)

	req, _ := http.NewRequest(http.MethodOptions, srv.URL+path, nil)
	req.Header.Set("Origin", uiOrigin)
	req.Header.Set("Access-Control-Request-Method", "GET")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "GET")

	for auth, status := range map[string]int{"": http.StatusUnauthorized, "Bearer tok": http.StatusNotFound} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, status, resp.StatusCode, string(body))
	}
	resp = post(t, srv, path, "Bearer tok", payloadsJSON(t))
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "a POST under /blobs/ is no /decode")
}
