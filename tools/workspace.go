package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/text/unicode/norm"
)

// workspace confines a call's paths to call.Workspace. It resolves a path the
// model gave the way pi does (a leading @ dropped, ~ expanded, relative to
// the workspace) and then refuses what lies outside: .. that climbs out,
// absolute paths elsewhere, and symlinks whose target is elsewhere. It is a
// guard against mistakes, not a sandbox: bash can still reach anything the
// worker can.
type workspace struct {
	root string // absolute, symlinks evaluated
	// allowOutside lets reads resolve outside the root.
	allowOutside bool
	// extraReadDirs are directories reads may use even when confined: where
	// bash keeps full outputs, which its notices point the model at.
	extraReadDirs []string
	// fence is the root of every run's saved outputs (real path), none of
	// which a call may read but its own run's, in extraReadDirs: a
	// workspace holding the worker's state directory holds it too.
	fence string
}

// openWorkspace checks the call's workspace directory.
func openWorkspace(dir string, allowOutside bool, extraReadDirs ...string) (*workspace, error) {
	if dir == "" {
		return nil, errors.New("No workspace is set for this call; file tools need one.")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("Workspace directory does not exist: %s", abs)
	}
	return &workspace{root: root, allowOutside: allowOutside, extraReadDirs: extraReadDirs}, nil
}

// expandPath is pi's expandPath: a leading @ goes (models copy @file
// mentions), Unicode spaces become spaces, ~ is the home directory.
func expandPath(p string) string {
	p = strings.TrimPrefix(p, "@")
	p = strings.Map(func(r rune) rune {
		if r == '\u00A0' || (r >= '\u2000' && r <= '\u200A') || r == '\u202F' || r == '\u205F' || r == '\u3000' {
			return ' '
		}
		return r
	}, p)
	if home, err := os.UserHomeDir(); err == nil {
		if p == "~" {
			return home
		}
		if strings.HasPrefix(p, "~/") {
			return home + p[1:]
		}
	}
	return p
}

