package tools

// Tool safety under attack, on real files and real processes: every file tool
// against path escapes (.., absolute, ~, @, symlinks of every shape, symlink
// races, huge, NUL-holding and non-UTF-8 paths), and bash against fork bombs,
// commands that never end or ignore SIGTERM, double forks and output floods.
// Nothing outside the workspace may be read or changed (content and mtime are
// checked), and no process may outlive a call.

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

const (
	atkSecret   = "TOP SECRET oldText newText\n" // content of every file outside
	atkInside   = "inside oldText\n"             // content of the in-workspace files
	atkOutsider = "outside-only.txt"             // a name that exists only outside
)

var atkOldTime = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// atkFixture is a workspace next to files and directories that must stay
// untouched, with symlinks of every shape leading out of it.
type atkFixture struct {
	base, ws, outside string
	before            map[string]atkEntry
}

type atkEntry struct {
	mode    fs.FileMode
	mtime   time.Time
	content string
}

func newAtkFixture(t *testing.T) *atkFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	f := &atkFixture{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	home := filepath.Join(base, "home")
	t.Setenv("HOME", home) // ~ must lead somewhere the witness covers
	for _, d := range []string{filepath.Join(f.ws, "inside", "sub"), filepath.Join(f.ws, "a", "b"), filepath.Join(f.outside, "sub"), home} {
		must(t, os.MkdirAll(d, 0o755))
	}
	for _, p := range []string{"secret.txt", "sub/deep.txt", atkOutsider, "victim.txt"} {
		must(t, os.WriteFile(filepath.Join(f.outside, p), []byte(atkSecret), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(home, "home.txt"), []byte(atkSecret), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "inside", "ok.txt"), []byte(atkInside), 0o644))
	links := map[string]string{
		"link-abs-file":     filepath.Join(f.outside, "secret.txt"),
		"link-rel-file":     "../outside/secret.txt",
		"link-abs-dir":      f.outside,
		"link-rel-dir":      "../outside",
		"chain1":            "chain2",
		"chain2":            "inside/chain3",
		"inside/chain3":     "../../outside/secret.txt",
		"chaindir":          "link-rel-dir",
		"inside/up":         "..",
		"parent-link":       "..",
		"root-link":         "/",
		"dangling":          "../outside/new.txt",
		"dangling-abs":      filepath.Join(f.outside, "new-abs.txt"),
		"dchain":            "dangling",
		"dangling-dir":      "../outside/newdir",
		"a/b/up2":           "../..",
		"dl":                "../outside/new-dl.txt",
		"loop1":             "loop2",
		"loop2":             "loop1",
		"good-abs-link":     filepath.Join(f.ws, "inside", "ok.txt"),
		"inside/good-rel":   "ok.txt",
		"good-dir-link":     "inside",
		"inside/good-chain": "../good-abs-link",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(f.ws, name)))
	}
	f.age(t)
	f.before = f.snapshot(t)
	return f
}

// age sets every mtime outside the workspace to the past, so that a write
// shows even when it keeps the content.
func (f *atkFixture) age(t *testing.T) {
	t.Helper()
	var dirs []string
	must(t, filepath.WalkDir(f.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == f.ws {
			return filepath.SkipDir
		}
		if d.IsDir() {
			dirs = append(dirs, p) // after their entries
			return nil
		}
		return os.Chtimes(p, atkOldTime, atkOldTime)
	}))
	for i := len(dirs) - 1; i >= 0; i-- {
		must(t, os.Chtimes(dirs[i], atkOldTime, atkOldTime))
	}
}

// snapshot records everything below base except the workspace: names,
// modes, mtimes, contents. A new entry changes its directory's mtime too.
func (f *atkFixture) snapshot(t *testing.T) map[string]atkEntry {
	t.Helper()
	out := map[string]atkEntry{}
	must(t, filepath.WalkDir(f.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == f.ws {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := atkEntry{mode: info.Mode(), mtime: info.ModTime()}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.content = string(b)
		}
		out[p] = e
		return nil
	}))
	return out
}

// untouched fails when anything outside the workspace changed.
func (f *atkFixture) untouched(t *testing.T) {
	t.Helper()
	now := f.snapshot(t)
	for p, e := range now {
		was, ok := f.before[p]
		switch {
		case !ok:
			t.Errorf("created outside the workspace: %s", p)
		case was != e:
			t.Errorf("changed outside the workspace: %s: %+v, was %+v", p, e, was)
		}
	}
	for p := range f.before {
		if _, ok := now[p]; !ok {
			t.Errorf("removed outside the workspace: %s", p)
		}
	}
	if t.Failed() {
		f.before = now // report each change once
	}
}

