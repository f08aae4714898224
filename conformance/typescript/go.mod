// This directory is a Node.js project, not Go: this file keeps its
// node_modules (which hold Go files of Temporal's API repository) out of
// the agentloop module's ./... patterns. conformance/typescript.go runs it.
module agentloop-conformance-typescript

go 1.25
