package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/internal/harness/logbuf"
	"github.com/durable-agents/agentloop/store"
)

func startServer(t *testing.T, args []string, env map[string]string) (string, *logbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan int, 1)
	stderr := &logbuf.Buffer{}
	go func() {
		done <- run(ctx, append([]string{"-listen", "127.0.0.1:0"}, args...), envOf(env), io.Discard, stderr, func(a string) { addr <- a })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("codec server did not stop")
		}
	})
	select {
	case a := <-addr:
		return "http://" + a, stderr
	case code := <-done:
		t.Fatalf("codec server exited %d: %s", code, stderr.String())
	}
	return "", nil
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

// fetch sends a request with an escaped path as it is, token unless empty.
func fetch(t *testing.T, method, base, escapedPath, token string) answer {
	t.Helper()
	req, err := http.NewRequest(method, base+"/", nil)
	require.NoError(t, err)
	req.URL.Opaque = "//" + req.URL.Host + escapedPath // sent as written, not cleaned or re-escaped
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header, body}
}

func blobPath(namespace, workflowID, sha string) string {
	return codec.BlobsPath + escape(namespace) + "/" + escape(workflowID) + "/" + sha
}

// escape is JavaScript's encodeURIComponent for the ids the tests use.
func escape(s string) string {
	r := strings.NewReplacer("%", "%25", "/", "%2F", " ", "%20", "?", "%3F", "#", "%23")
	return r.Replace(s)
}

// GET /blobs/ answers the bytes a workflow stored, and nothing of any other
// workflow or namespace, to a request with the token only; every other
// request is refused without content or a word of where the store is.
func TestBlobsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keys := newKey(t)
	ring, err := codec.ParseKeys(keys)
	require.NoError(t, err)
	b, err := store.OpenBackend(dir)
	require.NoError(t, err)
	put := func(namespace, workflowID, text string) string {
		st, err := store.New(b, store.Options{Keys: ring, Namespace: namespace})
		require.NoError(t, err)
		ref, err := st.Put(ctx, workflowID, []byte(`{"type":"text","text":`+strconvQuote(text)+`}`))
		require.NoError(t, err)
		return ref.SHA256
	}
	mine := put("default", "wf-a", strings.Repeat("workflow a's output\n", 200))
	theirs := put("default", "wf-b", strings.Repeat("workflow b's output\n", 200))
	otherNS := put("other", "wf-a", strings.Repeat("namespace other's wf-a\n", 200))
	slashed := put("default", "team/run 1", strings.Repeat("an id with a slash\n", 200))

	base, log := startServer(t, []string{"-store", dir, "-namespace", "default,other"},
		map[string]string{codec.EnvKeys: keys, codec.EnvToken: "tok"})

	got := fetch(t, http.MethodGet, base, blobPath("default", "wf-a", mine), "tok")
	require.Equal(t, http.StatusOK, got.status, string(got.body))
	require.Equal(t, "application/json", got.header.Get("Content-Type"))
	sum := sha256.Sum256(got.body)
	require.Equal(t, mine, hex.EncodeToString(sum[:]), "the body is the stored bytes, byte for byte")
	require.Contains(t, string(got.body), "workflow a's output")
	got = fetch(t, http.MethodGet, base, blobPath("default", "team/run 1", slashed), "tok")
	require.Equal(t, http.StatusOK, got.status, "a workflow id with a slash, escaped: %s", got.body)
	got = fetch(t, http.MethodGet, base, blobPath("other", "wf-a", otherNS), "tok")
	require.Equal(t, http.StatusOK, got.status, string(got.body))

	for _, tc := range []struct {
		name, method, path, token string
		status                    int
	}{
		// wf-a's content was just read, so it is in the cache: still
		// nobody reads it through another workflow or namespace.
		{"another workflow's hash", "GET", blobPath("default", "wf-b", mine), "tok", http.StatusNotFound},
		{"another workflow's hash, reversed", "GET", blobPath("default", "wf-a", theirs), "tok", http.StatusNotFound},
		{"another namespace's hash", "GET", blobPath("other", "wf-a", mine), "tok", http.StatusNotFound},
		{"another namespace's hash, reversed", "GET", blobPath("default", "wf-a", otherNS), "tok", http.StatusNotFound},
		{"a namespace not served", "GET", blobPath("elsewhere", "wf-a", mine), "tok", http.StatusForbidden},
		{"a workflow that stored nothing", "GET", blobPath("default", "wf-none", mine), "tok", http.StatusNotFound},
		{"no token", "GET", blobPath("default", "wf-a", mine), "", http.StatusUnauthorized},
		{"a wrong token", "GET", blobPath("default", "wf-a", mine), "toc", http.StatusUnauthorized},
		{"HEAD", "HEAD", blobPath("default", "wf-a", mine), "tok", http.StatusMethodNotAllowed},
		{"POST", "POST", blobPath("default", "wf-a", mine), "tok", http.StatusMethodNotAllowed},
		{"an upper-case hash", "GET", blobPath("default", "wf-a", strings.ToUpper(mine)), "tok", http.StatusBadRequest},
		{"a short hash", "GET", blobPath("default", "wf-a", mine[:63]), "tok", http.StatusBadRequest},
		{"a hash that is not hex", "GET", blobPath("default", "wf-a", strings.Repeat("g", 64)), "tok", http.StatusBadRequest},
		{"a hash with a suffix", "GET", blobPath("default", "wf-a", mine+".json"), "tok", http.StatusBadRequest},
		{"a slash in the id, unescaped", "GET", "/blobs/default/team/run%201/" + slashed, "tok", http.StatusBadRequest},
		{"dot-dot into another workflow", "GET", "/blobs/default/wf-a/../wf-b/" + theirs, "tok", http.StatusBadRequest},
		{"dot-dot out of the namespace", "GET", "/blobs/default/../other/wf-a/" + otherNS, "tok", http.StatusBadRequest},
		{"escaped dot-dot", "GET", "/blobs/default/..%2Fwf-b/" + theirs, "tok", http.StatusNotFound},
		{"escaped dot-dot alone", "GET", "/blobs/default/%2E%2E/" + theirs, "tok", http.StatusNotFound},
		{"a dot segment", "GET", "/blobs/default/./" + mine, "tok", http.StatusBadRequest},
		{"an empty workflow id", "GET", "/blobs/default//" + mine, "tok", http.StatusBadRequest},
		{"too few segments", "GET", "/blobs/default/" + mine, "tok", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fetch(t, tc.method, base, tc.path, tc.token)
			require.Equal(t, tc.status, got.status, string(got.body))
			for _, text := range []string{"workflow a's", "workflow b's", "namespace other's", dir} {
				require.NotContains(t, string(got.body), text)
			}
		})
	}

	// A blob the store cannot open (here: overwritten on disk) is a 502
	// whose details go to the server's log, not to the client.
	var file string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if strings.HasSuffix(p, theirs) {
			file = p
		}
		return err
	}))
	require.NotEmpty(t, file)
	require.NoError(t, os.WriteFile(file, []byte("alb\x01\x00not gzip"), 0o600))
	got = fetch(t, http.MethodGet, base, blobPath("default", "wf-b", theirs), "tok")
	require.Equal(t, http.StatusBadGateway, got.status, string(got.body))
	require.NotContains(t, string(got.body), dir)
	require.NotContains(t, string(got.body), "gzip")
	require.Contains(t, log.String(), theirs, "the server's log says which blob")
}
