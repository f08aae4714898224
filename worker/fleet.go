package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/durable-agents/agentloop/store"
)

// checkStoreForFleet refuses a directory content store the worker was not
// given explicitly when its Temporal frontend is not on loopback. A
// frontend elsewhere means other hosts may run the same runs, and each
// host's default directory is its own: a run's content written on one host
// is missing on the next, and its session fails once a turn lands there.
// A directory given explicitly (a shared mount, or a fleet of one) is the
// operator's statement that it is shared.
func checkStoreForFleet(hostPort, spec string, explicit bool) error {
	if explicit || !isDirSpec(spec) || isLoopback(hostPort) {
		return nil
	}
	return fmt.Errorf("content store: the default store is the directory %s, on this host alone, and the Temporal frontend %s is not on loopback, so "+
		"workers on other hosts may take this worker's runs and find their content missing. "+
		"Give every worker of the fleet one shared store: -store s3://bucket/prefix?endpoint=host:port (or $%s); "+
		"to use a directory anyway (a shared mount, or a single host), pass it explicitly: -store %s",
		spec, hostPort, store.EnvStore, spec)
}

func isDirSpec(spec string) bool { return !strings.HasPrefix(spec, "s3://") }

// isLoopback reports whether the frontend's host is localhost or a
// loopback address; a name that resolves to loopback elsewhere is not
// resolved here and counts as remote.
func isLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// flagSet reports whether the command line gave the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// loadStoreID reads the store's id, writing one into a new store, so that
// the runs this worker resolves carry it (activities.Activities.StoreID).
func loadStoreID(st *store.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return st.LoadID(ctx)
}
