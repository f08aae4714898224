package cli

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/durable-agents/agentloop/agentclient"
)

// interrupts routes Ctrl-C (SIGINT). A command following a run installs a
// handler: the first Ctrl-C aborts the run, as in pi and Claude Code, and
// the second detaches. Without a handler Ctrl-C cancels the command, as a
// plain command line tool does.
type interrupts struct {
	mu      sync.Mutex
	handler func()
	cancel  context.CancelFunc
	got     bool // a Ctrl-C came: the command's cancellation is the user's
}

// listen handles the signals of sigs until it is closed.
func (i *interrupts) listen(sigs <-chan os.Signal) {
	for range sigs {
		i.mu.Lock()
		h := i.handler
		i.got = true
		i.mu.Unlock()
		if h != nil {
			h()
		} else {
			i.cancel()
		}
	}
}

// handle makes h the handler of Ctrl-C until restore is called.
func (i *interrupts) handle(h func()) (restore func()) {
	i.mu.Lock()
	old := i.handler
	i.handler = h
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		i.handler = old
		i.mu.Unlock()
	}
}

// interrupted says whether the user pressed Ctrl-C.
func (i *interrupts) interrupted() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.got
}

// abortOrDetach is the Ctrl-C handler while a command follows run id:
// the first press sends the abort Update (in the background: with no
// worker it waits), the second calls detach.
func (e *env) abortOrDetach(ctx context.Context, id string, detach func()) func() {
	presses := 0
	return func() {
		presses++
		if presses > 1 {
			detach()
			return
		}
		fmt.Fprintf(e.err, "\nAborting %s (Ctrl-C again to detach and leave it running)\n", id)
		go func() {
			if _, err := agentclient.Abort(ctx, e.c, id, "interrupted (Ctrl-C)"); err != nil && ctx.Err() == nil {
				fmt.Fprintln(e.err, "abort:", err)
			}
		}()
	}
}

// detachedHelp says how to come back to a run the starter left running.
func (e *env) detachedHelp(id string, session bool) {
	fmt.Fprintf(e.err, "\nDetached; %s goes on.\n", id)
	if session {
		fmt.Fprintf(e.err, "  come back:  starter session chat %s\n", id)
	}
	fmt.Fprintf(e.err, "  follow it:  starter watch %s\n  stop it:    starter abort %s\n", id, id)
}
