package codec

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// BlobsPath is where the codec server serves stored content:
// GET /blobs/{namespace}/{workflowId}/{sha256}, each segment path-escaped
// (encodeURIComponent), the hash 64 lowercase hex digits.
const BlobsPath = "/blobs/"

// BlobReader reads the content GET /blobs/ serves: the store's package
// implements it over the workers' content store.
type BlobReader interface {
	// ReadBlob returns the bytes stored for the run workflowID of
	// namespace under sha256: ErrNoBlob when that workflow has none (even
	// if another workflow or namespace has), ErrNamespaceNotServed for a
	// namespace the reader does not serve. Other errors are the store's
	// and may name places: the handler logs them and answers without them.
	ReadBlob(ctx context.Context, namespace, workflowID, sha256 string) ([]byte, error)
}

// The errors a BlobReader answers for content a request may not have.
var (
	ErrNoBlob             = errors.New("no such content for this workflow")
	ErrNamespaceNotServed = errors.New("namespace not served by this codec server")
)

// blobReadTimeout bounds one read from the store.
const blobReadTimeout = 30 * time.Second

// serveBlob answers an authorized request under BlobsPath.
func (h *handler) serveBlob(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		// HEAD too: it would say which hashes a workflow has without the
		// GET that a reader is accountable for, and gains nothing else.
		w.Header().Set("Allow", "GET, OPTIONS")
		http.Error(w, "method not allowed: GET only", http.StatusMethodNotAllowed)
		return
	}
	if h.blobs == nil {
		http.Error(w, "this codec server has no content store (start it with -store)", http.StatusNotFound)
		return
	}
	namespace, workflowID, sha, ok := parseBlobPath(r.URL.EscapedPath())
	if !ok {
		http.Error(w, "bad request: want GET "+BlobsPath+"{namespace}/{workflowId}/{sha256}, each segment path-escaped, the hash 64 lowercase hex digits",
			http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), blobReadTimeout)
	defer cancel()
	data, err := h.blobs.ReadBlob(ctx, namespace, workflowID, sha)
	switch {
	case errors.Is(err, ErrNamespaceNotServed):
		http.Error(w, "forbidden: "+ErrNamespaceNotServed.Error(), http.StatusForbidden)
		return
	case errors.Is(err, ErrNoBlob):
		http.Error(w, "not found: "+ErrNoBlob.Error(), http.StatusNotFound)
		return
	case err != nil:
		// Store errors name directories, buckets and key ids: they go to
		// the server's log, never to the client.
		h.logf("codec-server: GET %s: %v", r.URL.EscapedPath(), err)
		http.Error(w, "content store unavailable or content unreadable; see the codec server's log", http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// parseBlobPath splits an escaped path /blobs/NS/WF/SHA. Raw "." and ".."
// segments, empty ones and extra ones are refused rather than cleaned, so
// no request names a path other than the one it spells; escaped, they are
// a workflow id like any other (the store escapes ids into one safe key
// segment).
func parseBlobPath(escaped string) (namespace, workflowID, sha string, ok bool) {
	rest, found := strings.CutPrefix(escaped, BlobsPath)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return "", "", "", false
	}
	var out [3]string
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", "", "", false
		}
		v, err := url.PathUnescape(p)
		if err != nil || v == "" {
			return "", "", "", false
		}
		out[i] = v
	}
	if !isSHA256Hex(out[2]) {
		return "", "", "", false
	}
	return out[0], out[1], out[2], true
}

// isSHA256Hex reports whether s is 64 lowercase hex digits.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
