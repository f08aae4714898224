package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// rpcCounter counts and times the gRPC calls a client makes, by method.
// The loop benchmark's worker process counts its calls to the server and
// serves the counts on loopback, so each run's RPCs (heartbeats among them,
// which history does not show) can be attributed to it, and the time the
// server takes to answer them split from the worker's own.
type rpcCounter struct {
	mu sync.Mutex
	n  map[string]rpcStat
}

// rpcStat is how many calls of a method were made and how long they took
// in all (a long poll's time includes its wait for a task).
type rpcStat struct {
	N     int64         `json:"n"`
	Total time.Duration `json:"total"`
}

func newRPCCounter() *rpcCounter { return &rpcCounter{n: map[string]rpcStat{}} }

func (r *rpcCounter) interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		t0 := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		d := time.Since(t0)
		m := path.Base(method)
		r.mu.Lock()
		st := r.n[m]
		st.N++
		st.Total += d
		r.n[m] = st
		r.mu.Unlock()
		return err
	}
}

func (r *rpcCounter) snapshot() map[string]rpcStat {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.n)
}

// serve answers GET / with the counts as JSON on a loopback port, and
// writes that port's URL to file.
func (r *rpcCounter) serve(file string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() {
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_ = json.NewEncoder(w).Encode(r.snapshot())
		}))
	}()
	return os.WriteFile(file, []byte("http://"+l.Addr().String()+"/"), 0o644)
}

// rpcReader reads a worker's counts.
type rpcReader struct{ url string }

// waitRPCReader waits for the worker to write its URL to file.
func waitRPCReader(ctx context.Context, file string) (*rpcReader, error) {
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			return &rpcReader{url: string(b)}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("worker did not write %s", file)
}

func (r *rpcReader) read() map[string]rpcStat {
	if r == nil {
		return nil
	}
	resp, err := http.Get(r.url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var m map[string]rpcStat
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m
}

// rpcDelta is the calls made between two reads. A call counts when it
// returns, so a long poll waiting at the second read counts in a later
// delta.
type rpcDelta map[string]rpcStat

func subRPC(after, before map[string]rpcStat) rpcDelta {
	d := rpcDelta{}
	for k, v := range after {
		if n := v.N - before[k].N; n != 0 {
			d[k] = rpcStat{N: n, Total: v.Total - before[k].Total}
		}
	}
	return d
}

// meanRPC averages the call counts of several runs.
func meanRPC(ds []rpcDelta) map[string]float64 {
	out := map[string]float64{}
	for _, d := range ds {
		for k, v := range d {
			out[k] += float64(v.N) / float64(len(ds))
		}
	}
	return out
}

// rpcLatency is the mean time of a method's calls over several runs.
func rpcLatency(ds []rpcDelta) map[string]time.Duration {
	sums := map[string]rpcStat{}
	for _, d := range ds {
		for k, v := range d {
			s := sums[k]
			s.N += v.N
			s.Total += v.Total
			sums[k] = s
		}
	}
	out := map[string]time.Duration{}
	for k, v := range sums {
		out[k] = v.Total / time.Duration(v.N)
	}
	return out
}

// rpcLine prints the counts, largest first.
func rpcLine(m map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var kvs []kv
	total := 0.0
	for k, v := range m {
		kvs = append(kvs, kv{k, v})
		total += v
	}
	slices.SortFunc(kvs, func(a, b kv) int { return cmp.Or(cmp.Compare(b.v, a.v), cmp.Compare(a.k, b.k)) })
	var parts []string
	for _, x := range kvs {
		parts = append(parts, fmt.Sprintf("%s %.0f", x.k, x.v))
	}
	return fmt.Sprintf("%.0f: %s", total, strings.Join(parts, ", "))
}
