package runs

import (
	"encoding/json"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/prompts"
)

// Kind is the job a run does.
type Kind string

// The jobs pitcrew runs.
const (
	KindFlaky     Kind = "flaky"
	KindMigration Kind = "migration" // a slow-query report after a merged migration
	KindAlert     Kind = "alert"     // a fix for the bug behind a Datadog alert
)

// Run is one agent run as the ledger records it: enough to report its
// outcome on GitHub after a restart. What is particular to a job is in
// About (the subject, as people read it) and Data (the job's own, which
// only its code reads).
type Run struct {
	ID    string `json:"-"` // "<key>#<generation>"; also the sandbox Idempotency-Key
	Key   string `json:"key"`
	State State  `json:"-"`
	Kind  Kind   `json:"kind"`

	InstallationID int64  `json:"installation_id"`
	Repo           string `json:"repo"` // owner/name
	// Origin is the issue or pull request the run started from, or opened
	// for it (an alert's tracking issue); 0 for none.
	Origin int `json:"issue,omitempty"`
	// About names what the run works on: a test (path:line), a merge
	// commit, an alert id.
	About string `json:"about,omitempty"`
	// Title is what people call the subject when About is an id: an
	// alert's title, as its source wrote it (outside text, one line).
	Title    string          `json:"title,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"` // the job's own; see its declaration
	Delivery string          `json:"delivery"`       // the delivery or task that created the run

	SessionID   string `json:"session_id,omitempty"`
	ExecutionID string `json:"execution_id,omitempty"`
	SessionURL  string `json:"session_url,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`

	Result *prompts.Result `json:"result,omitempty"`
	// Answer is the end of the agent's answer (prompts.KeepAnswer), shown
	// folded where the run's result is; AnswerPRs are the pull requests of
	// the run's repository its text links to, read when it has no valid
	// result block.
	Answer    string   `json:"answer,omitempty"`
	AnswerPRs []string `json:"answer_prs,omitempty"`
	// PR is the pull request the run opened, as pitcrew follows it.
	PR *Pull `json:"pr,omitempty"`
	// Measured is what pitcrew counted in the run's own log (Job.RunLog);
	// nil when the job keeps none or the run left none.
	Measured *evidence.Measured `json:"measured,omitempty"`
	// PriorFix is the merged fix of the key's previous run, when this run
	// is there because the trouble came back after it.
	PriorFix *PriorFix `json:"prior_fix,omitempty"`
	// FollowUps are the messages sent to the run's session after its
	// first answer (reviews, /pitcrew open-pr), oldest first.
	FollowUps []FollowUp `json:"followups,omitempty"`

	Error string `json:"error,omitempty"` // why the run failed, shown to users
	// Waiting says why a queued run's session did not start yet (the
	// sandbox did not answer) while pitcrew tries again; "" once started.
	Waiting   string `json:"waiting,omitempty"`
	Report    bool   `json:"report,omitempty"` // a report artifact is stored (see Ledger.Report)
	Published bool   `json:"published,omitempty"`
	// RecordedBy is the task that recorded the outcome and so shows it
	// (Finisher.Record): the same task run again, after a failure or a
	// shutdown, shows it again.
	RecordedBy string `json:"recorded_by,omitempty"`

	stored string // the body as read from the ledger, for Update's check
	// subjects are the subjects that showed the run when Update wrote this
	// copy, read in the same round trip (nil: not read; see SubjectsOf).
	subjects []string
}

// UnmarshalJSON reads runs as this version stores them and as earlier
// ones did, with one field per job (test, files, alert_id).
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run
	var v struct {
		plain
		Test    string          `json:"test"`
		AlertID string          `json:"alert_id"`
		Files   json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Run(v.plain)
	if r.About == "" {
		r.About = v.Test + v.AlertID
	}
	if len(r.Data) == 0 && len(v.Files) > 0 {
		r.Data, _ = json.Marshal(map[string]json.RawMessage{"files": v.Files})
	}
	return nil
}

// PullRequest is the pull request the run names: its result's, else the
// first its answer links to; "" when none.
func (r Run) PullRequest() string {
	if r.Result != nil && r.Result.PRURL != "" {
		return r.Result.PRURL
	}
	if len(r.AnswerPRs) > 0 {
		return r.AnswerPRs[0]
	}
	return ""
}
