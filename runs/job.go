package runs

import "time"

// View is what a status renderer reads: a subject's stored status, the
// runs its entries name, the stored reports of those that left one, and
// the time to measure ages from.
type View struct {
	Status  Status
	Runs    map[string]Run
	Reports map[string]string // by run id; only for jobs with an artifact
	Now     time.Time
}

// Renderer writes the Markdown of a subject's status comment.
type Renderer func(View) string
