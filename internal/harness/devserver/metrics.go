package devserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Requests are the requests the server's frontend has answered, by
// operation (QueryWorkflow, RecordActivityTaskHeartbeat, ...): the
// service_requests counter of its Prometheus metrics, which counts a
// request when it arrives. They are what clients and workers ask of the
// server; the requests its services make of each other are left out.
type Requests map[string]float64

// Requests reads the server's counts for namespace; it needs
// Options.Metrics.
func (s *Server) Requests(ctx context.Context, namespace string) (Requests, error) {
	if s.MetricsURL == "" {
		return nil, fmt.Errorf("dev server started without Options.Metrics")
	}
	return ReadRequests(ctx, s.MetricsURL, namespace)
}

// ReadRequests reads the frontend's service_requests counts for namespace
// from a Temporal server's Prometheus endpoint.
func ReadRequests(ctx context.Context, url, namespace string) (Requests, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("server metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("server metrics: %s", resp.Status)
	}
	out := Requests{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		labels, value, ok := sample(line, "service_requests")
		if !ok || labels["service_name"] != "frontend" || labels["namespace"] != namespace {
			continue
		}
		out[labels["operation"]] += value
	}
	return out, sc.Err()
}

// sample parses one Prometheus text line of metric name: its labels and
// value.
func sample(line, name string) (map[string]string, float64, bool) {
	rest, ok := strings.CutPrefix(line, name+"{")
	if !ok {
		return nil, 0, false
	}
	body, val, ok := strings.Cut(rest, "} ")
	if !ok {
		return nil, 0, false
	}
	v, err := strconv.ParseFloat(strings.Fields(val)[0], 64)
	if err != nil {
		return nil, 0, false
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return labels, v, true
}

// Sub returns the requests made between two reads.
func (r Requests) Sub(before Requests) Requests {
	out := Requests{}
	for k, v := range r {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Sum adds the counts of the operations named, or of all with none.
func (r Requests) Sum(ops ...string) float64 {
	var n float64
	if len(ops) == 0 {
		for _, v := range r {
			n += v
		}
		return n
	}
	for _, op := range ops {
		n += r[op]
	}
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
