package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// IssueLabeled starts a flaky-test fix when an issue gets the flaky label:
// one run per test the issue names, shared with any other signal about the
// same test, and one status comment on the issue.
type IssueLabeled struct{ Base }

// Handles implements githubapp.EventHandler.
func (h *IssueLabeled) Handles() []string { return []string{"issues"} }

// FlakyKey is the idempotency key of a flaky test: the repository (GitHub
// names are case-insensitive) and the test's file:line.
func FlakyKey(repo string, ref exunit.TestRef) string {
	return "flaky:" + strings.ToLower(repo) + ":" + ref.String()
}

// Handle implements githubapp.EventHandler.
func (h *IssueLabeled) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParseLabeledIssue(payload)
	if err != nil {
		return permanent(err)
	}
	if !ok {
		return nil
	}
	repo := ev.Repo
	log := logFor(ctx).With().Str("repo", repo.String()).Int("issue", ev.Issue).Logger()
	ctx = log.WithContext(ctx)
	ownBot := ev.Sender == h.AppSlug+"[bot]"
	if ev.SenderIsBot && !ownBot {
		log.Info().Str("sender", ev.Sender).Msg("ignoring a label added by a bot")
		return nil
	}

	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	subject := runs.Subject{Repo: repo.String(), Issue: ev.Issue}
	label := ev.Label
	notice := func(label, text string) error {
		return h.updateStatus(ctx, gh, subject, func(st *runs.IssueStatus) {
			*st = runs.IssueStatus{InstallationID: ev.InstallationID, Label: label, CommentID: st.CommentID, Notice: text}
		})
	}

	cfg, err := h.loadRepoConfig(ctx, gh, repo)
	var cfgErr *ConfigError
	if errors.As(err, &cfgErr) {
		if !strings.EqualFold(label, DefaultFlakyLabel) {
			log.Warn().Err(err).Msg("ignoring a label: the repository configuration is invalid")
			return nil
		}
		return notice(label, fmt.Sprintf("Nothing was started: pitcrew could not use `%s` (%s): %s\n\nFix the file, then remove the `%s` label and add it again.", cfgErr.Path, cfgErr.Source, cfgErr.Err, label))
	}
	if err != nil {
		return err
	}
	if !cfg.Flaky.Enabled || !strings.EqualFold(label, cfg.Flaky.Label) {
		return nil
	}

	if !ownBot {
		perm, err := gh.Permission(ctx, repo, ev.Sender)
		if err != nil {
			return err
		}
		if perm != "admin" && perm != "write" {
			log.Info().Str("sender", ev.Sender).Str("permission", perm).Msg("label added without write permission")
			return notice(label, fmt.Sprintf("Nothing was started: only people with write access to this repository can start a flaky-test fix, and `%s` has %s access. Someone with write access can remove the `%s` label and add it again.", ev.Sender, perm, label))
		}
	}

	refs, rejected := exunit.ExtractTestRefs(ev.Text)
	var rejectedText []string
	for _, r := range rejected {
		rejectedText = append(rejectedText, fmt.Sprintf("`%s`: %s", strings.ReplaceAll(r.Text, "`", ""), r.Reason))
	}
	if len(refs) == 0 {
		return h.updateStatus(ctx, gh, subject, func(st *runs.IssueStatus) {
			*st = runs.IssueStatus{InstallationID: ev.InstallationID, Label: label, CommentID: st.CommentID, Rejected: rejectedText,
				Notice: fmt.Sprintf("Nothing was started: this issue names no test pitcrew can run. Name each test as `test/path/to/file_test.exs:LINE` (or `apps/<app>/test/...:LINE` in an umbrella project) in the title or body, then remove the `%s` label and add it again.", label)}
		})
	}

	var entries []runs.Entry
	var started []string
	for _, ref := range refs {
		entry, justStarted, err := h.claimAndStart(ctx, ev, deliveryID, subject, ref, cfg.Flaky)
		if err != nil {
			return err
		}
		entries = append(entries, entry)
		if justStarted {
			started = append(started, entry.RunID)
		}
	}
	err = h.updateStatus(ctx, gh, subject, func(st *runs.IssueStatus) {
		*st = runs.IssueStatus{InstallationID: ev.InstallationID, Label: label, CommentID: st.CommentID, Entries: entries, Rejected: rejectedText}
	})
	if err != nil {
		return err
	}
	// Issues that attached to a run while it was still queued show its
	// session link once it has one.
	for _, id := range started {
		if err := h.publishToSubjects(ctx, gh, id, subject); err != nil {
			return err
		}
	}
	return nil
}

