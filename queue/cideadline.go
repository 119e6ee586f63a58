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
}

// CIDeadlineTask is the check of verification d at at; one per
// verification, however often it is asked for.
func CIDeadlineTask(d CIDeadline, at time.Time) *asynq.Task {
	payload, _ := json.Marshal(d)
	return asynq.NewTask(TaskCIDeadline, payload, asynq.TaskID("ci-deadline:"+d.Nonce), asynq.ProcessAt(at),
		asynq.Queue(QueueOutcome), asynq.MaxRetry(MaxRetry), asynq.Timeout(2*time.Minute))
}

// DecodeCIDeadline reads a TaskCIDeadline's payload.
func DecodeCIDeadline(p []byte) (CIDeadline, error) {
	var d CIDeadline
	err := json.Unmarshal(p, &d)
	return d, err
}
