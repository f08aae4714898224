package tools

import (
	"strings"
	"testing"
)

// TestGitignore lists trees through find (pattern "*") for the .gitignore
// rules projects use. Every expectation is what git 2.39 keeps (git
// ls-files --others --exclude-standard) and, but for the two cases marked,
// what fd 8.6 prints as pi calls it (--glob --hidden, in a git repository).
// go-git's plumbing/format/gitignore v5.19.3 got "[!a]" and "!*/" wrong
// (filepath.Match has no "[!", and a pattern that matches a parent directory
// also re-includes its files), so the matcher stays on doublestar.
func TestGitignore(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		path  string
		want  string // find's lines, space-separated
	}{
		{"negation", map[string]string{".gitignore": "*.log\n!keep.log\n", "a.log": "", "keep.log": "", "d/b.log": "", "d/keep.log": ""},
			".", ".gitignore d/ d/keep.log keep.log"},
		{"negation inside an ignored directory's contents", map[string]string{".gitignore": "build/*\n!build/keep.txt\n", "build/a.txt": "", "build/keep.txt": "", "build/sub/x": ""},
			".", ".gitignore build/ build/keep.txt"},
		{"dir/** keeps the directory, so a negation brings a file back", map[string]string{".gitignore": "foo/**\n!foo/keep\n", "foo/a": "", "foo/keep": "", "foo/sub/b": ""},
			".", ".gitignore foo/ foo/keep"},
		{"a file in an excluded directory cannot be re-included", map[string]string{".gitignore": "logs/\n!logs/important.log\n", "logs/a.log": "", "logs/important.log": ""},
			".", ".gitignore"},
		{"directory-only pattern leaves a file of that name", map[string]string{".gitignore": "out/\n", "a/out": "", "b/out/x": "", "out/y": ""},
			".", ".gitignore a/ a/out b/"},
		{"directory-only after **", map[string]string{".gitignore": "**/tmp/\n", "tmp/a": "", "x/tmp/b": "", "y/tmp": ""},
			".", ".gitignore x/ y/ y/tmp"},
		{"dir/**/ matches the directories inside only", map[string]string{".gitignore": "build/**/\n", "build/a": "", "build/d/b": ""},
			".", ".gitignore build/ build/a"},
		{"leading slash anchors", map[string]string{".gitignore": "/top.txt\n", "top.txt": "", "sub/top.txt": ""},
			".", ".gitignore sub/ sub/top.txt"},
		{"a middle slash anchors", map[string]string{".gitignore": "sub/x.txt\n", "sub/x.txt": "", "deep/sub/x.txt": ""},
			".", ".gitignore deep/ deep/sub/ deep/sub/x.txt sub/"},
		{"** in the middle matches zero or more directories", map[string]string{".gitignore": "a/**/b\n", "a/b": "", "a/x/b": "", "a/x/y/b": "", "c/a/b": ""},
			".", ".gitignore a/ a/x/ a/x/y/ c/ c/a/ c/a/b"},
		{"nested .gitignore overrides its parent", map[string]string{".gitignore": "*.tmp\n", "a.tmp": "", "sub/.gitignore": "!important.tmp\n", "sub/important.tmp": "", "sub/other.tmp": ""},
			".", ".gitignore sub/ sub/.gitignore sub/important.tmp"},
		{"nested .gitignore anchors at its own directory", map[string]string{"sub/.gitignore": "/local.txt\n", "local.txt": "", "sub/local.txt": "", "sub/deeper/local.txt": ""},
			".", "local.txt sub/ sub/.gitignore sub/deeper/ sub/deeper/local.txt"},
		{"nested .gitignore: everything but Go files", map[string]string{"sub/.gitignore": "*\n!*.go\n", "sub/a.go": "", "sub/b.txt": "", "sub/d/c.go": ""},
			".", "sub/ sub/a.go"},
		{"re-included directories, then files by extension", map[string]string{".gitignore": "*\n!*/\n!*.md\n", "a.md": "", "b.txt": "", "d/c.md": "", "d/e.txt": ""},
			".", "a.md d/ d/c.md"},
		{"classes, escapes, trailing spaces, CRLF", map[string]string{".gitignore": "[!a].txt\r\n\\#hash\r\ntrail.txt   \r\n#comment\r\n", "a.txt": "", "b.txt": "", "#hash": "", "trail.txt": "", "comment": ""},
			".", ".gitignore a.txt comment"},
		// fd and rg do not apply a parent's path patterns below the search
		// directory (BurntSushi/ripgrep#2770) and would list x and w/x.
		{"a parent's anchored patterns apply in a searched subdirectory", map[string]string{".gitignore": "/sub/x\nsub/w/\n", "sub/x": "", "sub/y": "", "sub/w/x": ""},
			"sub", "y"},
		// fd and rg read {a,b} as alternation and would ignore a.txt.
		{"braces are literal", map[string]string{".gitignore": "{a,b}.txt\n", "a.txt": "", "{a,b}.txt": ""},
			".", ".gitignore a.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspaceWith(t, tc.files)
			got := text(t, NewFindTool(ReadOptions{}), ws, map[string]any{"pattern": "*", "path": tc.path})
			if got = strings.ReplaceAll(got, "\n", " "); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
