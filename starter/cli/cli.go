package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/logging"
	"github.com/durable-agents/agentloop/internal/temporalenv"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/telemetry"
)

// Usage lists the commands.
const Usage = `usage: starter [-address host:port] [-namespace ns] [-update-id ID] COMMAND [flags] [args]

commands:
  run [flags] PROMPT      start a run and stream its events (run -h for flags)
  demo                    run the scripted demo on a sample workspace
  watch ID                stream the events of a run
  steer ID TEXT           queue a steering message (injected after the current turn)
  follow-up ID TEXT       queue a follow-up message (injected when the agent would stop)
  abort ID [REASON]       abort a run
  state ID                print a run's state

  session start [flags] [PROMPT]
                          start a session (pi's Agent as a workflow); prints its id; with a
                          prompt, sends it in the same request (Update-with-Start) and streams the run
  session chat [flags] [ID]
                          interactive: prompts, streaming, steering, y/n/always approvals;
                          with an ID, comes back to a session: its transcript, then what waits
  session list [-n N] [-all]
                          sessions with their title (first prompt), status, model, turns,
                          cost and last activity
  session prompt ID TEXT  prompt a session and stream the run
  session continue ID     continue a session (pi's rules for an assistant tail)
  session reset ID        clear a session's transcript and queues
  session compact ID [INSTRUCTIONS]
                          summarize the oldest context now (between runs)
  session set ID model|thinking|steering|follow-up|tool-execution|remote-tools|hooks VALUE
  approve ID CALL [POSITION] allow|deny|always [REASON]
                          answer a tool call waiting for approval

While a command follows a run (run, demo, session chat/prompt/continue), Ctrl-C aborts the run and a second Ctrl-C detaches
(the run goes on; the starter prints how to watch and abort it).
Exit codes: 0 done, 1 a run's error or the starter's, 2 usage, 3 input refused, 4 aborted,
5 budget stop, 130 detached.

Every Update a command sends (steer, follow-up, abort, approve, session prompt, continue, reset,
compact, set, and start's prompt) has an ID: -update-id, else a new one. Run a command again with
the same -update-id and the run applies it once, even across continue-as-new.
`

// Main runs the starter with its arguments and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("starter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, Usage) }
	address := fs.String("address", "", "Temporal frontend host:port (default $TEMPORAL_ADDRESS, else localhost:7233)")
	namespace := fs.String("namespace", "", "Temporal namespace (default $TEMPORAL_NAMESPACE, else default)")
	storeSpec := fs.String("store", store.DefaultSpec(), "the workers' content store, where large tool output and answers are read from (default $AGENTLOOP_STORE)")
	updateID := fs.String("update-id", "", "ID of the Update the command sends (default: a new one); the same ID is applied once")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	intr := &interrupts{cancel: cancel}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go intr.listen(sigs)
	logger, _ := logging.New("warn", false)
	opts, keys, err := temporalenv.Connection(*address, *namespace)
	if err != nil {
		fmt.Fprintln(stderr, "starter:", err)
		return 1
	}
	opts.Logger = logger
	// Traces start here when OTEL_EXPORTER_OTLP_ENDPOINT is set: the run's
	// StartWorkflow span is the root of its trace.
	tel, err := telemetry.Setup(ctx, telemetry.Options{ServiceName: "agentloop-starter"})
	if err != nil {
		fmt.Fprintln(stderr, "starter: telemetry:", err)
		return 1
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tel.Shutdown(sctx)
	}()
	tel.Apply(&opts)
	// Lazy: a command's -h and a usage error need no server.
	c, err := client.NewLazyClient(opts)
	if err != nil {
		fmt.Fprintln(stderr, "starter: connect to Temporal:", err)
		return 1
	}
	defer c.Close()
	st, err := store.Open(*storeSpec, store.Options{Keys: keys, Namespace: opts.Namespace})
	if err != nil {
		fmt.Fprintln(stderr, "starter: content store:", err)
		return 1
	}
	if *updateID == "" {
		*updateID = agentclient.NewUpdateID()
	}
	env := &env{c: c, out: stdout, err: stderr, dc: opts.DataConverter, store: st, updateID: *updateID,
		intr: intr, colors: colorsFor(stdout)}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	commands := map[string]func(context.Context, []string) error{
		"run":       env.run,
		"demo":      env.demo,
		"watch":     env.watch,
		"steer":     env.steer,
		"follow-up": env.followUp,
		"abort":     env.abort,
		"state":     env.state,
		"session":   env.session,
		"approve":   env.approve,
	}
	f, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(stderr, "starter: unknown command %q\n\n%s", cmd, Usage)
		return 2
	}
	if err := f(ctx, rest); err != nil {
		code := exitCode(err)
		if code == ExitUsage {
			return code
		}
		if ctx.Err() != nil && intr.interrupted() {
			return ExitDetached // Ctrl-C: the user knows
		}
		if msg := userMessage(err); msg != "" {
			fmt.Fprintln(stderr, "starter:", msg)
		}
		if strings.Contains(err.Error(), "failed reaching server") {
			fmt.Fprintf(stderr, "starter: no Temporal server answers at %s (scripts/demo starts one; -address or TEMPORAL_ADDRESS names another)\n", opts.HostPort)
		}
		if strings.Contains(err.Error(), "binary/encrypted") {
			fmt.Fprintln(stderr, "starter: the run's payloads are encrypted: set AGENTLOOP_CODEC_KEYS as on the worker")
		}
		// Resending makes sense when the Update's fate is unknown, not
		// when the run answered it.
		if env.updateSent && code == ExitError {
			fmt.Fprintf(stderr, "starter: to send this command's Update again, applied at most once: starter -update-id %s %s ...\n", env.updateID, cmd)
		}
		return code
	}
	return ExitOK
}

