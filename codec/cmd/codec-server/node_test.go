package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/store"
)

// nodeClientDir holds the Node client, its dependencies pinned by
// package-lock.json; scripts/lib.sh's ensure_node_client installs them
// (npm ci) before the tests run.
const nodeClientDir = "testdata/node"

// A client outside Go (Node, @temporalio/client from npm) reads a run's
// events, finds its stubs and reads each one's content from the codec
// server: the bytes Go resolves the stub to; the same hash asked for under
// another workflow is refused.
func TestBlobsFromNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the check of a client outside Go needs Node.js (Debian: apt-get install nodejs npm)")
	}
	if _, err := os.Stat(filepath.Join(nodeClientDir, "node_modules", "@temporalio", "client")); err != nil {
		t.Fatalf("@temporalio/client is not installed: run `. scripts/lib.sh && ensure_node_client` (npm ci in codec/cmd/codec-server/%s): %v", nodeClientDir, err)
	}
	keys := newKey(t)
	ring, err := codec.ParseKeys(keys)
	require.NoError(t, err)
	dir := t.TempDir()
	b, err := store.OpenBackend(dir)
	require.NoError(t, err)
	world := newRunWorld(t, b, ring)
	id := fmt.Sprintf("blobs-node-%d", time.Now().UnixNano())
	refs := world.run(t, "default", id, bigText("node"))
	world.run(t, "default", id+"-sibling", bigText("sibling"))
	base, _ := startServer(t, []string{"-store", dir, "-namespace", "default"},
		map[string]string{codec.EnvKeys: keys, codec.EnvToken: "tok"})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "fetch-stubs.mjs", devServer(t).FrontendHostPort(), "default", id, base, "tok", id+"-sibling")
	cmd.Dir = nodeClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node: %s", stderr.String())

	var got int
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var line struct {
			SHA256              string `json:"sha256"`
			Size                int    `json:"size"`
			Scope               string `json:"scope"`
			Status              int    `json:"status"`
			ContentType         string `json:"contentType"`
			BodySHA256          string `json:"bodySha256"`
			BodyBase64          string `json:"bodyBase64"`
			OtherWorkflowStatus int    `json:"otherWorkflowStatus"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), sc.Text())
		require.Equal(t, http.StatusOK, line.Status, sc.Text())
		require.Equal(t, "application/json", line.ContentType)
		require.Equal(t, line.SHA256, line.BodySHA256, "Node's own hash of the body")
		require.Equal(t, id, line.Scope)
		body, err := base64.StdEncoding.DecodeString(line.BodyBase64)
		require.NoError(t, err)
		var ref = refs[got]
		require.Equal(t, ref.SHA256, line.SHA256, "the stubs Node found are Go's, in order")
		want, err := world.stores["default"].Get(ctx, ref)
		require.NoError(t, err)
		require.Equal(t, want, body)
		require.Equal(t, http.StatusNotFound, line.OtherWorkflowStatus, "the same hash under another workflow")
		got++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, len(refs), got, "node printed a line per stub: %s", stderr.String())
}