// lexical joins p to the root without touching the disk.
func (w *workspace) lexical(p string) string {
	p = expandPath(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(w.root, p)
}

// Resolve returns the absolute path for a file the call will write or edit:
// it must lie inside the workspace.
func (w *workspace) Resolve(p string) (string, error) {
	return w.check(p, w.lexical(p), false)
}

// ResolveRead returns the absolute path for a file or directory the call
// will read, trying pi's macOS file name variants when the plain path does
// not exist.
func (w *workspace) ResolveRead(p string) (string, error) {
	abs := w.lexical(p)
	if _, err := os.Lstat(abs); err != nil {
		for _, v := range nameVariants(abs) {
			if _, err := os.Lstat(v); err == nil {
				abs = v
				break
			}
		}
	}
	return w.check(p, abs, true)
}

// Linux's PATH_MAX and NAME_MAX: longer paths cannot name a file.
const (
	maxPathBytes = 4096
	maxNameBytes = 255
)

// check refuses abs when it, or the real path its symlinks lead to, is
// outside the workspace. A path holding a NUL byte is refused outright: the
// kernel would read it up to the NUL, a different path from the one checked.
func (w *workspace) check(orig, abs string, read bool) (string, error) {
	if strings.IndexByte(orig, 0) >= 0 {
		return "", fmt.Errorf("Path %q contains a NUL byte; file names cannot hold one.", clipPath(orig))
	}
	if read && w.allowOutside {
		return abs, nil
	}
	if err := checkLength(abs); err != nil {
		if within(w.root, abs) {
			return "", err
		}
		return "", w.outside(orig)
	}
	real, err := realPath(abs)
	if err != nil {
		if !within(w.root, abs) {
			return "", w.outside(orig)
		}
		if strings.Contains(err.Error(), "too many links") {
			return "", fmt.Errorf("ELOOP: too many symbolic links encountered, resolving '%s'", clipPath(orig))
		}
		return "", err
	}
	if w.fenced(abs) || w.fenced(real) {
		return "", w.outside(orig)
	}
	if within(w.root, abs) && within(w.root, real) {
		return abs, nil
	}
	if read && w.extraDir(real) != "" {
		return abs, nil
	}
	return "", w.outside(orig)
}

// outsideError is the refusal of a path outside the workspace.
type outsideError struct{ msg string }

func (e *outsideError) Error() string { return e.msg }

func (w *workspace) outside(orig string) error {
	return &outsideError{fmt.Sprintf("Path %s is outside the workspace %s. Use a path inside the workspace.", orig, w.root)}
}

// isOutside reports whether err refuses a path outside the workspace.
func isOutside(err error) bool {
	var o *outsideError
	return errors.As(err, &o)
}

// fenced reports whether p lies among the saved outputs of another run.
func (w *workspace) fenced(p string) bool {
	return w.fence != "" && within(w.fence, p) && w.extraDir(p) == ""
}

// extraDir returns the extra read directory holding real, or "".
func (w *workspace) extraDir(real string) string {
	for _, d := range w.extraReadDirs {
		if within(d, real) {
			return d
		}
	}
	return ""
}

// checkLength refuses what no file can be named: over PATH_MAX in all, or a
// name over NAME_MAX. Refusing early keeps write from making thousands of
// directories before the kernel says no.
func checkLength(abs string) error {
	if len(abs) > maxPathBytes {
		return fmt.Errorf("ENAMETOOLONG: name too long: the path is %d bytes; the limit is %d (%s)", len(abs), maxPathBytes, clipPath(abs))
	}
	for _, name := range strings.Split(abs, string(filepath.Separator)) {
		if len(name) > maxNameBytes {
			return fmt.Errorf("ENAMETOOLONG: name too long: a file name is %d bytes; the limit is %d (%s)", len(name), maxNameBytes, clipPath(name))
		}
	}
	return nil
}

// clipPath shortens a path for a message.
func clipPath(p string) string {
	if len(p) <= 200 {
		return p
	}
	return p[:100] + "..." + p[len(p)-100:]
}

// Rel returns abs relative to the workspace when it is inside, for messages.
func (w *workspace) Rel(abs string) string {
	if r, err := filepath.Rel(w.root, abs); err == nil && within(w.root, abs) {
		return filepath.ToSlash(r)
	}
	return abs
}

// within reports whether p is dir or below it; both are clean and absolute.
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// realPath evaluates the symlinks of abs. A missing tail (a file about to be
// created) is kept as written under its longest existing ancestor, so a
// symlinked parent directory cannot smuggle a new file out.
func realPath(abs string) (string, error) {
	var missing []string
	cur := abs
	for hops := 0; ; hops++ {
		if hops > 255 {
			return "", errors.New("EvalSymlinks: too many links")
		}
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(missing) - 1; i >= 0; i-- {
				real = filepath.Join(real, missing[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		// A dangling symlink counts as outside unless its target is known
		// to be inside; resolve it by hand once.
		if target, lerr := os.Readlink(cur); lerr == nil {
			if !filepath.IsAbs(target) {
				// Relative to the directory the link really is in: cur
				// may reach it through symlinked directories.
				dir := filepath.Dir(cur)
				if d, err := filepath.EvalSymlinks(dir); err == nil {
					dir = d
				}
				target = filepath.Join(dir, target)
			}
			if target != cur {
				cur = filepath.Clean(target)
				continue
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
}

// nameVariants are pi's fallbacks for file names macOS writes differently
// from how people type them: a narrow no-break space before AM/PM in
// screenshot names, NFD-decomposed accents, and curly apostrophes.
func nameVariants(abs string) []string {
	amPm := strings.NewReplacer(" AM.", "\u202FAM.", " PM.", "\u202FPM.", " am.", "\u202Fam.", " pm.", "\u202Fpm.").Replace(abs)
	nfd := norm.NFD.String(abs)
	curly := strings.ReplaceAll(abs, "'", "\u2019")
	nfdCurly := strings.ReplaceAll(nfd, "'", "\u2019")
	var out []string
	for _, v := range []string{amPm, nfd, curly, nfdCurly} {
		if v != abs {
			out = append(out, v)
		}
	}
	return out
}

// tree is the directory a call's file operations are confined to, opened as
// an os.Root: every open resolves its path from there one component at a
// time and refuses one that leads out. check looks at the path before the
// tool uses it; tree makes the use itself safe, so a path swapped for a
// symlink in between (by a command running at the same time) cannot lead a
// read or write outside. A tree with no root (reads with AllowOutsideReads)
// opens anything.
type tree struct {
	w    *workspace
	root *os.Root
	base string
	read bool
}

// tree opens the directory that confines abs, a path check accepted: the
// workspace, or for a read the extra directory abs leads into.
func (w *workspace) tree(abs string, read bool) (*tree, error) {
	if read && w.allowOutside {
		return &tree{w: w, read: true}, nil
	}
	base := w.root
	if read {
		if real, err := realPath(abs); err == nil && !within(w.root, real) {
			if d := w.extraDir(real); d != "" {
				base = d
			}
		}
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	return &tree{w: w, root: r, base: base, read: read}, nil
}

func (t *tree) close() {
	if t.root != nil {
		t.root.Close()
	}
}

// do runs op on abs relative to the base: as written first, then along the
// real path check saw, which os.Root needs for symlinks it does not follow
// itself (absolute ones, and ones that climb out of the base and back in).
// Both go through the root. A refusal that check now agrees with is
// reported as the path being outside.
func (t *tree) do(abs string, op func(rel string) error) error {
	var err error = t.w.outside(abs)
	if rel, ok := t.rel(abs); ok {
		err = op(rel)
	}
	if err != nil {
		if real, rerr := realPath(abs); rerr == nil && real != abs {
			if rel, ok := t.rel(real); ok {
				err = op(rel)
			}
		}
	}
	if err != nil {
		// os.Root says "path escapes from parent" for a symlink out.
		if strings.Contains(err.Error(), "path escapes") {
			return t.w.outside(abs)
		}
		if _, cerr := t.w.check(abs, abs, t.read); isOutside(cerr) {
			return t.w.outside(abs)
		}
	}
	return err
}

func (t *tree) rel(abs string) (string, bool) {
	if !within(t.base, abs) {
		return "", false
	}
	rel, err := filepath.Rel(t.base, abs)
	return rel, err == nil
}

// open opens abs. O_NONBLOCK keeps the open of a named pipe from waiting
// for a writer; callers refuse what is not a regular file or directory.
func (t *tree) open(abs string, flag int, perm os.FileMode) (*os.File, error) {
	flag |= syscall.O_NONBLOCK
	if t.root == nil {
		return os.OpenFile(abs, flag, perm)
	}
	var f *os.File
	err := t.do(abs, func(rel string) (err error) {
		f, err = t.root.OpenFile(rel, flag, perm)
		return err
	})
	return f, err
}

// openRegular opens abs for reading and returns its information; anything
// but a regular file or a directory (a pipe, a device, a socket) is refused
// before a read could block or never end.
func (t *tree) openRegular(abs, display string) (*os.File, fs.FileInfo, error) {
	f, err := t.open(abs, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = checkRegular(info, display)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// checkRegular refuses a file that is neither regular nor a directory.
func checkRegular(info fs.FileInfo, display string) error {
	if info.Mode().IsRegular() || info.IsDir() {
		return nil
	}
	kind := "a special file"
	switch {
	case info.Mode()&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case info.Mode()&fs.ModeSocket != 0:
		kind = "a socket"
	case info.Mode()&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s, not a regular file; file tools only read and write regular files.", display, kind)
}

// mkdirAll makes dir and its parents inside the base.
func (t *tree) mkdirAll(dir string) error {
	if t.root == nil {
		return os.MkdirAll(dir, 0o755)
	}
	return t.do(dir, func(rel string) error {
		if rel == "." {
			return nil
		}
		err := t.root.MkdirAll(rel, 0o755)
		if errors.Is(err, fs.ErrExist) {
			// A file is in the way; os.MkdirAll says ENOTDIR, as Node does.
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return err
	})
}
