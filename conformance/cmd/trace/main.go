package main

import (
	"context"
	"fmt"
	"os"
	"time"

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
	c, stop, err := devserver.Connect(ctx, devserver.Options{})
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
