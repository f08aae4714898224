package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench stream|history|session|content|progress|cost|loop|servers|soak [flags]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "worker":
		err = runWorker(ctx, os.Args[2:])
	case "loopworker":
		err = runLoopWorker(ctx, os.Args[2:])
	case "loop":
		err = benchLoop(ctx, os.Args[2:])
	case "stream":
		err = benchStream(ctx, os.Args[2:])
	case "history":
		err = benchHistory(ctx, os.Args[2:])
	case "session":
		err = benchSession(ctx, os.Args[2:])
	case "content":
		err = benchContent(ctx, os.Args[2:])
	case "contentworker":
		err = runContentWorker(ctx, os.Args[2:])
	case "progress":
		err = benchProgress(ctx, os.Args[2:])
	case "cost":
		err = benchCost(ctx, os.Args[2:])
	case "soak":
		err = benchSoak(ctx, os.Args[2:])
	case "servers":
		err = benchServers(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown benchmark %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
