package runs

import (
	"time"

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
// outcome on GitHub after a restart.
type Run struct {
	ID    string `json:"-"` // "<key>#<generation>"; also the sandbox Idempotency-Key
	Key   string `json:"key"`
	State State  `json:"-"`
	Kind  Kind   `json:"kind"`

	InstallationID int64    `json:"installation_id"`
	Repo           string   `json:"repo"` // owner/name
	Issue          int      `json:"issue,omitempty"`
	Test           string   `json:"test,omitempty"`  // flaky: path:line
	Files          []string `json:"files,omitempty"` // migration: the migration files of the merge
	Delivery       string   `json:"delivery"`        // the GitHub delivery that created the run

	SessionID   string `json:"session_id,omitempty"`
	ExecutionID string `json:"execution_id,omitempty"`
	AlertID     string `json:"alert_id,omitempty"` // alert runs: the Datadog monitor's alert id
	SessionURL  string `json:"session_url,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`

	Result    *prompts.Result `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`  // why the run failed, shown to users
	Report    bool            `json:"report,omitempty"` // a report artifact is stored (see Ledger.Report)
	Published bool            `json:"published,omitempty"`
}
