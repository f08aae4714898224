// Package mcptools serves the tools of MCP servers (Model Context
// Protocol, through the official Go SDK) to the worker's tool registry:
// config.go reads the common {"mcpServers": ...} file, manager.go is the
// tools.Source the registry asks, server.go keeps one connection per
// server (starting a stdio server again when it dies), workspaces.go runs
// a stdio server in the worker's sandbox, one process per run workspace,
// and tool.go runs a call and maps its result onto pi's tool result. The tools are named
// server__tool and go through the same prepare, execute and finalize
// activities as the built-in tools.
package mcptools
