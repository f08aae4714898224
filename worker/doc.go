// Command worker runs the agent loop worker: the AgentLoop workflow, its
// activities, the built-in coding tools and every model provider the
// environment configures (the scripted demo model always).
package main
