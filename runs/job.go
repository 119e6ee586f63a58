package runs

import (
	"fmt"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
)

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

// Job is what shared code knows of one kind of work: the wiring registers
// each job once (handlers/jobs.go), and starting a run, recording its
// outcome and writing its status look the job up by its kind instead of
// switching on it.
type Job struct {
	Kind Kind
	// Prompt is the name of the job's prompt template (prompts.Render).
	Prompt string
	// Artifact is the session artifact kept as the run's report; a job
	// without one answers with the result block of its last message.
	Artifact string
	// Data is a machine-readable artifact kept beside the report
	// (Ledger.Data), "" for none.
	Data string
	// Connections are the sandbox connections its sessions need.
	Connections []string
	// Render writes the status comment of a subject that shows its runs.
	Render Renderer
	// Evidence names the rules the diff of a pull request its runs open is
	// checked with; "" follows no pull request.
	Evidence evidence.Job
	// RunLog is the artifact its runs keep every test command in
	// (evidence.RunLogName); pitcrew counts from it itself. "" for none.
	RunLog string
}

// Jobs finds a job by its kind.
type Jobs struct{ byKind map[Kind]Job }

// NewJobs indexes jobs by kind; a kind registered twice is an error.
func NewJobs(jobs ...Job) (Jobs, error) {
	j := Jobs{byKind: map[Kind]Job{}}
	for _, job := range jobs {
		if job.Kind == "" || job.Render == nil || job.Prompt == "" {
			return Jobs{}, fmt.Errorf("runs: job %q needs a kind, a prompt and a renderer", job.Kind)
		}
		if _, dup := j.byKind[job.Kind]; dup {
			return Jobs{}, fmt.Errorf("runs: job %q registered twice", job.Kind)
		}
		j.byKind[job.Kind] = job
	}
	return j, nil
}

// Of is the job of kind k; ok is false for a kind nobody registered (a
// run recorded by a newer version, say).
func (j Jobs) Of(k Kind) (job Job, ok bool) {
	job, ok = j.byKind[k]
	return job, ok
}
