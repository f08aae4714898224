// Package logging adapts zap to the Temporal SDK's logger interface, so the
// SDK, workflows and activities log through one structured zap logger.
package logging
