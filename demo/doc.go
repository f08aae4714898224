// Package demo is the scripted demo: a tiny project with a failing test and
// a scripted model that fixes it with the real coding tools, so a newcomer
// sees read, edit and bash run as durable activities without an API key.
package demo
