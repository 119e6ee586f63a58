package flaky

import (
	"context"
	"io"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
)

// maxLogBytes bounds one job log read; the parser streams it.
const maxLogBytes = 256 << 20

// NewJobLogs reads the job logs of repo.
func NewJobLogs(gh github.Client, repo github.Repo) *JobLogs {
	return &JobLogs{gh: gh, repo: repo, reports: map[int64]exunit.Report{}}
}

// JobLogs reads each job's log at most once per delivery (a passing job
// can be both a re-run's passing attempt and an in-job retry), bounded,
// with the ExUnit reader.
type JobLogs struct {
	gh      github.Client
	repo    github.Repo
	reports map[int64]exunit.Report
}

// Report is what the job's log shows.
func (l *JobLogs) Report(ctx context.Context, jobID int64) (exunit.Report, error) {
	if rep, ok := l.reports[jobID]; ok {
		return rep, nil
	}
	body, err := l.gh.JobLog(ctx, l.repo, jobID)
	if err != nil {
		return exunit.Report{}, err
	}
	defer body.Close()
	rep, err := exunit.ParseLog(io.LimitReader(body, maxLogBytes))
	if err == nil {
		l.reports[jobID] = rep
	}
	return rep, err
}