// atkTool is one file tool with how to call it on a path.
type atkTool struct {
	name string
	tool Tool
	args func(p string) map[string]any
}

func atkFileTools() []atkTool {
	reads := ReadOptions{}
	return []atkTool{
		{"read", NewReadTool(reads), func(p string) map[string]any { return map[string]any{"path": p} }},
		{"write", NewWriteTool(), func(p string) map[string]any { return map[string]any{"path": p, "content": "written by the tool\n"} }},
		{"edit", NewEditTool(), func(p string) map[string]any {
			return map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "oldText", "newText": "newText"}}}
		}},
		{"ls", NewLsTool(reads), func(p string) map[string]any { return map[string]any{"path": p} }},
		{"grep", NewGrepTool(reads), func(p string) map[string]any { return map[string]any{"pattern": "SECRET|oldText", "path": p} }},
		{"find", NewFindTool(reads), func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} }},
	}
}

// atkLeaked reports whether a result or error shows something from outside;
// the path asked for, which errors repeat, does not count.
func atkLeaked(s, asked string) bool {
	s = strings.ReplaceAll(s, asked, "")
	return strings.Contains(s, "TOP SECRET") || strings.Contains(s, atkOutsider) || strings.Contains(s, "deep.txt")
}

func atkCall(tool Tool, ws string, args map[string]any) (string, error) {
	if p, ok := tool.(ArgumentPreparer); ok {
		args, _ = p.PrepareArguments(args)
	}
	r, err := tool.Execute(context.Background(), Call{ID: "attack", Name: tool.Definition().Name, Args: args, Workspace: ws})
	if err != nil {
		return "", err
	}
	return agent.TextOf(r.Content), nil
}

// Every way of naming a place outside the workspace is refused by every file
// tool with the same clear message, and nothing outside is read or touched.
func TestAttackPathEscapesAreRefused(t *testing.T) {
	f := newAtkFixture(t)
	secret := filepath.Join(f.outside, "secret.txt")
	escapes := map[string]string{
		"dot-dot":                      "../outside/secret.txt",
		"dot-dot chain to the root":    strings.Repeat("../", 64) + strings.TrimPrefix(secret, "/"),
		"a/../../x":                    "inside/../../outside/secret.txt",
		"deeper a/b/../../../x":        "inside/sub/../../../outside/secret.txt",
		"dot segments":                 "./inside/./../.././outside/secret.txt",
		"dot-dot to the parent":        "inside/../..",
		"absolute file":                secret,
		"absolute dir":                 f.outside,
		"absolute with double slash":   "/" + secret,
		"absolute through workspace":   f.ws + "/../outside/secret.txt",
		"filesystem root":              "/",
		"tilde":                        "~",
		"tilde file":                   "~/home.txt",
		"tilde new file":               "~/new.txt",
		"at dot-dot":                   "@../outside/secret.txt",
		"at absolute":                  "@" + secret,
		"at tilde":                     "@~/home.txt",
		"symlink to file, absolute":    "link-abs-file",
		"symlink to file, relative":    "link-rel-file",
		"symlink to dir, absolute":     "link-abs-dir",
		"symlink to dir, relative":     "link-rel-dir",
		"through dir symlink":          "link-rel-dir/secret.txt",
		"through dir symlink, deeper":  "link-abs-dir/sub/deep.txt",
		"chain of symlinks":            "chain1",
		"chain to a dir symlink":       "chaindir/secret.txt",
		"inside symlink then out":      "inside/up/link-rel-file",
		"symlink to parent":            "parent-link/outside/secret.txt",
		"symlink to /":                 "root-link" + secret,
		"new file, symlinked parent":   "link-rel-dir/new.txt",
		"new dirs, symlinked parent":   "link-abs-dir/newdir/new.txt",
		"dangling, relative":           "dangling",
		"dangling, absolute":           "dangling-abs",
		"dangling chain":               "dchain",
		"dangling dir":                 "dangling-dir/new.txt",
		"dangling via symlinked dir":   "a/b/up2/dl",
		"over PATH_MAX, lexically out": strings.Repeat("x/", 2100) + strings.Repeat("../", 2101) + "outside/secret.txt",
		"255+ byte name outside":       "../outside/" + strings.Repeat("n", 300),
		"non-UTF-8 dir then dot-dot":   "\xff\xfe/../../outside/secret.txt",
		"non-UTF-8 name outside":       "../outside/\xff\xfe.txt",
		"control chars then dot-dot":   "\x1b[2J\r/../../outside/secret.txt",
		"control char in name outside": "../outside/secret.txt\n",
	}
	for _, tl := range atkFileTools() {
		for name, p := range escapes {
			t.Run(tl.name+"/"+name, func(t *testing.T) {
				out, err := atkCall(tl.tool, f.ws, tl.args(p))
				if err == nil {
					t.Errorf("not refused; result %q", clip(out))
				} else {
					wantContains(t, err.Error(), "is outside the workspace "+f.ws+". Use a path inside the workspace.")
					if atkLeaked(err.Error(), p) {
						t.Errorf("error shows content from outside: %q", clip(err.Error()))
					}
				}
				f.untouched(t)
			})
		}
	}
	// Home, where ~ led, holds only what the fixture put there.
	if _, err := os.Stat(filepath.Join(f.base, "home", "new.txt")); err == nil {
		t.Errorf("a file was created in the home directory")
	}
}

