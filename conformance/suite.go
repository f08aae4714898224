package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KnownDifferences are extra scenarios whose traces differ from pi's for a
// reason outside the agent loop; each is listed in the README.
var KnownDifferences = map[string]string{
	"lone-surrogate-prompt":     "Go's JSON decoder replaces a lone UTF-16 surrogate with U+FFFD; JavaScript keeps it",
	"validation-invalid-schema": "a pattern no engine can compile fails with the regexp2 engine's error text, not V8's",
}

// Case is a scenario with pi's trace for it.
type Case struct {
	Name     string
	Scenario Scenario
	// Want is pi's trace, canonical (see Canonical).
	Want []string
}

// Cases reads every scenario of dir/scenarios with its trace from
// dir/traces, in file name order.
func Cases(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "scenarios", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenarios in %s", dir)
	}
	var out []Case
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		s, err := Load(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		want, err := ReadTrace(filepath.Join(dir, "traces", name+".jsonl"))
		if err != nil {
			return nil, err
		}
		out = append(out, Case{Name: name, Scenario: s, Want: want})
	}
	return out, nil
}

// ReadTrace reads a trace file, canonical.
func ReadTrace(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := Canonical(lines)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Canonical re-encodes JSON lines so that equal values compare equal
// whatever their escaping, as the reference's compare.mjs does.
func Canonical(lines []string) ([]string, error) {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			return nil, fmt.Errorf("%w: %s", err, l)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// Diff describes the first difference between pi's trace and ours, or
// returns "" when they are equal.
func Diff(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("event %d of %d (ours: %d)\n  pi:   %s\n  ours: %s", i+1, len(want), len(got), w, g)
		}
	}
	return ""
}
