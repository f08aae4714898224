package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/store"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func newKey(t *testing.T) string {
	var out bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"-new-key", "k9"}, envOf(nil), &out, io.Discard, nil))
	line := strings.TrimSpace(out.String())
	require.True(t, strings.HasPrefix(line, "k9:"), line)
	_, err := codec.ParseKeys(line)
	require.NoError(t, err)
	return line
}

func TestRefusesWithoutToken(t *testing.T) {
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-listen", "127.0.0.1:0"}, envOf(map[string]string{codec.EnvKeys: newKey(t)}), io.Discard, &stderr, nil)
	require.Equal(t, 2, code)
	require.Contains(t, stderr.String(), "no token configured")
	require.Contains(t, stderr.String(), "-allow-unauthenticated")
}

func TestRefusesWithoutKeys(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 2, run(context.Background(), nil, envOf(map[string]string{codec.EnvToken: "t"}), io.Discard, &stderr, nil))
	require.Contains(t, stderr.String(), "no key")
	stderr.Reset()
	require.Equal(t, 2, run(context.Background(), nil, envOf(map[string]string{codec.EnvKeys: "k1:short", codec.EnvToken: "t"}), io.Discard, &stderr, nil))
	require.Contains(t, stderr.String(), codec.EnvKeys)
}

func TestServes(t *testing.T) {
	key := newKey(t)
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		auth string
	}{
		{"token", nil, map[string]string{codec.EnvKeys: key, codec.EnvToken: "tok"}, "Bearer tok"},
		{"unauthenticated", []string{"-allow-unauthenticated"}, map[string]string{codec.EnvKeys: key}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			addr := make(chan string, 1)
			done := make(chan int, 1)
			var stderr bytes.Buffer
			go func() {
				done <- run(ctx, append([]string{"-listen", "127.0.0.1:0"}, tc.args...), envOf(tc.env), io.Discard, &stderr,
					func(a string) { addr <- a })
			}()
			var base string
			select {
			case a := <-addr:
				base = "http://" + a
			case code := <-done:
				t.Fatalf("exited %d: %s", code, stderr.String())
			}
			resp, err := http.Get(base + "/healthz")
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)

			req, _ := http.NewRequest(http.MethodPost, base+"/encode", strings.NewReader(`{"payloads":[{"metadata":{"encoding":"anNvbi9wbGFpbg=="},"data":"ImhpIg=="}]}`))
			req.Header.Set("Origin", "http://localhost:8233")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err = http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			require.Contains(t, string(body), "YmluYXJ5L2VuY3J5cHRlZA==") // binary/encrypted
			require.Equal(t, "http://localhost:8233", resp.Header.Get("Access-Control-Allow-Origin"))

			cancel()
			select {
			case code := <-done:
				require.Equal(t, 0, code)
			case <-time.After(10 * time.Second):
				t.Fatal("server did not stop")
			}
			require.NotContains(t, stderr.String(), strings.TrimPrefix(key, "k9:"), "the key is never printed")
		})
	}
}

// With -store and no keys, the server shows the content behind the stubs
// of unencrypted payloads (the Web UI of a run without encryption).
func TestServesStoredContent(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{})
	require.NoError(t, err)
	output := strings.Repeat("stored output line\n", 300)
	ref, err := st.Put(context.Background(), "wf", []byte(`{"type":"text","text":`+strconvQuote(output)+`}`))
	require.NoError(t, err)
	stub, _ := json.Marshal(map[string]any{"content": []any{agent.StubContent(agent.ContentText, ref)}})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	var stderr bytes.Buffer
	go run(ctx, []string{"-listen", "127.0.0.1:0", "-allow-unauthenticated", "-store", dir}, envOf(nil), io.Discard, &stderr, func(a string) { addr <- a })
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(10 * time.Second):
		t.Fatalf("not serving: %s", stderr.String())
	}
	body, _ := json.Marshal(map[string]any{"payloads": []any{map[string]any{
		"metadata": map[string]string{"encoding": base64.StdEncoding.EncodeToString([]byte("json/plain"))},
		"data":     base64.StdEncoding.EncodeToString(stub),
	}}})
	resp, err := http.Post(base+"/decode", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Payloads []struct {
			Data []byte `json:"data"`
		} `json:"payloads"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	var decoded struct {
		Content []agent.Content `json:"content"`
	}
	require.NoError(t, json.Unmarshal(out.Payloads[0].Data, &decoded))
	require.Equal(t, output, decoded.Content[0].Text)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