// Paths that cannot name a file at all are refused with a message that says
// why, by every file tool, and nothing is created anywhere.
func TestAttackUnusablePathsAreRefusedClearly(t *testing.T) {
	f := newAtkFixture(t)
	cases := []struct {
		name, path string
		want       []string // any of these
	}{
		{"NUL then dot-dot", "inside/ok.txt\x00../../outside/secret.txt", []string{"NUL"}},
		{"NUL in outside path", "../outside/secret.txt\x00.png", []string{"NUL", "is outside the workspace"}},
		{"NUL alone", "\x00", []string{"NUL"}},
		{"255+ byte name", strings.Repeat("n", 300), []string{"name too long", "file name too long"}},
		{"path over PATH_MAX", strings.Repeat("d/", 2100) + "f.txt", []string{"name too long", "file name too long"}},
		{"symlink loop", "loop1", []string{"too many symbolic links", "too many links"}},
	}
	for _, tl := range atkFileTools() {
		for _, c := range cases {
			t.Run(tl.name+"/"+c.name, func(t *testing.T) {
				out, err := atkCall(tl.tool, f.ws, tl.args(c.path))
				if err == nil {
					f.untouched(t)
					t.Fatalf("not refused; result %q", clip(out))
				}
				msg := err.Error()
				ok := false
				for _, w := range c.want {
					ok = ok || strings.Contains(msg, w)
				}
				if !ok {
					t.Errorf("error %q does not say why (want one of %q)", clip(msg), c.want)
				}
				if strings.ContainsRune(msg, 0) {
					t.Errorf("error holds a raw NUL byte: %q", clip(msg))
				}
				if len(msg) > 16<<10 {
					t.Errorf("error is %d bytes", len(msg))
				}
				f.untouched(t)
			})
		}
	}
	// The writes created nothing in the workspace either.
	for _, name := range []string{strings.Repeat("n", 300), "d", "inside/ok.txt\x00"} {
		if _, err := os.Lstat(filepath.Join(f.ws, name)); err == nil {
			t.Errorf("created %q in the workspace", clip(name))
		}
	}
}

// Symlinks that stay inside the workspace, relative or absolute, chained or
// through a directory, still work; walks list symlinks without entering them.
func TestAttackInsideSymlinksWorkAndWalksStayInside(t *testing.T) {
	f := newAtkFixture(t)
	read := NewReadTool(ReadOptions{})
	for _, p := range []string{"good-abs-link", "inside/good-rel", "good-dir-link/ok.txt", "inside/good-chain", "inside/up/inside/ok.txt"} {
		wantContains(t, text(t, read, f.ws, map[string]any{"path": p}), "inside oldText")
	}
	text(t, NewEditTool(), f.ws, map[string]any{"path": "good-abs-link", "edits": edits("oldText", "newText")})
	text(t, NewWriteTool(), f.ws, map[string]any{"path": "good-dir-link/new.txt", "content": "x"})
	if b, _ := os.ReadFile(filepath.Join(f.ws, "inside", "ok.txt")); string(b) != "inside newText\n" {
		t.Errorf("edit through an absolute inside symlink: %q", b)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "inside", "new.txt")); err != nil {
		t.Errorf("write through an inside dir symlink: %v", err)
	}
	for _, c := range []struct {
		tool Tool
		args map[string]any
	}{
		{NewGrepTool(ReadOptions{}), map[string]any{"pattern": "SECRET"}},
		{NewFindTool(ReadOptions{}), map[string]any{"pattern": "*"}},
		{NewFindTool(ReadOptions{}), map[string]any{"pattern": "**/*.txt"}},
		{NewLsTool(ReadOptions{}), map[string]any{}},
	} {
		got := text(t, c.tool, f.ws, c.args)
		if atkLeaked(got, "") || strings.Contains(got, "secret.txt") {
			t.Errorf("%s %v walked outside:\n%s", c.tool.Definition().Name, c.args, clip(got))
		}
	}
	f.untouched(t)
}

