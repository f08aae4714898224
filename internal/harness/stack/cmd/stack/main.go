package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/stack"
)

func main() {
	fs := flag.NewFlagSet("stack", flag.ExitOnError)
	dir := fs.String("dir", ".stack", "directory of the stack's data, config, logs and pid files")
	pgPort := fs.Int("postgres-port", stack.DefaultPostgresPort, "PostgreSQL's port")
	uiPort := fs.Int("ui-port", 8080, "the Web UI's port; 0 starts no UI")
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: stack up|down|status [flags]")
		os.Exit(2)
	}
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "up":
		if stack.Running(abs) {
			fail(fmt.Errorf("a stack is running in %s:\n%s", abs, stack.StatusDir(abs)))
		}
		if bins, err := stack.FindBinaries(); err == nil && bins.UI == "" && *uiPort != 0 {
			fmt.Printf("the Web UI's server is not installed (go install %s): no UI\n", stack.UIModule)
			*uiPort = 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		s, err := stack.Up(ctx, stack.Options{Dir: abs, PostgresPort: *pgPort, UIPort: *uiPort})
		if err != nil {
			fail(err)
		}
		fmt.Printf("stack up in %v (%s)\n", time.Since(start).Round(100*time.Millisecond), abs)
		fmt.Printf("  PostgreSQL      127.0.0.1:%d (user %s; log %s)\n", s.Postgres.Port, s.Postgres.User, filepath.Join(s.Postgres.Dir, "postgres.log"))
		fmt.Printf("  Temporal server %s, namespace %s (log %s)\n", s.Server.Address, s.Server.Namespace, s.Server.Log)
		if s.Server.MetricsURL != "" {
			fmt.Printf("  metrics         %s\n", s.Server.MetricsURL)
		}
		if s.UI != nil {
			fmt.Printf("  Web UI          %s\n", s.UI.URL)
		}
		fmt.Printf("workers and clients: TEMPORAL_ADDRESS=%s\n", s.Server.Address)
	case "down":
		if err := stack.DownDir(abs); err != nil {
			fail(err)
		}
		fmt.Printf("stack in %s stopped\n", abs)
	case "status":
		fmt.Print(stack.StatusDir(abs))
		if !stack.Running(abs) {
			os.Exit(3)
		}
	default:
		fail(fmt.Errorf("unknown command %q: up, down or status", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stack:", err)
	os.Exit(1)
}
