package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/soak"
)

// benchSoak runs the chaos soak (internal/harness/soak) on a stack of its own and
// prints its report; it fails when an invariant broke.
func benchSoak(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	duration := fs.Duration("duration", 10*time.Minute, "how long the chaos lasts; the prompts are spread over it")
	d := soak.Defaults(10 * time.Minute)
	fs.IntVar(&d.Sessions, "sessions", d.Sessions, "concurrent sessions")
	fs.IntVar(&d.Prompts, "prompts", d.Prompts, "prompts per session")
	fs.IntVar(&d.Workers, "workers", d.Workers, "worker processes")
	fs.DurationVar(&d.KillMin, "kill-min", d.KillMin, "shortest pause between two worker kills")
	fs.DurationVar(&d.KillMax, "kill-max", d.KillMax, "longest pause between two worker kills")
	fs.IntVar(&d.HostLosses, "host-losses", d.HostLosses, "hosts lost for good (SIGKILL, replaced by a new host id), spread over the duration")
	fs.IntVar(&d.DriftWorkers, "drift-workers", d.DriftWorkers, "extra worker processes without the provider's environment")
	fs.DurationVar(&d.HostStartTimeout, "host-start-timeout", d.HostStartTimeout, "the workers' -host-start-timeout")
	fs.IntVar(&d.ServerRestarts, "server-restarts", d.ServerRestarts, "Temporal server restarts, spread over the duration")
	fs.DurationVar(&d.Drain, "drain", d.Drain, "how long the last prompts may take after the chaos")
	fs.StringVar(&d.Dir, "dir", "", "keep the stack, workspaces, journals and logs here (default: a new temporary directory)")
	noSandbox := fs.Bool("sandbox-none", false, "run the workers with -sandbox=none (only where no sandbox works)")
	_ = fs.Parse(args)
	d.Duration = *duration
	if *noSandbox {
		d.WorkerArgs = append(d.WorkerArgs, "-sandbox=none")
	}
	d.Logf = func(format string, a ...any) { fmt.Fprintf(os.Stderr, "soak: "+format+"\n", a...) }
	// Not the 30 minutes every benchmark gets: the soak is as long as asked.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.Duration+d.Drain+10*time.Minute)
	defer cancel()
	r, err := soak.Run(ctx, d)
	if err != nil {
		return err
	}
	fmt.Printf("command:  go run ./bench soak %v\n", args)
	fmt.Printf("machine:  %s\n\n", machine())
	r.Print(os.Stdout)
	if len(r.Violations) > 0 {
		return fmt.Errorf("%d violations", len(r.Violations))
	}
	if d.Dir == "" {
		fmt.Printf("(no violation: %s removed)\n", r.Dir)
		return os.RemoveAll(r.Dir)
	}
	return nil
}