// exchange atomically swaps two names (renameat2 RENAME_EXCHANGE), so the
// path a tool uses is always either the inside thing or the symlink out.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// flipper swaps path with alt until stopped; it counts the swaps.
func flipper(t *testing.T, path, alt string) (stop func() int) {
	t.Helper()
	if err := exchange(path, alt); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) unsupported here: %v", err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			if exchange(path, alt) == nil {
				n.Add(1)
			}
		}
	}()
	var once sync.Once
	stop = func() int {
		once.Do(func() { close(done); <-finished })
		return int(n.Load())
	}
	t.Cleanup(func() { stop() })
	return stop
}

// A path flipped between an in-workspace file (or directory) and a symlink
// out of it while the tools run, thousands of times: no tool ever reads,
// lists or writes what is outside.
func TestAttackSymlinkRaces(t *testing.T) {
	iterations := 400
	if testing.Short() {
		iterations = 100
	}
	type race struct {
		name   string
		target func(f *atkFixture) string // the symlink's target
		parent bool                       // flip the directory, not the file
	}
	races := []race{
		{"file, relative link", func(*atkFixture) string { return "../outside/victim.txt" }, false},
		{"file, absolute link", func(f *atkFixture) string { return filepath.Join(f.outside, "victim.txt") }, false},
		{"parent dir, relative link", func(*atkFixture) string { return "../outside" }, true},
		{"parent dir, absolute link", func(f *atkFixture) string { return f.outside }, true},
	}
	for _, tl := range atkFileTools() {
		for _, r := range races {
			t.Run(tl.name+"/"+r.name, func(t *testing.T) {
				f := newAtkFixture(t)
				path, alt, arg := filepath.Join(f.ws, "victim.txt"), filepath.Join(f.ws, ".alt"), "victim.txt"
				if r.parent {
					path, arg = filepath.Join(f.ws, "vdir"), "vdir/victim.txt"
					must(t, os.MkdirAll(path, 0o755))
					must(t, os.WriteFile(filepath.Join(path, "victim.txt"), []byte(atkInside), 0o644))
					must(t, os.WriteFile(filepath.Join(path, "inside-only.txt"), []byte(atkInside), 0o644))
				} else {
					must(t, os.WriteFile(path, []byte(atkInside), 0o644))
				}
				if tl.name == "ls" || tl.name == "find" || (tl.name == "grep" && r.parent) {
					arg = filepath.Dir(arg) // the directory tools get the flipped directory
				}
				must(t, os.Symlink(r.target(f), alt))
				stop := flipper(t, path, alt)
				var ok, refused int
				forward := true // edit swaps oldText and newText back and forth
				for i := 0; i < iterations; i++ {
					args := tl.args(arg)
					if tl.name == "edit" && !forward {
						args["edits"] = []any{map[string]any{"oldText": "newText", "newText": "oldText"}}
					}
					out, err := atkCall(tl.tool, f.ws, args)
					if err != nil {
						out = err.Error()
						refused++
					} else {
						ok++
						forward = !forward
					}
					if atkLeaked(out, arg) {
						stop()
						t.Fatalf("iteration %d: %s leaked content from outside:\n%s", i, tl.name, clip(out))
					}
				}
				swaps := stop()
				f.untouched(t)
				t.Logf("%d calls (%d ok, %d refused or failed) during %d swaps", iterations, ok, refused, swaps)
			})
		}
	}
}

