package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"time"

	historypb "go.temporal.io/api/history/v1"
)

// loopBench is one `bench loop` command: its worker and server, pi's
// runner, the scenarios, and what the steps measured so far. Its methods
// are the command's steps, in the order benchLoop calls them.
type loopBench struct {
	ctx   context.Context
	e     *env
	meter cpuMeter
	rpcs  *rpcReader
	pi    *piRunner
	all   []benchScenario

	reps, floorRuns, concurrent, replays int

	floor   time.Duration // the bare workflow's median round trip
	results map[string]*loopResult
}

// warmUp runs the worker's first tasks: connections, caches.
func (b *loopBench) warmUp() error {
	for i := 0; i < 3; i++ {
		if _, err := runFloor(b.ctx, b.e, FloorInput{Activities: 1}, fmt.Sprintf("warmup-%d", i)); err != nil {
			return fmt.Errorf("warm-up floor run: %w", err)
		}
	}
	for _, s := range b.all {
		if s.Name == scPar0 {
			if _, _, err := runOurs(b.ctx, b.e, s, "warmup"); err != nil {
				return fmt.Errorf("warm-up run: %w", err)
			}
		}
	}

	return nil
}

// measureIdle prints what the server and worker burn doing nothing.
func (b *loopBench) measureIdle() {
	// Pollers, the server's background queues: per-run CPU figures
	// include it for the run's span.
	c0, t0 := b.meter.sample(), time.Now()
	time.Sleep(3 * time.Second)
	idle := b.meter.sample().sub(c0)
	idleSpan := time.Since(t0)
	fmt.Printf("idle:     server %.1f%% of a core, worker %.1f%%, client %.1f%% (over %.0f s with no runs)\n\n",
		100*float64(idle.server)/float64(idleSpan), 100*float64(idle.worker)/float64(idleSpan), 100*float64(idle.client)/float64(idleSpan), idleSpan.Seconds())
}

// measureFloors measures the floor, and what one more activity and one
// heartbeat cost.
func (b *loopBench) measureFloors() error {
	floors := []struct {
		name string
		in   FloorInput
	}{
		{"floor: bare workflow, one no-op activity", FloorInput{Activities: 1}},
		{"bare workflow, two no-op activities in sequence", FloorInput{Activities: 2}},
		{"bare workflow, one no-op activity that heartbeats once", FloorInput{Activities: 1, Heartbeat: true}},
		{"bare workflow, no activity", FloorInput{}},
		{"bare workflow, one no-op local activity", FloorInput{Activities: 1, Local: true}},
	}
	floorTimes := make([][]time.Duration, len(floors))
	floorCPU := make([]cpuSample, len(floors))
	for i := 0; i < b.floorRuns; i++ {
		for j, f := range floors {
			c0 := b.meter.sample()
			d, err := runFloor(b.ctx, b.e, f.in, fmt.Sprintf("floor%d-%d", j, i))
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			floorCPU[j] = floorCPU[j].add(b.meter.sample().sub(c0))
			floorTimes[j] = append(floorTimes[j], d)
		}
	}
	b.floor = median(floorTimes[0])
	fmt.Printf("floor round trips (%d runs each, interleaved; ExecuteWorkflow → result):\n", b.floorRuns)
	for j, f := range floors {
		fmt.Printf("  %-56s median %7.2f ms  [%6.2f – %6.2f]  CPU/run %s\n", f.name, ms(median(floorTimes[j])), ms(quantile(floorTimes[j], 0)), ms(quantile(floorTimes[j], 1)),
			floorCPU[j].div(b.floorRuns))
	}
	fmt.Printf("  → one more activity round trip (activity + workflow task): %.2f ms (two − one) or %.2f ms (one − none)\n",
		ms(median(floorTimes[1])-b.floor), ms(b.floor-median(floorTimes[3])))
	fmt.Printf("  → one heartbeat RPC at an activity's start: %.2f ms; one local activity: %.2f ms\n",
		ms(median(floorTimes[2])-b.floor), ms(median(floorTimes[4])-median(floorTimes[3])))
	if _, run, err := runFloorRun(b.ctx, b.e, FloorInput{Activities: 2}, "breakdown"); err == nil {
		if evs, err := history(b.ctx, b.e.c, run.GetID(), run.GetRunID()); err == nil {
			printBreakdown(os.Stdout, "  a two-activity floor run's history", evs, 0)
		}
	}
	fmt.Println()
	return nil
}

