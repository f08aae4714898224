// Package cli holds the starter's commands: start a run and stream its
// events, run the demo, watch, steer, follow up, abort and inspect runs.
package cli
