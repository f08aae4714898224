package main

import (
	"os"

	"github.com/durable-agents/agentloop/internal/sandbox/netbridge"
)

func main() { os.Exit(netbridge.Main(os.Args[1:])) }
