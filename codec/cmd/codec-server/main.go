package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil))
}

// run serves until ctx ends; ready, when set, gets the bound address.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(addr string)) int {
	fs := flag.NewFlagSet("codec-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8081", "address to serve on")
	uiOrigin := fs.String("ui-origin", "http://localhost:8233", "Web UI origin(s) allowed by CORS, comma-separated")
	allowUnauth := fs.Bool("allow-unauthenticated", false, "serve without "+codec.EnvToken+" (anyone who reaches the server can decrypt)")
	newKey := fs.String("new-key", "", "print a new random key with this id (id:base64) and exit")
	storeSpec := fs.String("store", getenv(store.EnvStore), "the workers' content store, to show the content behind stubs (default $"+store.EnvStore+")")
	namespace := fs.String("namespace", getenv("TEMPORAL_NAMESPACE"), "the namespaces whose runs' stored content -store shows, comma-separated (default $TEMPORAL_NAMESPACE, else default): keys carry it; /decode expands the first's stubs, GET /blobs/ serves each")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *newKey != "" {
		k, err := codec.GenerateKey(*newKey)
		if err != nil {
			fmt.Fprintln(stderr, "codec-server:", err)
			return 2
		}
		fmt.Fprintln(stdout, k.Export())
		return 0
	}
	keys, err := codec.KeysFromEnv(getenv)
	if err == nil && keys.Empty() && *storeSpec == "" {
		err = errors.New("no key: set " + codec.EnvKeys + ` ("id:base64key,..."; make one with -new-key ID), or -store to show stored content`)
	}
	if err != nil {
		fmt.Fprintln(stderr, "codec-server:", err)
		return 2
	}
	var after []converter.PayloadCodec
	var blobs codec.BlobReader
	namespaces := splitList(*namespace)
	if len(namespaces) == 0 {
		namespaces = []string{store.DefaultNamespace}
	}
	if *storeSpec != "" {
		b, err := store.OpenBackend(*storeSpec)
		if err == nil {
			var bs *store.BlobServer
			if bs, err = store.NewBlobServer(b, namespaces, store.Options{Keys: keys}); err == nil {
				after = append(after, store.Expander{Blobs: bs.Store(namespaces[0])})
				blobs = bs
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "codec-server:", err)
			return 2
		}
	}
	h, err := codec.NewHandler(codec.HandlerOptions{
		Keys:                 keys,
		Token:                getenv(codec.EnvToken),
		AllowUnauthenticated: *allowUnauth,
		AllowedOrigins:       strings.Split(*uiOrigin, ","),
		After:                after,
		Blobs:                blobs,
		Logf:                 func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) },
	})
	if err != nil {
		fmt.Fprintf(stderr, "codec-server: %v; or pass -allow-unauthenticated on a trusted loopback address\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "codec-server:", err)
		return 1
	}
	if getenv(codec.EnvToken) == "" && !isLoopback(ln.Addr()) {
		fmt.Fprintf(stderr, "codec-server: WARNING: no token and listening on %s: anyone who reaches it can decrypt payloads\n", ln.Addr())
	}
	// No ServeMux in front of h: it would clean a /blobs/ path (".."
	// segments) into another one and redirect there, where h refuses it.
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			_, _ = io.WriteString(w, "ok\n")
			return
		}
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: root, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	encrypting := "no keys"
	if !keys.Empty() {
		encrypting = fmt.Sprintf("keys %s, encrypting with %s", keys, keys.Active().ID())
	}
	fmt.Fprintf(stderr, "codec-server: serving on http://%s (%s; content store %q for namespaces %s; CORS for %s; token %s)\n",
		ln.Addr(), encrypting, *storeSpec, strings.Join(namespaces, ","), *uiOrigin, map[bool]string{true: "required", false: "NOT required"}[getenv(codec.EnvToken) != ""])
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintln(stderr, "codec-server:", err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return 0
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
