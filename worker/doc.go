// Command worker runs the agent loop worker: the AgentLoop workflow, its
// activities, the built-in coding tools and every model provider the
// environment configures (the scripted demo model always). main.go is its
// flags and one agentworker.New call; setup.go makes what the command
// alone needs (logger, connection, store, sandbox, journal, host id).
package main
