package queue

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"
)

// TaskDashboard rewrites a repository's flaky-tests dashboard.
const TaskDashboard = "github:dashboard"

// Dashboard is the payload of a TaskDashboard.
type Dashboard struct {
	Repo           string `json:"repo"`
	InstallationID int64  `json:"installation_id"`
}

// DashboardTask is the refresh of repo's dashboard for the window of
// length every that now falls in, run when the window ends. Every request
// of one window has the task's id, so the queue takes the first and
// refuses the others (IsDuplicate): a burst of signals is one edit per
// window, however many there are. It runs once the window has ended, so
// it reads what every request of the window recorded.
func DashboardTask(d Dashboard, every time.Duration, now time.Time) *asynq.Task {
	n := now.UnixNano() / int64(every)
	// asynq schedules by whole seconds (a task due at 12.3 s is taken at
	// 12 s), and a task taken before its window ends would miss what the
	// rest of the window asks for: it is due at the next whole second.
	end := time.Unix(0, (n+1)*int64(every))
	if t := end.Truncate(time.Second); t.Before(end) {
		end = t.Add(time.Second)
	}
	payload, _ := json.Marshal(d)
	return asynq.NewTask(TaskDashboard, payload,
		asynq.TaskID(fmt.Sprintf("dashboard:%s:%d", strings.ToLower(d.Repo), n)), asynq.ProcessAt(end),
		asynq.Queue(QueueOutcome), asynq.MaxRetry(MaxRetry), asynq.Timeout(2*time.Minute))
}

// DecodeDashboard reads a TaskDashboard's payload.
func DecodeDashboard(p []byte) (Dashboard, error) {
	var d Dashboard
	err := json.Unmarshal(p, &d)
	return d, err
}
