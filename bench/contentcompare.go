package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
)

// compareRow is one design's figures.
type compareRow struct {
	design string
	out    sessionOutcome
	chain  chainStat
	scope  scopeStat
	hwm    int64
}

// benchCompare runs the same session twice on the benchmark's own worker:
// as shipped (large blocks stored once, stubs in history) and with the
// Temporal SDK's external storage instead (content inline in the
// workflow, every payload over 2 KB stored whole by store.SDKDriver, on
// the worker's client and on the benchmark's).
func benchCompare(ctx context.Context, e *contentEnv, prompts int) (bool, error) {
	var rows []compareRow
	for _, design := range []string{offloadStubs, offloadSDK} {
		queue := fmt.Sprintf("content-compare-%s-%d", design, time.Now().UnixNano())
		w, err := e.startBenchWorker(queue, "-offload", design)
		if err != nil {
			return false, err
		}
		c := e.c
		if design == offloadSDK {
			if c, err = client.Dial(client.Options{HostPort: e.address, Logger: quiet(), ExternalStorage: sdkStorage(e.st)}); err != nil {
				w.stop()
				return false, err
			}
		}
		id := queue
		out, err := driveSession(ctx, c, e.st, queue, id, prompts, w, func(i int) {
			if i%50 == 0 {
				progressf("%s: %d prompts answered", design, i)
			}
		})
		if err == nil {
			var r compareRow
			r.design, r.out = design, out
			_, r.hwm, _ = w.memory()
			if r.chain, err = measureChain(ctx, e.c, id); err == nil {
				r.scope, err = measureScope(e.storeDir, id)
			}
			rows = append(rows, r)
		}
		_ = e.c.TerminateWorkflow(context.WithoutCancel(ctx), id, "", "bench over")
		w.stop()
		if c != e.c {
			c.Close()
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", design, err)
		}
	}

	fmt.Printf("%-30s %22s %22s\n", "", "stubs (as shipped)", "SDK external storage")
	row := func(name string, f func(r compareRow) string) {
		fmt.Printf("%-30s %22s %22s\n", name, f(rows[0]), f(rows[1]))
	}
	row("prompts answered", func(r compareRow) string { return fmt.Sprint(r.out.answered) })
	row("wall time", func(r compareRow) string { return r.out.wall.Round(time.Second).String() })
	row("runs in the chain", func(r compareRow) string { return fmt.Sprint(len(r.chain.runs)) })
	row("history, all runs", func(r compareRow) string { return mbs(r.chain.bytes) })
	row("history events", func(r compareRow) string { return fmt.Sprint(r.chain.events) })
	row("largest run", func(r compareRow) string { return mbs(r.chain.largest.bytes) })
	row("workflow task failures", func(r compareRow) string { return fmt.Sprint(r.chain.failed) })
	row("store on disk", func(r compareRow) string { return mbs(r.scope.bytes) })
	row("store / tool output", func(r compareRow) string {
		return fmt.Sprintf("%.2fx", float64(r.scope.bytes)/float64(max(1, r.out.outputBytes)))
	})
	row("store objects", func(r compareRow) string { return fmt.Sprint(r.scope.objects) })
	row("objects per output (max)", func(r compareRow) string {
		return fmt.Sprintf("%.1f (%d)", float64(sumCopies(r.scope))/float64(max(1, len(r.scope.copies))), r.scope.maxCopies())
	})
	row("worker peak RSS (VmHWM)", func(r compareRow) string { return mbs(r.hwm) })
	ok := true
	for _, r := range rows {
		ok = verdict(r.out.answered == prompts && r.chain.failed == 0, "%s: every prompt answered, no workflow task failure", r.design) && ok
	}
	return ok, nil
}

func sumCopies(s scopeStat) int {
	n := 0
	for _, c := range s.copies {
		n += c
	}
	return n
}
