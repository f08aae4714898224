package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/store"
)

func main() {
	spec := flag.String("store", os.Getenv(store.EnvStore), "content store: a directory or s3://bucket/prefix?endpoint=host:port (default $"+store.EnvStore+")")
	dryRun := flag.Bool("dry-run", false, "list the blobs that would be re-sealed, rewrite nothing")
	verbose := flag.Bool("v", false, "print every key re-sealed")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *spec, *dryRun, *verbose, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "content-reseal:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, spec string, dryRun, verbose bool, getenv func(string) string, out io.Writer) error {
	if spec == "" {
		return errors.New("no store: give -store or set " + store.EnvStore)
	}
	keys, err := codec.KeysFromEnv(getenv)
	if err != nil {
		return err
	}
	if keys.Empty() {
		return fmt.Errorf("no key ring: set %s (or %s), the new key first", codec.EnvKeys, codec.EnvKeysFile)
	}
	s, err := store.Open(spec, store.Options{Keys: keys, CacheBytes: -1})
	if err != nil {
		return err
	}
	verb := "re-sealed"
	if dryRun {
		verb = "would re-seal"
	}
	st, err := s.Reseal(ctx, dryRun, func(key string) {
		if verbose || dryRun {
			fmt.Fprintf(out, "%s %s\n", verb, key)
		}
	})
	fmt.Fprintf(out, "%s with key %s: %d objects, %d %s, %d already sealed with it, %d not blobs\n",
		s.Name(), keys.Active().ID(), st.Objects, st.Resealed, verb, st.Current, st.Skipped)
	if err != nil {
		return fmt.Errorf("stopped (run it again to go on): %w", err)
	}
	return nil
}
