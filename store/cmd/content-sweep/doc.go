// Command content-sweep deletes the stored content of workflows Temporal no
// longer has: every scope (workflow id) of the content store with nothing
// written for -older-than and no execution left in the namespace. Run it
// now and then (a daily cron job) with the worker's store and Temporal
// settings.
package main
