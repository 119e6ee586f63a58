// Package hook is the first stage of the pipeline: every route that takes
// a request from outside (GitHub's webhooks, the sandbox's callbacks, the
// alert sources) verifies it, bounds it, stores it on the durable queue
// and answers, in milliseconds and before anything else touches it. What
// a stored request means is for the handlers to decide.
package hook
