package queue

import (
	"encoding/json"
	"time"

	"github.com/hibiken/asynq"
)

// TaskCIDeadline checks, once its workflow runs should have started, a
// verification of a fix in the repository's own CI.
const TaskCIDeadline = "github:ci-deadline"

// CIDeadline is the payload of a TaskCIDeadline.
type CIDeadline struct {
	Repo           string `json:"repo"`
	InstallationID int64  `json:"installation_id"`
	Nonce          string `json:"nonce"`
	// Finish is the second check, once the runs should have finished.
	Finish bool `json:"finish,omitempty"`
}

// CIDeadlineTask is the check of verification d at at; one of each kind
// per verification, however often it is asked for.
func CIDeadlineTask(d CIDeadline, at time.Time) *asynq.Task {
	payload, _ := json.Marshal(d)
	id := "ci-deadline:" + d.Nonce
	if d.Finish {
		id += ":finish"
	}
	return asynq.NewTask(TaskCIDeadline, payload, asynq.TaskID(id), asynq.ProcessAt(at),
		asynq.Queue(QueueOutcome), asynq.MaxRetry(MaxRetry), asynq.Timeout(2*time.Minute))
}

// DecodeCIDeadline reads a TaskCIDeadline's payload.
func DecodeCIDeadline(p []byte) (CIDeadline, error) {
	var d CIDeadline
	err := json.Unmarshal(p, &d)
	return d, err
}
