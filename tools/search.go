package tools

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// The search tools (grep, find) walk in Go rather than calling ripgrep or fd:
// the same results on every worker, nothing to install, and nothing pi
// would download at run time.

// ignoreRule is one line of a .gitignore.
type ignoreRule struct {
	base     string // absolute directory of the .gitignore
	pattern  string // doublestar pattern, relative to base
	anchored bool   // matched against the path below base, else the name
	negate   bool
	dirOnly  bool
}

// parseGitignore turns .gitignore lines into rules (gitignore(5)). go-git's
// plumbing/format/gitignore would replace this and the matching below, but
// it reads "[!a]" and "!*/" otherwise than git (TestGitignore).
func parseGitignore(base, text string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		// A trailing "/**" matches what is inside, not the directory itself
		// (git and fd keep "foo" for "foo/**", so "!foo/keep" can bring
		// back foo/keep); doublestar's "**" would also match zero names.
		if strings.HasSuffix(line, "/**") {
			line += "/*"
		}
		// gitignore has no {a,b} alternation; doublestar would read one.
		line = strings.NewReplacer("{", "\\{", "}", "\\}").Replace(line)
		if line == "" || !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// ignorer holds the rules of every .gitignore seen, by directory.
type ignorer struct {
	byDir map[string][]ignoreRule
	top   []ignoreRule // from the search root's ancestors
	files *tree        // reads the .gitignore files
}

// newIgnorer reads .gitignore files from root's ancestors down to root,
// starting at the repository root (a directory holding .git) or at stop,
// whichever is nearer; rules above a repository do not apply in it.
func newIgnorer(root, stop string, files *tree) *ignorer {
	ig := &ignorer{byDir: map[string][]ignoreRule{}, files: files}
	var dirs []string
	for dir := filepath.Dir(root); within(stop, dir) && dir != root; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil || dir == stop {
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		dirs = nil // root is the repository root
	}
	for _, dir := range slices.Backward(dirs) {
		ig.top = append(ig.top, ig.load(dir)...)
	}
	return ig
}

func (ig *ignorer) load(dir string) []ignoreRule {
	path := filepath.Join(dir, ".gitignore")
	f, info, err := ig.files.openRegular(path, path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if info.IsDir() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, GrepMaxFileBytes))
	if err != nil {
		return nil
	}
	return parseGitignore(dir, string(b))
}

// enter reads a directory's own .gitignore as the walk reaches it.
func (ig *ignorer) enter(dir string) {
	ig.byDir[dir] = ig.load(dir)
}

// ignored applies the rules of abs's ancestors, outermost first; the last
// matching rule decides.
func (ig *ignorer) ignored(abs string, isDir bool, root string) bool {
	var dirs []string
	for d := filepath.Dir(abs); within(root, d); d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == root {
			break
		}
	}
	rules := ig.top
	for _, dir := range slices.Backward(dirs) {
		rules = append(slices.Clip(rules), ig.byDir[dir]...)
	}
	ignored := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		name := filepath.Base(abs)
		if r.anchored {
			rel, err := filepath.Rel(r.base, abs)
			if err != nil {
				continue
			}
			name = filepath.ToSlash(rel)
		}
		if doublestar.MatchUnvalidated(r.pattern, name) {
			ignored = !r.negate
		}
	}
	return ignored
}

// walkEntry is one path a search visits.
type walkEntry struct {
	abs, rel string // rel is slash-separated, relative to the search root
	isDir    bool
	symlink  bool
}

// walkSearch visits every path below root that .gitignore does not exclude,
// in lexical order, hidden files included and .git excluded (rg and fd as
// pi calls them: --hidden, gitignore honoured). Symlinks are reported but
// not followed. Directories and .gitignore files are opened through files,
// so the walk cannot be led out of the workspace by a directory swapped for
// a symlink while it runs.
func walkSearch(ctx context.Context, files *tree, root, stop string, visit func(walkEntry) error) error {
	// A search root given as a symlink is followed, as rg and fd do.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	ig := newIgnorer(root, stop, files)
	return files.walk(root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return errAborted
		}
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable entries are skipped, as rg and fd do
		}
		if p == root {
			ig.enter(p)
			return nil
		}
		isDir := d.IsDir()
		if (isDir && d.Name() == ".git") || files.w.fenced(p) || ig.ignored(p, isDir, root) {
			if isDir {
				return filepath.SkipDir
			}
			return nil
		}
		if isDir {
			ig.enter(p)
		}
		rel, _ := filepath.Rel(root, p)
		return visit(walkEntry{abs: p, rel: filepath.ToSlash(rel), isDir: isDir, symlink: d.Type()&fs.ModeSymlink != 0})
	})
}

// walk is filepath.WalkDir over the tree: every directory is opened through
// the root (O_DIRECTORY, so a pipe swapped in cannot block), entries come
// in lexical order, symlinks are reported and not entered.
func (t *tree) walk(root string, fn fs.WalkDirFunc) error {
	if t.root == nil {
		return filepath.WalkDir(root, fn)
	}
	f, err := t.open(root, os.O_RDONLY, 0)
	if err != nil {
		return fn(root, nil, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fn(root, nil, err)
	}
	err = fn(root, fs.FileInfoToDirEntry(info), nil)
	if err != nil || !info.IsDir() {
		f.Close()
		if err == filepath.SkipDir || err == filepath.SkipAll {
			return nil
		}
		return err
	}
	rel, _ := t.rel(root)
	if err := t.walkDir(f, root, rel, fn); err != filepath.SkipAll {
		return err
	}
	return nil
}

// walkDir visits the entries of the open directory f, then closes it.
func (t *tree) walkDir(f *os.File, abs, rel string, fn fs.WalkDirFunc) error {
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		if err := fn(abs, nil, err); err != nil && err != filepath.SkipDir {
			return err
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		childAbs, childRel := filepath.Join(abs, e.Name()), filepath.Join(rel, e.Name())
		if err := fn(childAbs, e, nil); err != nil {
			if err == filepath.SkipDir {
				if e.IsDir() {
					continue
				}
				return nil // the rest of this directory
			}
			return err
		}
		if !e.IsDir() {
			continue
		}
		child, err := t.root.OpenFile(childRel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
		if err != nil {
			if err := fn(childAbs, e, err); err != nil && err != filepath.SkipDir {
				return err
			}
			continue
		}
		if err := t.walkDir(child, childAbs, childRel, fn); err != nil {
			return err
		}
	}
	return nil
}

// globMatcher matches search paths against a glob the way fd and rg do: a
// pattern without a slash matches the file name at any depth, one with a
// slash matches the path below the search root.
type globMatcher struct {
	pattern    string
	hasSlash   bool
	ignoreCase bool
}

func newGlobMatcher(pattern string, smartCase bool) (*globMatcher, bool) {
	g := &globMatcher{pattern: pattern, hasSlash: strings.Contains(pattern, "/")}
	if smartCase && strings.ToLower(pattern) == pattern {
		g.ignoreCase = true
	}
	if g.hasSlash {
		g.pattern = strings.TrimPrefix(g.pattern, "/")
		if !strings.HasPrefix(g.pattern, "**/") && g.pattern != "**" {
			g.pattern = "**/" + g.pattern
		}
	}
	return g, doublestar.ValidatePattern(g.pattern)
}

func (g *globMatcher) match(rel string) bool {
	name := rel
	if !g.hasSlash {
		name = path.Base(rel)
	}
	if g.ignoreCase {
		name = strings.ToLower(name)
	}
	return doublestar.MatchUnvalidated(g.pattern, name)
}