type env struct {
	c     client.Client
	out   io.Writer
	err   io.Writer
	dc    converter.DataConverter
	store store.Blobs
	// updateID is the ID of the Update this command sends; updateSent
	// says one was sent.
	updateID   string
	updateSent bool
	intr       *interrupts
	colors     colors // of out
}

// update sends the command's Update with its ID, applied once however
// often the command runs with the same -update-id.
func (e *env) update(ctx context.Context, id, name string, arg, result any) error {
	e.updateSent = true
	waitCtx, stopExplaining := context.WithCancel(ctx)
	defer stopExplaining()
	go e.explainStall(waitCtx, id)
	err := agentclient.UpdateWithOptions(ctx, e.c, id, name, arg, result, agentclient.UpdateOptions{ID: e.updateID, Store: e.store})
	if err != nil {
		if ended := e.sessionEnded(ctx, id); ended != nil {
			return ended // why the workflow is gone says more than the Update's error
		}
	}
	return err
}

// send sends an Update of its own (a chat line), its large content stored
// first as every command's is.
func (e *env) send(ctx context.Context, id, name string, arg, result any) error {
	return agentclient.UpdateWithOptions(ctx, e.c, id, name, arg, result, agentclient.UpdateOptions{Store: e.store})
}

// userText is a user message, as steer and follow-up send it.
func userText(text string) agent.Message {
	return agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text(text)}}
}

// watchOptions are the options of every watch: live deltas, decoded as the
// worker encodes them, large content read from the content store.
func (e *env) watchOptions(after int64) agentclient.WatchOptions {
	return agentclient.WatchOptions{After: after, Live: true, DataConverter: e.dc, Store: e.store}
}

func (e *env) watch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	after := fs.Int64("after", 0, "print events after this sequence number")
	asJSON := fs.Bool("json", false, "print events as JSON lines")
	if err := parse(fs, args, 1, "watch ID"); err != nil {
		return err
	}
	id := fs.Arg(0)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	waits := &waitingCalls{line: answerElsewhere(id, e.isSession(ctx, id))}
	go e.explainStallOr(ctx, id, waits)
	p := e.printer(*asJSON)
	opts := e.watchOptions(*after)
	opts.Resume = *after > 0
	return agentclient.Watch(ctx, e.c, id, "", opts, func(ev agent.Event) {
		p.Print(ev)
		waits.see(ev)
	})
}

func (e *env) steer(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return errors.New("usage: steer ID TEXT")
	}
	var st agentapi.QueueStatus
	if err := e.update(ctx, args[0], agentapi.UpdateSteer, userText(strings.Join(args[1:], " ")), &st); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "steering queued (%d waiting)\n", st.Queued)
	return nil
}

func (e *env) followUp(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return errors.New("usage: follow-up ID TEXT")
	}
	var st agentapi.QueueStatus
	if err := e.update(ctx, args[0], agentapi.UpdateFollowUp, userText(strings.Join(args[1:], " ")), &st); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "follow-up queued (%d waiting)\n", st.Queued)
	return nil
}

func (e *env) abort(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return errors.New("usage: abort ID [REASON]")
	}
	var st agentapi.AbortStatus
	if err := e.update(ctx, args[0], agentapi.UpdateAbort, agentapi.AbortRequest{Reason: strings.Join(args[1:], " ")}, &st); err != nil {
		return err
	}
	if st.AlreadyAborted {
		fmt.Fprintln(e.out, "already aborted")
	} else {
		fmt.Fprintln(e.out, "aborted")
	}
	return nil
}

func (e *env) state(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: state ID")
	}
	st, err := agentclient.State(ctx, e.c, args[0])
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	fmt.Fprintln(e.out, string(b))
	return nil
}

func parse(fs *flag.FlagSet, args []string, n int, usage string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != n {
		return fmt.Errorf("usage: %s", usage)
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