// Named pipes and devices in the workspace are refused at once, never opened
// for a read that would block until the call's timeout.
func TestAttackSpecialFilesDoNotHang(t *testing.T) {
	ws := t.TempDir()
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "ok.txt"), []byte("fine oldText\n"), 0o644))
	for _, tl := range atkFileTools() {
		t.Run(tl.name, func(t *testing.T) {
			p := "pipe"
			if tl.name == "ls" || tl.name == "find" {
				p = "."
			}
			done := make(chan struct{})
			var out string
			var err error
			go func() {
				defer close(done)
				out, err = atkCall(tl.tool, ws, tl.args(p))
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				// Unblock the tool so the test binary can end.
				if w, e := os.OpenFile(filepath.Join(ws, "pipe"), os.O_WRONLY|syscall.O_NONBLOCK, 0); e == nil {
					w.Close()
				}
				if r, e := os.OpenFile(filepath.Join(ws, "pipe"), os.O_RDONLY|syscall.O_NONBLOCK, 0); e == nil {
					r.Close()
				}
				t.Fatalf("%s on a named pipe did not return", tl.name)
			}
			t.Logf("%s: out=%q err=%v", tl.name, clip(out), err)
			if st, e := os.Lstat(filepath.Join(ws, "pipe")); e != nil || st.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("the pipe was replaced: %v %v", st, e)
			}
		})
	}
}

// --- bash ---

// bashRun is a bash call's result, error, duration and process group.
type bashRun struct {
	out      string
	err      error
	took     time.Duration
	pgid     int
	maxGroup int // most live processes seen in the group during the call
	size     int // JSON bytes of the result or error text
	updates  int // largest partial result, JSON bytes
}

// runBashTracked runs a bash command and watches its process group, whose
// id (in the worker's pid namespace) the tool reports as it starts it.
func runBashTracked(t *testing.T, tool *BashTool, ws, command string, timeout float64) bashRun {
	t.Helper()
	args := map[string]any{"command": command}
	if timeout > 0 {
		args["timeout"] = timeout
	}
	var res bashRun
	var group atomic.Int64
	tool.started = func(p *sandbox.Process) { group.Store(int64(p.Group)) }
	defer func() { tool.started = nil }()
	var updMu sync.Mutex
	call := Call{ID: "attack", Name: BashToolName, Args: args, Workspace: ws, Update: func(r agent.ToolResult) {
		b, _ := json.Marshal(r)
		updMu.Lock()
		res.updates = max(res.updates, len(b))
		updMu.Unlock()
	}}
	// Watch the group: how big it gets, and a safety net should a bomb
	// ever grow past what the test meant to allow.
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pgid := int(group.Load())
			if pgid == 0 {
				continue
			}
			n := len(groupMembers(pgid))
			res.maxGroup = max(res.maxGroup, n)
			if n > 3000 {
				syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	}()
	start := time.Now()
	r, err := tool.Execute(context.Background(), call)
	res.took = time.Since(start)
	close(stopWatch)
	<-watched
	res.err = err
	if err != nil {
		b, _ := json.Marshal(err.Error())
		res.size = len(b)
		res.out = err.Error()
	} else {
		res.size = resultSize(r)
		res.out = agent.TextOf(r.Content)
	}
	res.pgid = int(group.Load())
	if res.pgid == 0 {
		t.Fatal("the tool never reported the command's process group")
	}
	return res
}

// groupMembers lists the live processes of a process group from /proc;
// zombies are dead and do not count.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procStat(e.Name())
		if ok && group == pgid && state != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// requireGroupGone fails when a process of the group is still alive once the
// call has returned; it allows the kernel a moment to finish a SIGKILL.
// Under bwrap the guarantee is stronger than the group: the call ends
// bwrap, and with it the command's pid namespace, whose every process the
// kernel kills, including those that left the group (the sandbox package's
// tests check that).
func requireGroupGone(t *testing.T, pgid int) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		left := groupMembers(pgid)
		if len(left) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > 2*time.Second {
			for _, pid := range left {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				t.Errorf("process %d of group %d outlived the call: %q", pid, pgid, strings.ReplaceAll(string(b), "\x00", " "))
			}
			syscall.Kill(-pgid, syscall.SIGKILL)
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r bashRun) checkBounds(t *testing.T, within time.Duration) {
	t.Helper()
	if r.took > within {
		t.Errorf("the call took %v, want under %v", r.took, within)
	}
	if r.size > MaxResultBytes {
		t.Errorf("result is %d bytes of JSON, over MaxResultBytes %d", r.size, MaxResultBytes)
	}
	if r.updates > MaxResultBytes {
		t.Errorf("a partial result is %d bytes of JSON, over MaxResultBytes %d", r.updates, MaxResultBytes)
	}
	gone := requireGroupGone(t, r.pgid)
	t.Logf("took %v, group %d peaked at %d processes, empty %v after the call; result %d bytes, largest update %d bytes",
		r.took.Round(time.Millisecond), r.pgid, r.maxGroup, gone.Round(time.Millisecond), r.size, r.updates)
}

