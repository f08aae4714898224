package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/codec"
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
