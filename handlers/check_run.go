package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// CheckRun handles CIs that report through the Checks API rather than
// GitHub Actions: a check run that passed on a commit where an earlier run
// of the same name failed is a rerun that passed; the failed run's output
// is its log.
type CheckRun struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *CheckRun) Handles() []string { return []string{"check_run"} }

// PassedCheck is a successful check run of another app.
type PassedCheck struct {
	InstallationID int64
	Repo           github.Repo
	ID             int64
	Name           string
	HeadSHA        string
	Origin         flaky.CommitOrigin
	Text           string // its output (summary and text): the passing run's log
	URL            string // its page, Markdown-safe
}

// ParsePassedCheck reads a check_run event; ok is false unless it is a
// completed, successful check run of a CI other than GitHub Actions (whose
// reruns arrive as workflow_run) and other than pitcrew itself, on a commit
// that may be the repository's own (see flaky.CommitOrigin).
func ParsePassedCheck(payload []byte, appSlug string) (ev PassedCheck, ok bool, err error) {
	var raw gogithub.CheckRunEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return PassedCheck{}, false, fmt.Errorf("decoding check_run event: %w", err)
	}
	c := raw.GetCheckRun()
	slug := c.GetApp().GetSlug()
	if raw.GetAction() != "completed" || c.GetConclusion() != "success" || raw.GetInstallation().GetID() <= 0 ||
		slug == "github-actions" || slug == appSlug || c.GetName() == publish.CheckRunName || c.GetName() == "" || !github.ValidSHA(c.GetHeadSHA()) {
		return PassedCheck{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return PassedCheck{}, false, err
	}
	prs := c.PullRequests
	if suite := c.GetCheckSuite(); suite != nil {
		prs = append(prs, suite.PullRequests...)
	}
	origin := flaky.CommitOrigin{RepoID: raw.GetRepo().GetID(), RepoFullName: repo.String(), HeadBranch: c.GetCheckSuite().GetHeadBranch(),
		PullHeadRepoIDs: pullHeadRepoIDs(prs)}
	if origin.Ownership() == flaky.NotOurs {
		return PassedCheck{}, false, nil
	}
	return PassedCheck{InstallationID: raw.GetInstallation().GetID(), Repo: repo, ID: c.GetID(), Name: c.GetName(), HeadSHA: c.GetHeadSHA(), Origin: origin,
		Text: c.GetOutput().GetSummary() + "\n" + c.GetOutput().GetText(), URL: publish.SafeURL(c.GetHTMLURL())}, true, nil
}

// Handle implements githubapp.EventHandler.
func (h *CheckRun) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParsePassedCheck(payload, h.AppSlug)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	ctx = zerolog.Ctx(ctx).With().Str("repo", ev.Repo.String()).Int64("check_run", ev.ID).Logger().WithContext(ctx)
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	// Most passing checks passed the first time: look for a failed one
	// before spending calls on the configuration.
	checks, err := gh.ChecksNamed(ctx, ev.Repo, ev.HeadSHA, ev.Name)
	if err != nil {
		return err
	}
	var failed []github.CICheck
	for _, c := range checks {
		if c.Conclusion == "failure" {
			failed = append(failed, c)
		}
	}
	if len(failed) == 0 {
		zerolog.Ctx(ctx).Debug().Str("name", ev.Name).Msg("ignoring the check run: no check run of the same name failed on this commit, so nothing passed on a retry")
		return nil
	}
	passing, err := exunit.ParseLog(strings.NewReader(ev.Text))
	if err != nil {
		return err
	}
	if ours, err := flaky.IsOurs(ctx, gh, ev.Repo, ev.Origin, ev.HeadSHA); !ours {
		return err
	}
	cfg, proceed, err := h.JobConfig(ctx, gh, ev.Repo, flaky.Enabled)
	if !proceed {
		return err
	}
	var logs []flaky.CILog
	for _, f := range failed {
		rep, err := exunit.ParseLog(strings.NewReader(f.Text))
		if err != nil {
			return err
		}
		l := flaky.CILog{Occurrence: "check_run:" + strconv.FormatInt(f.ID, 10), Job: ev.Name, Report: rep}
		l.Flakes, l.NotFlaky = flaky.PassedOnRetry(rep, passing)
		logs = append(logs, l)
	}
	subject := runs.Subject{Repo: ev.Repo.String(), Commit: ev.HeadSHA, Source: "check_run:" + strconv.FormatInt(ev.ID, 10)}
	return flaky.ReportCI(ctx, &h.Env, gh, flaky.CISignal{InstallationID: ev.InstallationID, Delivery: deliveryID, Subject: subject, What: flaky.CIWhat("check", ev.Name), URL: ev.URL}, logs, cfg)
}

func pullHeadRepoIDs(prs []*gogithub.PullRequest) []int64 {
	var ids []int64
	for _, pr := range prs {
		ids = append(ids, pr.GetHead().GetRepo().GetID())
	}
	return ids
}
