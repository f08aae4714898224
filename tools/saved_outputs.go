package tools

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// DefaultMaxRunOutputBytes caps the saved outputs of one run: twice the
// cap of one file, so a run's newest full output never pushes out all the
// others.
const DefaultMaxRunOutputBytes = 2 * DefaultMaxOutputFileBytes

// SavedOutputs holds the full outputs bash saves when a result is
// truncated (pi's "Full output: <path>"), one private directory per run:
// the root and each run's directory are 0700, the files 0600. A run's
// read, grep, find and ls may read its own directory, and bash sees it
// read-only at the same path; no other run's tools see it (Call.Scope
// says which run a call belongs to). A run's outputs together take at
// most MaxRunBytes: when a new output needs room, the run's oldest
// finished outputs go first, so the newest are kept. The worker removes
// them by age and total size with Prune, in the pass that prunes the tool
// journal.
type SavedOutputs struct {
	root        string
	maxRunBytes int64

	mu   sync.Mutex
	runs map[string]*runOutputs // by run directory, while a file of it is written
}

// runOutputs is one run's directory as this worker counts it.
type runOutputs struct {
	bytes int64           // on disk when first counted, plus what was granted since
	open  map[string]bool // files being written
}

// NewSavedOutputs keeps outputs under root; maxRunBytes 0 means
// DefaultMaxRunOutputBytes, negative no cap.
func NewSavedOutputs(root string, maxRunBytes int64) *SavedOutputs {
	if maxRunBytes == 0 {
		maxRunBytes = DefaultMaxRunOutputBytes
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &SavedOutputs{root: root, maxRunBytes: maxRunBytes, runs: map[string]*runOutputs{}}
}

// Root is the directory that holds every run's directory.
func (s *SavedOutputs) Root() string { return s.root }

// RunDir is the directory of the run scope names (it may not exist yet).
// The name is a hash: a scope is a workflow id, which may hold anything.
func (s *SavedOutputs) RunDir(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(s.root, hex.EncodeToString(sum[:16]))
}

// ExistingRunDir is RunDir with symlinks resolved when it exists, else "".
func (s *SavedOutputs) ExistingRunDir(scope string) string {
	real, err := filepath.EvalSymlinks(s.RunDir(scope))
	if err != nil {
		return ""
	}
	return real
}

// create makes a new output file in the run's directory.
func (s *SavedOutputs) create(scope string) (f *os.File, path string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.makeRoot(); err != nil {
		return nil, "", err
	}
	dir := s.RunDir(scope)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, "", err
	}
	var id [8]byte
	rand.Read(id[:])
	path = filepath.Join(dir, "agentloop-bash-"+hex.EncodeToString(id[:])+".log")
	f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, "", err
	}
	r := s.runs[dir]
	if r == nil {
		r = &runOutputs{open: map[string]bool{}}
		for _, o := range listOutputs(dir) {
			r.bytes += o.size
		}
		s.runs[dir] = r
	}
	r.open[path] = true
	return f, path, nil
}

// makeRoot creates the root, or checks that the one there is a directory
// of this user's (not a symlink another user planted in a shared temporary
// directory), and makes it private.
func (s *SavedOutputs) makeRoot() error {
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return err
	}
	info, err := os.Lstat(s.root)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not a directory of this worker's user", s.root)
	}
	if info.Mode().Perm() != 0o700 {
		return os.Chmod(s.root, 0o700)
	}
	return nil
}

// grant returns how many of n more bytes the file at path may take
// within its run's cap, removing the run's oldest finished outputs first
// when they are in the way.
func (s *SavedOutputs) grant(path string, n int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[filepath.Dir(path)]
	if r == nil || s.maxRunBytes < 0 {
		return n
	}
	if r.bytes+n > s.maxRunBytes {
		for _, o := range listOutputs(filepath.Dir(path)) {
			if r.bytes+n <= s.maxRunBytes {
				break
			}
			if !r.open[o.path] && os.Remove(o.path) == nil {
				r.bytes -= o.size
			}
		}
	}
	n = max(0, min(n, s.maxRunBytes-r.bytes))
	r.bytes += n
	return n
}

// release says the file at path is written.
func (s *SavedOutputs) release(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Dir(path)
	if r := s.runs[dir]; r != nil {
		delete(r.open, path)
		if len(r.open) == 0 {
			delete(s.runs, dir)
		}
	}
}

// savedFile is one output on disk.
type savedFile struct {
	path string
	size int64
	mod  time.Time
}

// listOutputs returns the files of a run's directory, oldest first.
func listOutputs(dir string) []savedFile {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []savedFile
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		out = append(out, savedFile{filepath.Join(dir, e.Name()), info.Size(), info.ModTime()})
	}
	slices.SortFunc(out, func(a, b savedFile) int { return a.mod.Compare(b.mod) })
	return out
}

// OutputLimits bound the saved outputs of every run together.
type OutputLimits struct {
	// MaxAge removes outputs last written longer ago; 0 keeps them.
	MaxAge time.Duration
	// MaxBytes removes the oldest outputs, whatever their run, until all
	// take at most this many bytes; 0 means no bound.
	MaxBytes int64
	// MinAge keeps outputs younger than this whatever MaxBytes says: a
	// model reads an output soon after its notice.
	MinAge time.Duration
}

// OutputPruneStats says what a prune did.
type OutputPruneStats struct {
	Removed, Kept int
	KeptBytes     int64
}

// Prune removes outputs older than MaxAge, then the oldest until at most
// MaxBytes remain (never one younger than MinAge, never one being
// written), then the run directories left empty.
func (s *SavedOutputs) Prune(l OutputLimits) (OutputPruneStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st OutputPruneStats
	runs, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	var files []savedFile
	var total int64
	for _, e := range runs {
		if e.IsDir() {
			for _, f := range listOutputs(filepath.Join(s.root, e.Name())) {
				files = append(files, f)
				total += f.size
			}
		}
	}
	slices.SortFunc(files, func(a, b savedFile) int { return a.mod.Compare(b.mod) })
	now := time.Now()
	for _, f := range files {
		r := s.runs[filepath.Dir(f.path)]
		tooOld := l.MaxAge > 0 && now.Sub(f.mod) > l.MaxAge
		tooBig := l.MaxBytes > 0 && total > l.MaxBytes && now.Sub(f.mod) >= l.MinAge
		if (tooOld || tooBig) && (r == nil || !r.open[f.path]) {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return st, err
			}
			total -= f.size
			if r != nil {
				r.bytes -= f.size
			}
			st.Removed++
			continue
		}
		st.Kept++
		st.KeptBytes += f.size
	}
	for _, e := range runs {
		dir := filepath.Join(s.root, e.Name())
		if e.IsDir() && s.runs[dir] == nil {
			os.Remove(dir) // only when empty
		}
	}
	return st, nil
}
