package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: trace SCENARIO.json")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	s, err := conformance.Load(path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, stop, err := connect(ctx)
	if err != nil {
		return err
	}
	defer stop()
	res, err := conformance.Run(ctx, c, s)
	if err != nil {
		return err
	}
	for _, line := range res.Trace {
		fmt.Println(line)
	}
	return nil
}

func connect(ctx context.Context) (client.Client, func(), error) {
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: quietLogger()})
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	srv, err := devserver.Start(ctx, devserver.Options{})
	if err != nil {
		return nil, nil, err
	}
	c := srv.Client()
	return c, func() { _ = srv.Stop() }, nil
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
