// Command content-sweep deletes the stored content of workflows Temporal no
// longer has: every scope (workflow id) of -namespace's content with
// nothing written for -older-than and no execution left in the namespace.
// Keys carry the namespace, so a sweep never touches another namespace's
// content; keys written before they did are swept only with -legacy. Run it
// now and then (a daily cron job per namespace) with the worker's store and
// Temporal settings.
package main
