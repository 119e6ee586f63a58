package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
)

// CheckSuite records the CI's verdict on the head of a pull request an
// agent opened: one check suite per CI app.
type CheckSuite struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *CheckSuite) Handles() []string { return []string{"check_suite"} }

// FinishedSuite is a check suite that completed on a commit of pull
// requests of the repository.
type FinishedSuite struct {
	InstallationID int64
	Repo           github.Repo
	HeadSHA        string
	App            string // the CI app's slug (its name when the event has none)
	Suite          string // github.SuiteKey
	Conclusion     string
	Pulls          []int
}

// ParseFinishedSuite reads a check_suite event; ok is false unless a
// suite that ran check runs completed on a commit of some pull request.
func ParseFinishedSuite(payload []byte) (ev FinishedSuite, ok bool, err error) {
	var raw gogithub.CheckSuiteEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return FinishedSuite{}, false, fmt.Errorf("decoding check_suite event: %w", err)
	}
	s := raw.GetCheckSuite()
	app := s.GetApp().GetSlug()
	if app == "" {
		app = s.GetApp().GetName()
	}
	if raw.GetAction() != "completed" || raw.GetInstallation().GetID() <= 0 || !github.ValidSHA(s.GetHeadSHA()) || app == "" || s.GetLatestCheckRunsCount() == 0 {
		return FinishedSuite{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return FinishedSuite{}, false, err
	}
	ev = FinishedSuite{InstallationID: raw.GetInstallation().GetID(), Repo: repo, HeadSHA: s.GetHeadSHA(), App: app, Suite: github.SuiteKey(app, s.GetID()), Conclusion: s.GetConclusion()}
	for _, pr := range s.PullRequests {
		if n := pr.GetNumber(); n > 0 && len(ev.Pulls) < 10 {
			ev.Pulls = append(ev.Pulls, n)
		}
	}
	return ev, len(ev.Pulls) > 0, nil
}

// Handle implements githubapp.EventHandler. A suite of a pull request no
// run opened costs no API call.
func (h *CheckSuite) Handle(ctx context.Context, _, _ string, payload []byte) error {
	ev, ok, err := ParseFinishedSuite(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok || ev.App == h.AppSlug {
		return nil
	}
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	for _, n := range ev.Pulls {
		err := follow.Update(ctx, &h.Env, gh, ev.Repo, n, follow.News{Apply: func(p *runs.Pull) {
			_, known := p.Suites[ev.Suite]
			// A suite of an older head says nothing of this one.
			if p.Head == ev.HeadSHA && (known || len(p.Suites) < runs.MaxSuites) {
				if p.Suites == nil {
					p.Suites = map[string]string{}
				}
				p.Suites[ev.Suite] = ev.Conclusion
			}
		}})
		if err != nil {
			return err
		}
	}
	return nil
}
