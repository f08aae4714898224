package sandbox

import (
	"os"
	"strconv"
	"sync"

	"github.com/durable-agents/agentloop/internal/sandbox/netbridge"
)

// The lifeline is a pipe whose write end only the worker holds, for the
// life of the process (close-on-exec, so no child keeps it past its
// exec). Processes that die with the worker (Spec.DieWithWorker) run
// under a guard (package netbridge) that holds the read end: end-of-file
// there is the worker's death, whenever it came, even before the guard
// started. Package variables, because an *os.File that is collected
// closes its descriptor.
var lifeline struct {
	once sync.Once
	r, w *os.File
	err  error
}

// lifelineReader is the read end to hand a guard.
func lifelineReader() (*os.File, error) {
	lifeline.once.Do(func() {
		lifeline.r, lifeline.w, lifeline.err = os.Pipe()
	})
	return lifeline.r, lifeline.err
}

// guardCommand is what runs before a command that dies with the worker:
// the guard at bin, reading the lifeline at descriptor fd, killing scope
// ("group" or "namespace") when the worker is gone. Under bwrap one guard
// runs bwrap and another the command inside it; under Landlock one runs
// the command.
func guardCommand(bin string, fd int, scope string, options ...string) []string {
	a := append([]string{bin, netbridge.Lifeline, strconv.Itoa(fd), scope}, options...)
	return append(a, "--")
}
