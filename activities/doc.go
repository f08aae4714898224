// Package activities holds the stages of the agent loop that touch the
// world: the model turn, and the prepare, execute and finalize stages of a
// tool call. They are methods on one struct holding the worker's registries;
// the workflow refers to them through a nil *Activities. What they send
// their workflow and its watchers (the toolUpdate and toolQueue Signals,
// live progress in heartbeats) is agentapi's, with the rest of the
// contract clients read.
package activities
