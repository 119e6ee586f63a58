package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// IssueLabeled starts a flaky-test fix when an issue gets the flaky label:
// one run per test the issue names, shared with any other signal about the
// same test, and one status comment on the issue.
type IssueLabeled struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *IssueLabeled) Handles() []string { return []string{"issues"} }

// maxRejectedShown bounds the unusable mentions listed in a comment.
const maxRejectedShown = 20

// rejectedLines lists the mentions that were not usable, each as code
// with its reason, at most maxRejectedShown of them.
func rejectedLines(rejected []exunit.Rejected) []string {
	var lines []string
	for i, r := range rejected {
		if i == maxRejectedShown {
			return append(lines, fmt.Sprintf("and %d more", len(rejected)-i))
		}
		lines = append(lines, publish.Code(r.Text, 100)+": "+r.Reason)
	}
	return lines
}

// Handle implements githubapp.EventHandler.
func (h *IssueLabeled) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParseLabeledIssue(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	repo := ev.Repo
	log := zerolog.Ctx(ctx).With().Str("repo", repo.String()).Int("issue", ev.Issue).Logger()
	ctx = log.WithContext(ctx)
	ownBot := ev.Sender == h.AppSlug+"[bot]"
	if ev.SenderIsBot && !ownBot {
		log.Info().Str("sender", ev.Sender).Msg("ignoring a label added by a bot")
		return nil
	}
	if ev.Dashboard {
		log.Info().Msg("ignoring a label added to the flaky-tests dashboard: the tests it lists are pitcrew's own record; tick a box to start a fix")
		return nil
	}

	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	subject := runs.Subject{Repo: repo.String(), Issue: ev.Issue}
	label := ev.Label
	notice := func(label, text string) error {
		return h.Publish.Status(ctx, gh, subject, func(st *runs.Status) {
			st.Replace(runs.Status{InstallationID: ev.InstallationID, Label: label, Notice: text})
		})
	}

	cfg, err := h.LoadConfig(ctx, gh, repo)
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		if !strings.EqualFold(label, flaky.DefaultLabel) {
			log.Warn().Err(err).Msg("ignoring a label: the repository configuration is invalid")
			return nil
		}
		return notice(label, fmt.Sprintf("Nothing was started: %s\n\nFix the file, then remove the %s label and add it again.", work.ConfigTrouble(cfgErr), publish.Code(label, 50)))
	}
	if err != nil {
		return err
	}
	if f := flaky.Of(cfg); !f.Enabled || !strings.EqualFold(label, f.Label) {
		log.Info().Str("label", label).Str("flaky_label", f.Label).Bool("enabled", f.Enabled).
			Msg("ignoring the label: it is not the flaky label of this repository, or flaky.enabled is false")
		return nil
	}

	if !ownBot {
		perm, err := gh.Permission(ctx, repo, ev.Sender)
		if err != nil {
			return err
		}
		if !work.MayCommand(perm) {
			log.Info().Str("sender", ev.Sender).Str("permission", perm).Msg("label added without write permission")
			return notice(label, fmt.Sprintf("Nothing was started: only people with write access to this repository can start a flaky-test fix, and `%s` has %s access. Someone with write access can remove the `%s` label and add it again.", ev.Sender, perm, label))
		}
	}

	refs, rejected := exunit.ExtractTestRefs(ev.Text)
	rejectedText := rejectedLines(rejected)
	if len(refs) == 0 {
		return h.Publish.Status(ctx, gh, subject, func(st *runs.Status) {
			st.Replace(runs.Status{InstallationID: ev.InstallationID, Label: label, Rejected: rejectedText,
				Notice: fmt.Sprintf("Nothing was started: this issue names no test pitcrew can run. Name each test as `test/path/to/file_test.exs:LINE` (or `apps/<app>/test/...:LINE` in an umbrella project) in the title or body, then remove the `%s` label and add it again.", label)})
		})
	}

	var entries []runs.Entry
	var started []runs.Run
	var retry error
	for _, ref := range refs {
		req := flaky.Request{InstallationID: ev.InstallationID, Delivery: deliveryID, Subject: subject, Ref: ref, Config: cfg}
		// An issue a person labelled is a sighting too, counted once per
		// issue; pitcrew's own tracking issue records a CI sighting already.
		if !ownBot {
			req.Seen = &runs.Seen{Key: flaky.Key(repo.String(), ref), Occurrence: fmt.Sprintf("issue:%d", ev.Issue), Where: weburl.Issue(repo.String(), ev.Issue)}
		}
		entry, justStarted, err := flaky.Claim(ctx, &h.Env, req)
		if errors.Is(err, runs.ErrSandboxWaiting) {
			retry, err = cmp.Or(retry, err), nil // shown as waiting first, then tried again
		}
		if err != nil {
			return err
		}
		entries = append(entries, entry)
		if justStarted != nil {
			started = append(started, *justStarted)
		}
	}
	err = h.Publish.Status(ctx, gh, subject, func(st *runs.Status) {
		st.Replace(runs.Status{InstallationID: ev.InstallationID, Label: label, Entries: entries, Rejected: rejectedText})
	}, runs.RunIDs(entries)...)
	if err != nil {
		return err
	}
	h.DashboardChanged(ctx, repo.String(), ev.InstallationID)
	// Issues that attached to a run while it was still queued show its
	// session link once it has one.
	for _, run := range started {
		if err := h.Publish.Subjects(ctx, gh, run, subject); err != nil {
			return err
		}
	}
	return retry
}

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
