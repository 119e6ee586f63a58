package handlers

import (
	"encoding/json"
	"fmt"
	"slices"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
)

// LabeledIssue is what pitcrew takes from an issues "labeled" event.
type LabeledIssue struct {
	InstallationID int64
	Repo           github.Repo
	Issue          int
	Label          string
	Sender         string
	SenderIsBot    bool
	// Dashboard says the issue is labelled as a flaky-tests dashboard: the
	// tests it lists are pitcrew's own record, not a report.
	Dashboard bool
	// Text is the title and body. It is untrusted: it only ever goes
	// through exunit.ExtractTestRefs, never into a prompt.
	Text string
}

// ParseLabeledIssue reads an issues event. ok is false for every event
// that is not a label added to an issue (not a pull request) of an
// installation; err is set when the payload cannot be read at all.
func ParseLabeledIssue(payload []byte) (ev LabeledIssue, ok bool, err error) {
	var raw gogithub.IssuesEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return LabeledIssue{}, false, fmt.Errorf("decoding issues event: %w", err)
	}
	// IsPullRequest is not nil-safe, unlike the getters.
	if raw.GetAction() != "labeled" || raw.Issue == nil || raw.Issue.IsPullRequest() || raw.GetInstallation().GetID() <= 0 ||
		raw.GetIssue().GetNumber() <= 0 || raw.GetLabel().GetName() == "" || raw.GetSender().GetLogin() == "" {
		return LabeledIssue{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return LabeledIssue{}, false, err
	}
	return LabeledIssue{
		InstallationID: raw.GetInstallation().GetID(),
		Repo:           repo,
		Issue:          raw.GetIssue().GetNumber(),
		Label:          raw.GetLabel().GetName(),
		Sender:         raw.GetSender().GetLogin(),
		SenderIsBot:    raw.GetSender().GetType() == "Bot",
		Dashboard:      slices.ContainsFunc(raw.GetIssue().Labels, func(l *gogithub.Label) bool { return l.GetName() == publish.DashboardLabel }),
		Text:           raw.GetIssue().GetTitle() + "\n" + raw.GetIssue().GetBody(),
	}, true, nil
}
