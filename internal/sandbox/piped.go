package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// Piped is a long-lived process started by StartPiped: a stdio MCP server.
// The worker writes to Stdin and reads Stdout; closing Stdin is the
// polite way to ask it to end, Kill the sure one.
type Piped struct {
	*Process
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
}

// StartPiped starts spec.Args in the sandbox, as Start does a command
// (the same namespaces, mounts, hidden paths, environment, network and
// limits), with pipes to its standard input and output; it dies with the
// worker. spec.Output and spec.Stdin are set here; stderr goes to
// spec.Stderr, else nowhere.
func (s *Sandbox) StartPiped(spec Spec) (*Piped, error) {
	if len(spec.Args) == 0 {
		return nil, errors.New("sandbox: StartPiped needs a program (Spec.Args)")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	if spec.Stderr == nil {
		spec.Stderr = io.Discard
	}
	spec.Stdin, spec.Output, spec.DieWithWorker = inR, outW, true
	p, err := s.Start(spec)
	// The child holds its ends now (or never will): the worker keeps only
	// its own, so that the server's exit ends the stdout stream.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return &Piped{Process: p, Stdin: inW, Stdout: outR}, nil
}

// argv is what the sandbox executes: Args, else Shell -c Command.
func (spec Spec) argv() []string {
	if len(spec.Args) > 0 {
		return spec.Args
	}
	return []string{spec.Shell, "-c", spec.Command}
}

// connect gives cmd the spec's standard streams. A nil *os.File must not
// become a non-nil io.Reader, which exec would try to read.
func (spec Spec) connect(cmd *exec.Cmd) {
	if spec.Stdin != nil {
		cmd.Stdin = spec.Stdin
	}
	cmd.Stdout, cmd.Stderr = spec.Output, spec.Output
	if spec.Stderr != nil {
		cmd.Stderr = spec.Stderr
	}
}

// checkReadPaths refuses read paths that are relative, missing, or
// hidden from commands: an operator's config must not undo Hide.
func (s *Sandbox) checkReadPaths(paths []string) error {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox: read-only path %q is not absolute", p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("sandbox: read-only path: %w", err)
		}
		if s.isHidden(real) || s.isHidden(filepath.Clean(p)) {
			return fmt.Errorf("sandbox: read-only path %s is hidden from tool processes (the worker's home, state or credentials)", p)
		}
	}
	return nil
}
