package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/testenv"
)

var updateHistories = flag.Bool("update-histories", false, "record each scenario's history into testdata/histories for the replay tests")

func TestMain(m *testing.M) { testenv.Main(m) }

// knownDifferences are extra scenarios whose traces differ from pi's for a
// reason outside the agent loop; each is listed in the README.
var knownDifferences = map[string]string{
	"lone-surrogate-prompt":     "Go's JSON decoder replaces a lone UTF-16 surrogate with U+FFFD; JavaScript keeps it",
	"validation-invalid-schema": "a pattern no engine can compile fails with Go's regexp error text, not V8's",
}

// TestConformance plays every shared scenario through the workflow on a
// real server and requires pi's trace, event by event.
func TestConformance(t *testing.T) { runScenarios(t, "testdata") }

// TestConformanceExtra does the same for the project's own scenarios in the
// same format, whose traces pi produced with the reference runner.
func TestConformanceExtra(t *testing.T) { runScenarios(t, "testdata/extra") }

func runScenarios(t *testing.T, dir string) {
	c := testenv.Client(t)
	files, err := filepath.Glob(filepath.Join(dir, "scenarios", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			if why, ok := knownDifferences[name]; ok {
				t.Skip(why)
			}
			t.Parallel()
			s, err := conformance.Load(file)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := conformance.Run(ctx, c, s)
			require.NoError(t, err)
			want := readTrace(t, filepath.Join(dir, "traces", name+".jsonl"))
			require.Equal(t, want, canonicalLines(t, res.Trace), "trace of %s (workflow %s)", name, res.WorkflowID)
			if *updateHistories && dir == "testdata" {
				path := filepath.Join("..", "testdata", "histories", name+".json")
				require.NoError(t, testenv.SaveHistory(ctx, c, res.WorkflowID, res.RunID, path))
			}
		})
	}
}

// TestTestdataMatchesShared keeps the copied scenarios and traces identical
// to the shared ones, when the shared directory is beside the checkout.
func TestTestdataMatchesShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "conformance")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("no shared conformance directory beside the checkout")
	}
	for _, dir := range []string{"scenarios", "traces"} {
		theirs, err := filepath.Glob(filepath.Join(shared, dir, "*"))
		require.NoError(t, err)
		ours, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
		require.NoError(t, err)
		require.Equal(t, len(theirs), len(ours), dir)
		for _, f := range theirs {
			a, err := os.ReadFile(f)
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join("testdata", dir, filepath.Base(f)))
			require.NoError(t, err)
			require.Equal(t, string(a), string(b), f)
		}
	}
}

func readTrace(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines = append(lines, sc.Text())
		}
	}
	return canonicalLines(t, lines)
}

// canonicalLines re-encodes JSON lines so that equal values compare equal
// whatever their escaping, as the reference's compare.mjs does.
func canonicalLines(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var v any
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}
