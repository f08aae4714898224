package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/internal/logging"
	"github.com/durable-agents/agentloop/internal/temporalenv"
	"github.com/durable-agents/agentloop/store"
)

func main() {
	spec := flag.String("store", os.Getenv(store.EnvStore), "content store: a directory or s3://bucket/prefix?endpoint=host:port (default $"+store.EnvStore+")")
	olderThan := flag.Duration("older-than", 720*time.Hour, "keep scopes written to more recently than this")
	dryRun := flag.Bool("dry-run", false, "print what would be deleted, delete nothing")
	address := flag.String("address", "", "Temporal frontend host:port (default $TEMPORAL_ADDRESS, else localhost:7233)")
	namespace := flag.String("namespace", "", "Temporal namespace whose content to sweep (default $TEMPORAL_NAMESPACE, else default); other namespaces' content is never touched")
	legacy := flag.Bool("legacy", false, "also sweep the keys written before keys carried the namespace, asking this namespace about them: pass it only if no other namespace ever used the store")
	flag.Parse()
	if err := run(*spec, *olderThan, *dryRun, *legacy, *address, *namespace); err != nil {
		fmt.Fprintln(os.Stderr, "content-sweep:", err)
		os.Exit(1)
	}
}

func run(spec string, olderThan time.Duration, dryRun, legacy bool, address, namespace string) error {
	if spec == "" {
		return errors.New("no store: give -store or set " + store.EnvStore)
	}
	opts, keys, err := temporalenv.Connection(address, namespace)
	if err != nil {
		return err
	}
	opts.Logger, _ = logging.New("warn", false)
	c, err := client.Dial(opts)
	if err != nil {
		return fmt.Errorf("dial temporal: %w", err)
	}
	defer c.Close()
	s, err := store.Open(spec, store.Options{Keys: keys, CacheBytes: -1, Namespace: opts.Namespace, LegacyOwner: legacy})
	if err != nil {
		return err
	}
	// Only NotFound means gone: any other error (unreachable, no such
	// namespace, no permission) stops the sweep rather than delete content
	// a workflow may still need.
	exists := func(ctx context.Context, id string) (bool, error) {
		_, err := c.DescribeWorkflow(ctx, id, "")
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return false, nil
		}
		return err == nil, err
	}
	sweep, verb := s.Sweep, "deleted"
	if dryRun {
		sweep, verb = s.SweepDryRun, "would delete"
	}
	st, err := sweep(context.Background(), olderThan, exists)
	for _, id := range st.Deleted {
		fmt.Printf("%s %q\n", verb, id)
	}
	fmt.Printf("%s in namespace %s: %d scopes, %d %s, %d live, %d recent, %d unknown; %d of other namespaces (or legacy) left alone\n",
		s.Name(), opts.Namespace, st.Scopes, len(st.Deleted), verb, st.Live, st.Recent, st.Unknown, st.Other)
	return err
}
