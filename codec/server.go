package codec

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"go.temporal.io/sdk/converter"
)

// MaxRequestBytes bounds a codec server request body. Temporal's own limit
// for one payload is 2 MiB; the Web UI sends an event's payloads at a time.
const MaxRequestBytes = 16 << 20

// HandlerOptions configure the codec server's handler.
type HandlerOptions struct {
	// Keys is the key ring; it must not be empty.
	Keys Keys
	// Token is the bearer token every /encode and /decode request must
	// carry ("Authorization: Bearer TOKEN"), compared in constant time.
	Token string
	// AllowUnauthenticated must be set to serve without a Token: anyone who
	// reaches such a server can decrypt every payload.
	AllowUnauthenticated bool
	// AllowedOrigins are the browser origins (the Web UI's, such as
	// http://localhost:8233) that may call the server; "*" allows any.
	AllowedOrigins []string
	// After are codecs that decode after decryption (and encode before
	// encryption), such as the content store's expander, which shows the
	// content behind stubs. With them, Keys may be empty.
	After []converter.PayloadCodec
	// Blobs, when set, serves GET /blobs/{namespace}/{workflowId}/{sha256}
	// (blobs.go): the content behind a stub, for clients in any language,
	// behind the same token. With it, Keys may be empty.
	Blobs BlobReader
	// Logf, when set, gets what the server keeps from clients: the store
	// errors behind a 502.
	Logf func(format string, args ...any)
}

// ErrNoToken is NewHandler's answer to a handler with neither a token nor
// AllowUnauthenticated.
var ErrNoToken = errors.New("codec server: no token configured (set " + EnvToken +
	"), and serving decrypted payloads to anyone was not explicitly allowed")

// NewHandler returns the codec server: POST .../encode and .../decode as
// Temporal's remote codec protocol defines them (the Web UI's and the
// CLI's --codec-endpoint) and, with Blobs, GET /blobs/..., behind a
// bearer-token check, with CORS for the allowed origins.
func NewHandler(o HandlerOptions) (http.Handler, error) {
	if o.Keys.Empty() && len(o.After) == 0 && o.Blobs == nil {
		return nil, errors.New("codec server: no key (set " + EnvKeys + ")")
	}
	if o.Token == "" && !o.AllowUnauthenticated {
		return nil, ErrNoToken
	}
	var codecs []converter.PayloadCodec
	if !o.Keys.Empty() {
		c, err := New(o.Keys)
		if err != nil {
			return nil, err
		}
		codecs = append(codecs, c)
	}
	codecs = append(codecs, o.After...)
	h := &handler{codec: converter.NewPayloadCodecHTTPHandler(codecs...), origins: map[string]bool{}, blobs: o.Blobs, logf: o.Logf}
	if h.logf == nil {
		h.logf = func(string, ...any) {}
	}
	if o.Token != "" {
		sum := sha256.Sum256([]byte(o.Token))
		h.tokenHash = sum[:]
	}
	for _, origin := range o.AllowedOrigins {
		if origin = strings.TrimRight(strings.TrimSpace(origin), "/"); origin != "" {
			h.origins[origin] = true
		}
	}
	return h, nil
}

type handler struct {
	codec     http.Handler
	blobs     BlobReader
	logf      func(format string, args ...any)
	tokenHash []byte
	origins   map[string]bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin != "" {
		w.Header().Add("Vary", "Origin")
		if h.origins[origin] || h.origins["*"] {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		} else if r.Method == http.MethodOptions {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
	}
	if r.Method == http.MethodOptions {
		// A CORS preflight carries no credentials; answer it without them.
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentloop codec"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.EscapedPath(), BlobsPath) {
		h.serveBlob(w, r)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	}
	w.Header().Set("Cache-Control", "no-store")
	h.codec.ServeHTTP(w, r)
}

func (h *handler) authorized(r *http.Request) bool {
	if h.tokenHash == nil {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	// Hashing first makes the comparison constant-time in the token's
	// length too.
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(sum[:], h.tokenHash) == 1
}
