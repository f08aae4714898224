package telemetry_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/harness/jaeger"
	"github.com/durable-agents/agentloop/telemetry"
)

// TestOverhead measures what tracing and metrics cost a run: the demo
// (5 model turns, 6 tool calls, no model delay) with telemetry off and
// on (spans exported to a real Jaeger over OTLP/HTTP, metrics served),
// alternating, and prints the median per run and per model turn.
// AGENTLOOP_OTEL_OVERHEAD=N runs it with N runs of each (the sticky cache
// stays on, as in production).
func TestOverhead(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AGENTLOOP_OTEL_OVERHEAD"))
	if n == 0 {
		t.Skip("AGENTLOOP_OTEL_OVERHEAD=N measures the overhead of telemetry over N runs")
	}
	bin, err := jaeger.Find()
	require.NoError(t, err)
	ctx := context.Background()
	j, err := jaeger.Start(ctx, bin, t.TempDir(), testWriter{t})
	require.NoError(t, err)
	t.Cleanup(j.Stop)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": j.OTLPEndpoint}
	tel, err := telemetry.Setup(ctx, telemetry.Options{ServiceName: "agentloop-overhead", MetricsAddr: "127.0.0.1:0",
		Getenv: func(k string) string { return env[k] }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	off := newRig(t, nil, nil)
	on := newRig(t, tel.Interceptors(), tel.MetricsHandler())
	off.runDemo(t) // warm up both
	on.runDemo(t)
	var offs, ons []time.Duration
	for range n {
		for _, r := range []*rig{off, on} {
			start := time.Now()
			r.runDemo(t)
			d := time.Since(start)
			if r == off {
				offs = append(offs, d)
			} else {
				ons = append(ons, d)
			}
		}
	}
	med := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	mOff, mOn := med(offs), med(ons)
	t.Logf("median of %d runs: off %v, on %v per run; per model turn off %v, on %v; overhead %v per turn (%.1f%%)",
		n, mOff, mOn, mOff/demoTurns, mOn/demoTurns, (mOn-mOff)/demoTurns, 100*float64(mOn-mOff)/float64(mOff))
}