// claimAndStart finds or records the run for one test and, if this signal
// owns it, starts its session; started reports whether it did.
func (h *IssueLabeled) claimAndStart(ctx context.Context, ev LabeledIssue, deliveryID string, subject runs.Subject, ref exunit.TestRef, cfg FlakyConfig) (entry runs.Entry, started bool, err error) {
	key := FlakyKey(subject.Repo, ref)
	run, claim, err := h.Ledger.Claim(ctx, runs.Run{
		Key: key, Kind: runs.KindFlaky, InstallationID: ev.InstallationID,
		Repo: subject.Repo, Issue: subject.Issue, Test: ref.String(), Delivery: deliveryID,
	}, cfg.Cooldown)
	if err != nil {
		return runs.Entry{}, false, err
	}
	// The issue that started a run stays its owner: a retried task or the
	// label added again must not read as "attached to another run".
	if claim == runs.ClaimAttached && (run.Delivery == deliveryID || (run.Repo == subject.Repo && run.Issue == subject.Issue)) {
		claim = runs.ClaimNew
	} else {
		h.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), string(claim)).Inc()
	}
	log := logFor(ctx).With().Str("run_id", run.ID).Str("idempotency_key", key).Str("claim", string(claim)).Logger()
	log.Info().Msg("claimed run")
	if err := h.Ledger.Subscribe(ctx, run.ID, subject); err != nil {
		return runs.Entry{}, false, err
	}
	entry = runs.Entry{Test: ref.String(), RunID: run.ID, Relation: claim, Cooldown: cfg.Cooldown}
	if run.State != runs.Queued || claim != runs.ClaimNew {
		return entry, false, nil
	}

	prompt, err := prompts.Flaky(prompts.FlakyInput{Repo: subject.Repo, Issue: subject.Issue, Test: ref, VerifyRuns: cfg.VerifyRuns})
	if err != nil {
		return entry, false, h.failRun(ctx, run.ID, "pitcrew could not write the agent's instructions")
	}
	ses, err := h.Sandbox.Start(ctx, run.ID, prompt, "https://github.com/"+subject.Repo, nil)
	if err != nil {
		if !sandbox.IsPermanent(err) && !lastAttempt(ctx) {
			return entry, false, err
		}
		log.Error().Err(err).Msg("could not start the sandbox session")
		return entry, true, h.failRun(ctx, run.ID, "the sandbox refused to start it ("+prompts.PlainLine(err.Error(), 200)+")")
	}
	if _, err := h.Ledger.Move(ctx, run.ID, runs.Started, func(r *runs.Run) {
		r.SessionID, r.ExecutionID, r.SessionURL = ses.ID, ses.ExecutionID, safeURL(ses.SessionURL)
	}); err != nil {
		return entry, false, err
	}
	h.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), "started").Inc()
	log.Info().Str("session_id", ses.ID).Msg("started sandbox session")
	return entry, true, nil
}

func (b *Base) failRun(ctx context.Context, id, why string) error {
	_, err := b.Ledger.Move(ctx, id, runs.Failed, func(r *runs.Run) { r.Error = why })
	if err == nil {
		b.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), "failed").Inc()
	}
	return err
}

// safeURL keeps only http(s) links, so a sandbox answer cannot place a
// javascript: or other link in a comment.
func safeURL(u string) string {
	if (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && !strings.ContainsAny(u, " ()<>[]\n") {
		return u
	}
	return ""
}
