package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
)

func main() {
	conformance.BurnIfAsked()
	n := flag.Int("n", 20, "repetitions of the whole set")
	load := flag.Int("load", 4*runtime.NumCPU(), "the load to keep: CPU burners make up what other processes leave")
	parallel := flag.Int("parallel", 8, "scenarios in flight at once")
	dir := flag.String("dir", "conformance/testdata", "the shared scenarios' directory; its extra/ and typescript/ hold the others")
	flag.Parse()
	if err := run(*n, *load, *parallel, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "loadrun:", err)
		os.Exit(1)
	}
}

func run(n, load, parallel int, dir string) error {
	var cases []conformance.Case
	// typescript/'s scenarios with the Go remote worker (conformance.Run).
	for _, d := range []string{dir, filepath.Join(dir, "extra"), filepath.Join(dir, "typescript")} {
		cs, err := conformance.Cases(d)
		if err != nil {
			return err
		}
		cases = append(cases, cs...)
	}
	ctx := context.Background()
	c, stopServer, err := connect(ctx)
	if err != nil {
		return err
	}
	defer stopServer()
	burners := conformance.KeepLoad(load)
	defer burners.Stop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		burners.Stop()
		stopServer()
		os.Exit(1)
	}()

	fmt.Printf("%d scenarios x %d repetitions on %d cores at load %d or more, %d in flight\n",
		len(cases)-len(conformance.KnownDifferences), n, runtime.NumCPU(), load, parallel)
	start := time.Now()
	runs, differ, failed, retried, done := 0, 0, 0, 0, 0
	perRep := map[int]int{}
	var loads []string
	conformance.RunRepeated(ctx, c, cases, n, parallel, func(o conformance.Outcome) {
		runs++
		retried += o.Retries
		perRep[o.Repetition]++
		switch {
		case o.Err != nil:
			failed++
			fmt.Printf("FAIL %s (repetition %d): %v\n", o.Case, o.Repetition, o.Err)
		case o.Diff != "":
			differ++
			fmt.Printf("DIFF %s (repetition %d, workflow %s): %s\n", o.Case, o.Repetition, o.WorkflowID, o.Diff)
		}
		if perRep[o.Repetition] == len(cases)-len(conformance.KnownDifferences) {
			done++
			l := fmt.Sprintf("%.1f", conformance.LoadAverage())
			loads = append(loads, l)
			fmt.Printf("repetition %d done at %s: %d differences and %d failed runs so far, load %s (%d burners)\n",
				o.Repetition, time.Since(start).Round(time.Second), differ, failed, l, burners.Running())
		}
	})
	fmt.Printf("%d runs (%d repetitions) in %s on %d cores (1-minute load average at each repetition's end: %s): %d differences, %d failed runs, %d attempts the server failed and were run again\n",
		runs, done, time.Since(start).Round(time.Second), runtime.NumCPU(), strings.Join(loads, " "), differ, failed, retried)
	if differ+failed > 0 {
		return fmt.Errorf("of %d runs, %d differ from pi and %d failed", runs, differ, failed)
	}
	return nil
}

// connect uses TEMPORAL_ADDRESS's server, or else a dev server on a
// database file, not memory: the run's history stays readable (temporal
// workflow show) after a difference. At load 30 the dev server answered
// "Namespace default is not found" for a while with either; runOne runs
// those again.
func connect(ctx context.Context) (client.Client, func(), error) {
	dir, err := os.MkdirTemp("", "loadrun-")
	if err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, stop, err := devserver.Connect(sctx, devserver.Options{DBFile: filepath.Join(dir, "temporal.db")})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	return c, func() { stop(); _ = os.RemoveAll(dir) }, nil
}
