package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
)

// Budgets of the content benchmark (README: "History grows with new
// content" and "Sessions").
const (
	contentHistoryBudget = 20 * mb // a 1,000-prompt session's history, all runs
	contentRunBudget     = 4 * mb  // any one run's history
	contentStoreBudget   = 1.2     // store bytes on disk / tool output bytes
	contentMemoryBudget  = 1 << 30 // the worker's peak RSS, 50 sessions at once
	contentPromptTimeout = 10 * time.Minute
)

// benchContent runs sessions and runs with large tool output against the
// real worker binary and a model server speaking the OpenAI wire format,
// and prints what history, the content store and the worker's memory make
// of them. Modes: -prompts (one long session), -loop-turns (one long
// AgentLoop run), -sessions (many sessions on one worker), -compare (stubs
// against the SDK's external storage). Without flags it runs the first
// three at their default sizes.
func benchContent(parent context.Context, args []string) error {
	fs := flag.NewFlagSet("content", flag.ExitOnError)
	prompts := fs.Int("prompts", 1000, "prompts of the long session")
	loopTurns := fs.Int("loop-turns", 2000, "turns of the long AgentLoop run")
	sessions := fs.Int("sessions", 50, "concurrent sessions on one worker")
	sessionPrompts := fs.Int("session-prompts", 40, "prompts each of the concurrent sessions answers")
	compare := fs.Bool("compare", false, "measure stubs against the SDK's external storage")
	comparePrompts := fs.Int("compare-prompts", 200, "prompts of each -compare session")
	timeout := fs.Duration("timeout", 3*time.Hour, "give up after this long")
	_ = fs.Parse(args)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	all := !set["prompts"] && !set["loop-turns"] && !set["sessions"] && !set["session-prompts"] &&
		!set["compare"] && !set["compare-prompts"]

	// The full sizes take longer than the half hour main gives a benchmark.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), *timeout)
	defer cancel()
	e, err := newContentEnv(ctx)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Printf("machine: %s\n", machine())
	fmt.Printf("model: %s (Chat Completions SSE); store: %s\n", e.model.url, e.storeDir)

	var results []bool
	run := func(name string, f func() (bool, error)) error {
		fmt.Printf("\n== %s ==\n", name)
		ok, err := f()
		if err != nil {
			e.failed = true
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, ok)
		return nil
	}
	if all || set["prompts"] {
		err := run(fmt.Sprintf("%d-prompt session", *prompts), func() (bool, error) { return benchLongSession(ctx, e, *prompts) })
		if err != nil {
			return err
		}
	}
	if *compare || set["compare-prompts"] {
		err := run(fmt.Sprintf("stubs against the SDK's external storage, %d prompts each", *comparePrompts),
			func() (bool, error) { return benchCompare(ctx, e, *comparePrompts) })
		if err != nil {
			return err
		}
	}
	if all || set["loop-turns"] {
		err := run(fmt.Sprintf("%d-turn AgentLoop run", *loopTurns), func() (bool, error) { return benchLoopTurns(ctx, e, *loopTurns) })
		if err != nil {
			return err
		}
	}
	if all || set["sessions"] || set["session-prompts"] {
		err := run(fmt.Sprintf("%d concurrent sessions of %d prompts on one worker", *sessions, *sessionPrompts),
			func() (bool, error) { return benchManySessions(ctx, e, *sessions, *sessionPrompts) })
		if err != nil {
			return err
		}
	}
	for _, ok := range results {
		if !ok {
			e.failed = true
			return fmt.Errorf("over budget")
		}
	}
	return nil
}

// contentConfig is a run's configuration: the model server's model id
// through the worker's openai-compatible provider, and bash.
func contentConfig(model string) agent.LoopConfig {
	return agent.LoopConfig{
		Model:        agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: model},
		Tools:        []string{"bash"},
		SystemPrompt: "You are a careful coding assistant.",
	}
}

// verdict prints a budget's PASS or FAIL line and returns ok.
func verdict(ok bool, format string, a ...any) bool {
	word := "PASS"
	if !ok {
		word = "FAIL"
	}
	fmt.Printf("%s  %s\n", word, fmt.Sprintf(format, a...))
	return ok
}

// line prints one figure.
func line(name, format string, a ...any) {
	fmt.Printf("%-28s %s\n", name+":", fmt.Sprintf(format, a...))
}

// mbs prints bytes in MB (2^20), or in KB below one MB.
func mbs(n int64) string {
	if n < mb {
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/mb)
}

// progressf reports progress on stderr, apart from the figures.
func progressf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "  ... "+format+"\n", a...)
}
