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

// check refuses abs when it, or the real path its symlinks lead to, is
// outside the workspace.
func (w *workspace) check(orig, abs string, read bool) (string, error) {
	if read && w.allowOutside {
		return abs, nil
	}
	real, err := realPath(abs)
	if err != nil {
		return "", err
	}
	if within(w.root, abs) && within(w.root, real) {
		return abs, nil
	}
	if read {
		for _, d := range w.extraReadDirs {
			if within(d, real) {
				return abs, nil
			}
		}
	}
	return "", fmt.Errorf("Path %s is outside the workspace %s. Use a path inside the workspace.", orig, w.root)
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
	for {
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
				target = filepath.Join(filepath.Dir(cur), target)
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
