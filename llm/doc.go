// Package llm holds the model interface the model-turn activity calls, the
// provider registry, and the providers: a scripted model for tests and demos,
// and real ones. Nothing here imports Temporal; errors carry enough for the
// activity to tell Temporal whether to retry.
package llm