// runAB runs every scenario that filter matches through pi and through
// the workflow, alternating which goes first, and prints the table.
func (b *loopBench) runAB(filter *regexp.Regexp) error {
	b.results = map[string]*loopResult{}
	var order []*loopResult
	for _, s := range b.all {
		if !filter.MatchString(s.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: %s ×%d\n", s.Name, b.reps)
		r := &loopResult{s: s}
		for i := 0; i < b.reps; i++ {
			runPi := func() error {
				p, err := b.pi.run(b.ctx, s)
				r.pi = append(r.pi, p)
				return err
			}
			runOursOnce := func() error {
				c0, r0 := b.meter.sample(), b.rpcs.read()
				d, run, err := runOurs(b.ctx, b.e, s, fmt.Sprint(i))
				if err != nil {
					return err
				}
				r.cpu = append(r.cpu, b.meter.sample().sub(c0))
				r.rpcs = append(r.rpcs, subRPC(b.rpcs.read(), r0))
				evs, err := history(b.ctx, b.e.c, run.GetID(), run.GetRunID())
				if err != nil {
					return err
				}
				r.ours = append(r.ours, d)
				r.hist = append(r.hist, statsOf(evs))
				r.lastHist = evs
				return nil
			}
			first, second := runPi, runOursOnce
			if i%2 == 1 {
				first, second = runOursOnce, runPi
			}
			if err := first(); err != nil {
				return err
			}
			if err := second(); err != nil {
				return err
			}
		}
		b.results[s.Name] = r
		order = append(order, r)
	}
	printAB(order)
	return nil
}

// derivedTargets are the ratio targets and the costs per turn and per
// tool call, from differences of runs.
func (b *loopBench) derivedTargets() []target {
	var targets []target
	targets = append(targets, ratioTarget(b.results[scSeq100], scSeq100, 1.3), ratioTarget(b.results[scPar100], scPar100, 1.3))
	fmt.Printf("\nderived costs (Δ = ours − pi, medians):\n")
	perTurn, okTurn := derivePerTurn(b.results)
	for _, name := range []string{scSeq0, scPar0} {
		perCall, ok := derivePerCall(b.results, name)
		t := target{name: "10x4/0ms " + name[len(name)-3:] + ": per tool call cost", goal: "≤ 1.0x floor", skipped: !ok}
		if ok {
			t.measured = fmt.Sprintf("%.2f ms = %.2fx floor (%.2f ms)", ms(perCall), float64(perCall)/float64(b.floor), ms(b.floor))
			t.pass = perCall <= b.floor
		}
		targets = append(targets, t)
	}
	tt := target{name: "10x4/0ms: per model turn cost", goal: "≤ 1.0x floor", skipped: !okTurn}
	if okTurn {
		tt.measured = fmt.Sprintf("%.2f ms = %.2fx floor", ms(perTurn), float64(perTurn)/float64(b.floor))
		tt.pass = perTurn <= b.floor
	}
	targets = append(targets, tt)
	fmt.Printf("  per model turn = (Δ %s − Δ %s) / 10: the two runs differ only by 10 model turns (follow-up driven, no tools)\n", scElevenTxt, scOneTurn)
	fmt.Printf("  per tool call  = (Δ 10x4/0ms − Δ %s) / 40: both have 11 model turns; the 10x4 run adds 40 tool calls\n", scElevenTxt)
	if okTurn {
		fmt.Printf("  per model turn: %.2f ms (%.2fx floor)\n", ms(perTurn), float64(perTurn)/float64(b.floor))
	}
	for _, name := range []string{scSeq0, scPar0} {
		if perCall, ok := derivePerCall(b.results, name); ok {
			fmt.Printf("  per tool call, %s: %.2f ms (%.2fx floor)\n", name, ms(perCall), float64(perCall)/float64(b.floor))
		}
	}
	return targets
}

// batchTarget is the 16 × 500 ms batch's.
func (b *loopBench) batchTarget() target {
	bt := target{name: "16x500ms parallel batch: run wall", skipped: b.results[scBatch] == nil}
	budget := time.Duration(1.15*float64(500*time.Millisecond)) + b.floor
	bt.goal = fmt.Sprintf("≤ 1.15×500 ms + floor = %.1f ms", ms(budget))
	if r := b.results[scBatch]; r != nil {
		m := median(r.ours)
		bt.measured = fmt.Sprintf("%.1f ms (pi %.1f ms)", ms(m), ms(median(r.piLoop())))
		bt.pass = m <= budget
		if span, ok := batchSpan(r.lastHist); ok {
			fmt.Printf("  16x500ms batch in history (first ExecuteToolCall scheduled → workflow task after the last result completed): %.1f ms\n", ms(span))
		}
	}
	return bt
}

// printWhereTheTimeGoes prints the history event times of the last runs.
func (b *loopBench) printWhereTheTimeGoes() {
	fmt.Printf("\nwhere the time goes (history event times of the last run):\n")
	for _, sc := range []struct {
		name string
		turn int
	}{{scSeq0, 5}, {scPar0, 5}, {scBatch, 1}} {
		if r := b.results[sc.name]; r != nil {
			printBreakdown(os.Stdout, sc.name, r.lastHist, sc.turn)
			fmt.Println()
		}
	}
}

// concurrentTargets runs the concurrent burst, and the same burst of
// floor runs for scale.
func (b *loopBench) concurrentTargets() (target, target, error) {
	ct := target{name: fmt.Sprintf("%d concurrent 10x4/100ms par: all complete", b.concurrent), goal: "all complete", skipped: b.concurrent == 0}
	pt := target{name: fmt.Sprintf("%d concurrent: p99 run time", b.concurrent), goal: "≤ 3x lone", skipped: b.concurrent == 0}
	if b.concurrent > 0 {
		s := find(b.all, scPar100)
		var lone []time.Duration
		if r := b.results[scPar100]; r != nil {
			lone = r.ours
		} else {
			for i := 0; i < 3; i++ {
				d, _, err := runOurs(b.ctx, b.e, s, fmt.Sprintf("lone-%d", i))
				if err != nil {
					return target{}, target{}, err
				}
				lone = append(lone, d)
			}
		}
		fmt.Fprintf(os.Stderr, "bench: %d concurrent runs\n", b.concurrent)
		c0 := b.meter.sample()
		durs, failed, wall := runConcurrent(b.ctx, b.e, s, b.concurrent)
		cpu := b.meter.sample().sub(c0)
		loneMed := median(lone)
		fmt.Printf("%d concurrent runs of %s on one worker process (started at once):\n", b.concurrent, scPar100)
		fmt.Printf("  completed %d/%d in %.1f s: %.0f runs per minute\n", len(durs), b.concurrent, wall.Seconds(), float64(len(durs))/wall.Minutes())
		fmt.Printf("  run time p50 %.0f ms, p99 %.0f ms, max %.0f ms; a lone run: median %.0f ms (p99 = %.2fx lone)\n",
			ms(quantile(durs, 0.5)), ms(quantile(durs, 0.99)), ms(quantile(durs, 1)), ms(loneMed), float64(quantile(durs, 0.99))/float64(loneMed))
		fmt.Printf("  CPU per run: %s; CPU busy %.2f of %d cores for the whole burst\n", cpu.div(b.concurrent), float64(cpu.total())/float64(wall), runtime.NumCPU())
		if r := b.results[scPar100]; r != nil {
			fmt.Printf("  (a lone run's CPU: %s)\n", meanCPU(r.cpu))
		}
		if failed > 0 {
			fmt.Printf("  %d runs failed\n", failed)
		}
		// The same burst of the floor workflow: what the server and
		// worker can do on this machine whatever the loop does.
		fmt.Fprintf(os.Stderr, "bench: %d concurrent floor runs\n", b.concurrent)
		c0 = b.meter.sample()
		fdurs, ffailed, fwall := runConcurrentFloor(b.ctx, b.e, b.concurrent)
		fcpu := b.meter.sample().sub(c0)
		fmt.Printf("  for scale, %d concurrent floor runs: completed %d in %.1f s, p50 %.0f ms, p99 %.0f ms (a lone one: %.0f ms); CPU per run %s\n",
			b.concurrent, len(fdurs), fwall.Seconds(), ms(quantile(fdurs, 0.5)), ms(quantile(fdurs, 0.99)), ms(b.floor), fcpu.div(b.concurrent))
		if ffailed > 0 {
			fmt.Printf("  %d floor runs failed\n", ffailed)
		}
		ct.measured = fmt.Sprintf("%d/%d", len(durs), b.concurrent)
		ct.pass = len(durs) == b.concurrent && failed == 0
		pt.goal = fmt.Sprintf("≤ 3x lone (%.0f ms)", ms(3*loneMed))
		pt.measured = fmt.Sprintf("%.0f ms = %.2fx lone", ms(quantile(durs, 0.99)), float64(quantile(durs, 0.99))/float64(loneMed))
		pt.pass = len(durs) > 0 && quantile(durs, 0.99) <= 3*loneMed
	}
	return ct, pt, nil
}

// replayTarget replays a 200-turn history.
func (b *loopBench) replayTarget() (target, error) {
	rt := target{name: "replay of a 200-turn history", goal: "< 1 s", skipped: true}
	if b.replays > 0 {
		var evs []*historypb.HistoryEvent
		if r := b.results[scLong]; r != nil {
			evs = r.lastHist
		} else {
			_, run, err := runOurs(b.ctx, b.e, find(b.all, scLong), "replay")
			if err != nil {
				return target{}, err
			}
			if evs, err = history(b.ctx, b.e.c, run.GetID(), run.GetRunID()); err != nil {
				return target{}, err
			}
		}
		times, err := replay(evs, b.replays)
		if err != nil {
			return target{}, fmt.Errorf("replay: %w", err)
		}
		st := statsOf(evs)
		fmt.Printf("\nreplay of a %s history (%d events, %.0f KiB) with worker.NewWorkflowReplayer, in this process:\n", scLong, st.events, float64(st.bytes)/1024)
		fmt.Printf("  %d replays: median %.0f ms, first %.0f ms, max %.0f ms\n", len(times), ms(median(times)), ms(times[0]), ms(quantile(times, 1)))
		rt.skipped = false
		rt.measured = fmt.Sprintf("%.0f ms (median of %d; max %.0f ms)", ms(median(times)), len(times), ms(quantile(times, 1)))
		rt.pass = median(times) < time.Second
	}
	return rt, nil
}

// printTargets prints the closing table.
func printTargets(targets []target) {
	fmt.Printf("\ntargets:\n")
	fmt.Printf("  %-44s %-34s %-46s %s\n", "target", "goal", "measured", "")
	for _, t := range targets {
		verdict := "FAIL"
		switch {
		case t.skipped:
			verdict, t.measured = "SKIP", "(its scenarios did not run)"
		case t.pass:
			verdict = "PASS"
		}
		fmt.Printf("  %-44s %-34s %-46s %s\n", t.name, t.goal, t.measured, verdict)
	}
}