// limitedBash is a bash tool whose sandbox allows 64 processes. The kernel
// does not apply the process limit to root, so when the test runs as root
// the commands run as nobody, in a workspace nobody may write.
func limitedBash(t *testing.T) (*BashTool, string) {
	t.Helper()
	cfg := sandbox.Config{Mode: defaultSandbox(t).Mode(), Limits: sandbox.Limits{Procs: 64}, Hide: sandbox.DefaultHide(os.Getenv)}
	ws := t.TempDir()
	if os.Geteuid() == 0 {
		cfg.RunAs = &syscall.Credential{Uid: 65534, Gid: 65534}
		for d := ws; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			must(t, os.Chmod(d, 0o755))
		}
		must(t, os.Chown(ws, 65534, 65534))
	}
	sb, err := sandbox.New(cfg)
	must(t, err)
	t.Cleanup(func() { sb.Close() })
	return NewBashTool(BashOptions{KillGrace: 300 * time.Millisecond, OutputDir: t.TempDir(), Sandbox: sb}), ws
}

// Fork bombs and mass spawning end with the call's timeout: SIGTERM, SIGKILL
// after the grace, and nothing of the group is left. The classic bomb also
// meets the sandbox's process limit.
//
// The checks rest on what the commands record and on what is left once the
// call has returned, never on sampling /proc while they run: a call can be
// over before a sampler looks (an idle machine ran the 100 sleeps in 60 ms),
// and a loaded machine forks slowly (15-40 ms a fork on small VMs). Every
// sleep carries a marker (SleepMarker) that finds it in /proc from outside
// the sandbox's pid namespace; each spawn appends a line to a file in the
// workspace, which says how many there were.
func TestAttackBashForkBombs(t *testing.T) {
	ws := t.TempDir()
	tool := newTestBash(t) // grace 300 ms
	t.Run("classic bomb under the process limit", func(t *testing.T) {
		tool, ws := limitedBash(t)
		marker := SleepMarker()
		r := runBashTracked(t, tool, ws, `b(){ b & b & }; b; sleep `+marker, 2)
		// The error text is the proof the bomb met the limit.
		wantContains(t, r.out, "Resource temporarily unavailable", "Command timed out after 2 seconds")
		r.checkBounds(t, 6*time.Second)
		RequireNoProcessesWith(t, marker, 2*time.Second)
		// Sampling can miss a peak but never invent one, so only the upper
		// bound is checked.
		if r.maxGroup > 70 {
			t.Errorf("the bomb peaked at %d processes; the limit is 64", r.maxGroup)
		}
	})
	t.Run("bounded exponential tree", func(t *testing.T) {
		// Up to 2^7-1 subshells, each with a sleep.
		marker := SleepMarker()
		cmd := `ulimit -u 2000 2>/dev/null; f(){ if [ $1 -gt 0 ]; then f $(($1-1)) & f $(($1-1)) & fi; echo s >> spawned; sleep ` + marker + `; }; f 6`
		r := runBashTracked(t, tool, ws, cmd, 2)
		wantContains(t, r.out, "Command timed out after 2 seconds")
		r.checkBounds(t, 6*time.Second)
		RequireNoProcessesWith(t, marker, 2*time.Second)
		t.Logf("%d subshells spawned", spawnedLines(t, filepath.Join(ws, "spawned")))
	})
	t.Run("background sleeps until the timeout", func(t *testing.T) {
		marker := SleepMarker()
		r := runBashTracked(t, tool, ws, `for i in $(seq 1 200); do sleep `+marker+` & echo s >> sleeps; done; wait`, 1.5)
		wantContains(t, r.out, "Command timed out after 1.5 seconds")
		r.checkBounds(t, 5*time.Second)
		RequireNoProcessesWith(t, marker, 2*time.Second)
		t.Logf("%d sleeps spawned", spawnedLines(t, filepath.Join(ws, "sleeps")))
	})
	t.Run("100 background sleeps, shell exits at once", func(t *testing.T) {
		marker := SleepMarker()
		// jobs -r counts the sleeps still running as the shell exits: all
		// 100 outlive it, and the call must end every one.
		r := runBashTracked(t, tool, ws, `for i in $(seq 1 100); do sleep `+marker+` & done; echo running $(jobs -pr | wc -l)`, 0)
		if r.err != nil || r.out != "running 100\n" {
			t.Errorf("got %q, %v", r.out, r.err)
		}
		r.checkBounds(t, 10*time.Second)
		RequireNoProcessesWith(t, marker, 2*time.Second)
	})
}

