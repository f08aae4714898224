package main

import (
	"flag"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
)

// outputFlags are where bash keeps the full outputs of truncated results,
// one private directory per run, and their bounds.
type outputFlags struct {
	dir         *string
	runMaxBytes *int64
	maxBytes    *int64
	maxAge      *time.Duration
}

func registerOutputFlags(fs *flag.FlagSet) outputFlags {
	return outputFlags{
		dir: fs.String("bash-output-dir", stateDir("bash-output"),
			"where bash keeps the full output of a truncated result, in a private directory per run that only the run's own tools read; hidden from commands like the tool journal"),
		runMaxBytes: fs.Int64("bash-output-run-max-bytes", tools.DefaultMaxRunOutputBytes,
			"the most bytes one run's saved outputs take; a new output makes room by removing the run's oldest (-1: no cap)"),
		maxBytes: fs.Int64("bash-output-max-bytes", 2<<30,
			"remove the oldest saved outputs of all runs beyond this many bytes, in the tool journal's prune (0: no bound); outputs younger than 10 minutes stay"),
		maxAge: fs.Duration("bash-output-max-age", 7*24*time.Hour,
			"remove saved outputs older than this, in the tool journal's prune (0: keep)"),
	}
}

// open makes the directory now, so that the sandbox, which hides what
// exists when it starts, hides it.
func (f outputFlags) open() (*tools.SavedOutputs, error) {
	if err := os.MkdirAll(*f.dir, 0o700); err != nil {
		return nil, err
	}
	return tools.NewSavedOutputs(*f.dir, *f.runMaxBytes), nil
}

func (f outputFlags) limits() tools.OutputLimits {
	return tools.OutputLimits{MaxAge: *f.maxAge, MaxBytes: *f.maxBytes, MinAge: journal.DefaultMinAge}
}

// pruneOutputs bounds the saved outputs; pruneJournal runs it with the
// journal's own prune.
func pruneOutputs(z *zap.Logger, o *tools.SavedOutputs, l tools.OutputLimits) {
	st, err := o.Prune(l)
	if err != nil {
		z.Sugar().Warnw("prune saved bash outputs", "reason", err.Error())
	} else if st.Removed > 0 {
		z.Sugar().Infow("pruned saved bash outputs", "removed", st.Removed, "kept", st.Kept, "keptBytes", st.KeptBytes)
	}
}