// spawnedLines counts the lines a command appended to file, at least one:
// the command did start what it was meant to.
func spawnedLines(t *testing.T, file string) int {
	t.Helper()
	return len(readLines(t, file, 1))
}

// Commands that will not end by themselves are ended by the timeout; those
// that ignore SIGTERM, and their double-forked children, by SIGKILL.
func TestAttackBashCommandsThatWillNotEnd(t *testing.T) {
	ws := t.TempDir()
	tool := newTestBash(t) // grace 300 ms
	// armed names what each command prints once its traps are set: a
	// SIGTERM that arrives before (bash still starting on a loaded machine)
	// ends it at the timeout, which says nothing about SIGKILL; such a run
	// is repeated with a longer timeout until the traps were in place.
	cases := []struct {
		name, command string
		minGrace      bool
		armed         string
	}{
		{"sleeps forever", "sleep infinity", false, ""},
		{"busy loop", "while :; do :; done", false, ""},
		{"ignores SIGTERM", "trap '' TERM; echo armed; sleep 1000", true, "armed\n"},
		{"child ignores SIGTERM and double-forks", `( ( trap '' TERM; echo a1; exec sleep 1000 ) & ) ; ( trap '' TERM; echo a2; while :; do sleep 1; done ) & wait`, true, "a1|a2"},
		{"grandchild re-traps and loops", `bash -c 'trap "" TERM INT HUP; ( trap "" TERM; echo a1; while :; do sleep 0.1; done ) & disown; echo a2; while :; do sleep 0.1; done' & wait`, true, "a1|a2"},
		{"nohup and disown", `nohup sleep 1000 >/dev/null 2>&1 & disown; sleep 1000`, false, ""},
	}
	armed := func(out, want string) bool {
		for _, m := range strings.Split(want, "|") {
			if !strings.Contains(out, strings.TrimSuffix(m, "\n")) {
				return false
			}
		}
		return true
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, timeout := range []float64{0.5, 3, 10} {
				r := runBashTracked(t, tool, ws, c.command, timeout)
				wantContains(t, r.out, fmt.Sprintf("Command timed out after %g seconds", timeout))
				if c.armed != "" && !armed(r.out, c.armed) {
					t.Logf("traps not set within %g s (%q); again with a longer timeout", timeout, r.out)
					continue
				}
				minTook := time.Duration(timeout * float64(time.Second))
				if c.minGrace {
					minTook += 300 * time.Millisecond // the grace before SIGKILL
				}
				if r.took < minTook {
					t.Errorf("returned after %v, before the timeout and grace", r.took)
				}
				r.checkBounds(t, time.Duration(timeout*float64(time.Second))+3*time.Second)
				return
			}
			t.Fatal("the command never set its traps")
		})
	}
	t.Run("double-forked child ignoring SIGTERM after a normal exit", func(t *testing.T) {
		r := runBashTracked(t, tool, ws, `( ( trap '' TERM; exec sleep 1000 ) & ) ; echo done`, 0)
		if r.err != nil || r.out != "done\n" {
			t.Errorf("got %q, %v", r.out, r.err)
		}
		r.checkBounds(t, 2*time.Second)
	})
	t.Run("cancelled while ignoring SIGTERM", func(t *testing.T) {
		group := make(chan int, 1)
		tool.started = func(p *sandbox.Process) { group <- p.Group }
		defer func() { tool.started = nil }()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		marker := SleepMarker()
		go func() {
			_, err := tool.Execute(ctx, Call{Args: map[string]any{"command": "trap '' TERM; ( trap '' TERM; sleep " + marker + " ) & sleep " + marker}, Workspace: ws})
			done <- err
		}()
		pgid := <-group
		// Both sleeps run, so both traps are set.
		for deadline := time.Now().Add(5 * time.Second); len(ProcessesWith("sleep\x00"+marker)) < 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the command's sleeps never ran")
			}
		}
		cancel()
		select {
		case err := <-done:
			wantContains(t, err.Error(), "Command aborted")
		case <-time.After(5 * time.Second):
			t.Fatal("the cancelled call did not return")
		}
		requireGroupGone(t, pgid)
		RequireNoProcessesWith(t, marker, 2*time.Second)
	})
}

// Floods of output are cut to the display limits and the call returns
// promptly; the full output goes to a file, never into the result.
func TestAttackBashOutputFloods(t *testing.T) {
	ws := t.TempDir()
	outDir := t.TempDir()
	tool := NewBashTool(BashOptions{KillGrace: 300 * time.Millisecond, OutputDir: outDir})
	cases := []struct {
		name, command string
		timeout       float64
		within        time.Duration
		wantErr       bool
		fullBytes     int64 // the full output file's size, when known
	}{
		{"50 MB of lines on stdout", "yes | head -c 50000000", 0, 15 * time.Second, false, 50000000},
		{"10 MB on stderr", "yes 'to stderr' | head -c 10000000 >&2", 0, 10 * time.Second, false, 10000000},
		{"10 MB one line on stderr", "head -c 10000000 /dev/zero | tr '\\0' e >&2", 0, 10 * time.Second, false, 10000000},
		{"20 MB of binary", "head -c 20000000 /dev/urandom", 0, 10 * time.Second, false, 20000000},
		{"5 million short lines", "seq 1 5000000", 0, 10 * time.Second, false, 0},
		{"10 MB then a failure", "head -c 10000000 /dev/urandom | base64; exit 7", 0, 10 * time.Second, true, 0},
		{"endless output until the timeout", "yes", 1, 5 * time.Second, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runBashTracked(t, tool, ws, c.command, c.timeout)
			if (r.err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v; output %q", r.err, c.wantErr, clip(r.out))
			}
			wantContains(t, r.out, "Full output: "+outDir)
			if len(r.out) > 2*DefaultMaxBytes+4096 {
				t.Errorf("the text is %d bytes; the display limit is %d", len(r.out), DefaultMaxBytes)
			}
			r.checkBounds(t, c.within)
			path := r.out[strings.LastIndex(r.out, "Full output: ")+len("Full output: "):]
			path = path[:strings.IndexByte(path, ']')]
			st, err := os.Stat(path)
			must(t, err)
			if c.fullBytes > 0 && st.Size() != c.fullBytes {
				t.Errorf("full output holds %d bytes, want %d", st.Size(), c.fullBytes)
			}
			t.Logf("full output file: %d bytes", st.Size())
			os.Remove(path)
		})
	}
}

// A flood cannot fill the disk: the full-output file stops at its cap and
// says so, while the result still shows the real last lines. (12 MB that
// end on their own: a flood cut by a timeout passes the cap only as fast as
// a loaded machine reads it; the endless flood's timeout is
// TestAttackBashOutputFloods'.)
func TestAttackBashOutputFileIsCapped(t *testing.T) {
	ws := t.TempDir()
	outDir := t.TempDir()
	const limit = 5 << 20
	tool := NewBashTool(BashOptions{KillGrace: 300 * time.Millisecond, OutputDir: outDir, MaxOutputFileBytes: limit})
	r := runBashTracked(t, tool, ws, `yes | head -c 12000000; echo the end`, 0)
	wantContains(t, r.out, "y\ny\ny\n", "the end", "Full output: ")
	r.checkBounds(t, 15*time.Second)
	path := r.out[strings.LastIndex(r.out, "Full output: ")+len("Full output: "):]
	path = path[:strings.IndexByte(path, ']')]
	b, err := os.ReadFile(path)
	must(t, err)
	if len(b) > limit+200 {
		t.Errorf("full output file holds %d bytes; the cap is %d", len(b), limit)
	}
	wantContains(t, string(b[len(b)-200:]), "[Output beyond 5.0MB was not kept; the command's result shows its last lines.]")
	t.Logf("full output file: %d bytes", len(b))
}

// bash starts in the call's workspace, and only in a directory that exists:
// a missing, file or NUL-holding workspace runs nothing. (What bash may
// reach beyond it is the sandbox's business: sandbox_e2e_test.go.)
func TestAttackBashWorkingDirectory(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ws := filepath.Join(base, "ws")
	must(t, os.MkdirAll(ws, 0o755))
	tool := newTestBash(t)
	wantContains(t, text(t, tool, ws, map[string]any{"command": "pwd -P"}), ws+"\n")
	file := filepath.Join(base, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	must(t, os.Symlink(filepath.Join(base, "gone"), filepath.Join(base, "dangling")))
	marker := filepath.Join(base, "ran")
	for name, dir := range map[string]string{
		"empty":            "",
		"missing":          filepath.Join(base, "missing"),
		"a regular file":   file,
		"dangling symlink": filepath.Join(base, "dangling"),
		"NUL byte":         ws + "\x00/..",
		"tilde":            "~",
	} {
		t.Run(name, func(t *testing.T) {
			got := failure(t, tool, dir, map[string]any{"command": "touch " + marker})
			wantContains(t, got, "Working directory does not exist", "Cannot execute bash commands.")
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the command ran")
			}
		})
	}
}
