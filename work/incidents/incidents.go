// Package incidents turns an outside alert (Datadog, Sentry) into work: one
// run and one tracking issue per incident, whatever the source, opened
// within the repository's daily cap on issues, and a storm of repeated
// alerts kept from becoming a storm of edits.
package incidents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// Incident is one alert of an outside source as the shared incident flow
// takes it: one run and one tracking issue per Key, whatever the source.
type Incident struct {
	Kind  runs.Kind
	Repo  github.Repo
	Inst  int64
	Key   string // from Key
	ID    string // the source's own id of the incident, kept as the run's About
	Title string // what the status comment names, plain text
	// IssueTitle and IssueBody open the tracking issue; both are already
	// Markdown-safe. Label marks it.
	IssueTitle, IssueBody, Label string
	Input                        prompts.AlertInput
	// Renotified, when set, is commented on the tracking issue when the
	// incident's run is already under way.
	Renotified string
}

// RewriteAfter is how often at most a repeated alert rewrites its
// incident's unchanged status comment.
const RewriteAfter = 10 * time.Minute

// alertCooldown is how long an incident's ended run answers for it.
const alertCooldown = 7 * 24 * time.Hour

// Key is the idempotency key of an incident: the job, the
// repository and the source's own id of it.
func Key(kind runs.Kind, repo github.Repo, id string) string {
	return string(kind) + ":" + strings.ToLower(repo.String()) + ":" + id
}

// marker hides the incident's key in its tracking issue, so the
// issue is found again when Redis has forgotten it.
func marker(key string) string { return "<!-- pitcrew:" + key + " -->" }

// Target is where an alert's work goes: the installation and client of
// the repository it names, and the repository's configuration.
type Target struct {
	Inst int64
	GH   github.Client
	Cfg  repoconfig.Config
}

// TargetOf finds the Target of an alert about repo. proceed is false (and
// logged) when pitcrew is not installed there, the file is broken, or
// enabled says the job is off.
func TargetOf(ctx context.Context, b *work.Env, repo github.Repo, enabled func(repoconfig.Config) bool) (t Target, proceed bool, err error) {
	t.Inst, err = b.Clients.InstallationFor(ctx, repo)
	if err != nil || t.Inst == 0 {
		if t.Inst == 0 && err == nil {
			zerolog.Ctx(ctx).Warn().Msg("pitcrew is not installed on the alert's repository")
		}
		return t, false, err
	}
	if t.GH, err = b.Clients.Installation(t.Inst); err != nil {
		return t, false, err
	}
	t.Cfg, proceed, err = b.JobConfig(ctx, t.GH, repo, enabled)
	return t, proceed, err
}

// Start claims the incident's run and shows it on its tracking
// issue, opened only when the run starts or attaches, within the
// repository's daily cap on issues. The caller holds the incident's lock.
func Start(ctx context.Context, b *work.Env, gh github.Client, inc Incident, cfg repoconfig.Config) error {
	repo := inc.Repo.String()
	issue, err := Issue(ctx, b, gh, inc.Repo, inc.Key, inc.Label)
	if err != nil {
		return err
	}
	reserved := false
	if issue == 0 {
		if reserved, err = b.ReserveIssue(ctx, inc.Repo, cfg); !reserved {
			return err
		}
	}
	openIssue := func(ctx context.Context, run runs.Run, claim runs.Claim) (runs.Subject, error) {
		if issue == 0 && claim != runs.ClaimCooldown {
			reserved = false // spent even if the call fails: GitHub may have opened it
			n, err := gh.CreateIssue(ctx, inc.Repo, inc.IssueTitle, inc.IssueBody+"\n"+marker(inc.Key)+"\n", []string{inc.Label})
			if err != nil {
				return runs.Subject{}, err
			}
			if err := b.Ledger.SetTrackingIssue(context.WithoutCancel(ctx), inc.Key, n); err != nil {
				return runs.Subject{}, err
			}
			issue = n
			if _, err := b.Ledger.Update(ctx, run, func(r *runs.Run) error { r.Origin = n; return nil }); err != nil {
				return runs.Subject{}, err
			}
		}
		if issue == 0 {
			return runs.Subject{}, nil
		}
		return runs.Subject{Repo: repo, Issue: issue}, nil
	}
	delivery := queue.TaskID(ctx)
	data, err := json.Marshal(inc.Input) // what /pitcrew retry starts again from
	if err != nil {
		return err
	}
	entry, started, err := b.Runs.Start(ctx, runs.Request{
		Run: runs.Run{Key: inc.Key, Kind: inc.Kind, InstallationID: inc.Inst, Repo: repo, Origin: issue, About: inc.ID, Title: publish.Line(inc.Title, 200),
			Data: data, Delivery: delivery},
		Subject: runs.Subject{Repo: repo, Issue: issue}, OpenSubject: openIssue,
		Cooldown: alertCooldown, DailyLimit: cfg.DailyLimit, Input: inc.Input,
		LastAttempt: queue.LastAttempt(ctx),
	})
	var retry error // a sandbox that did not answer: shown, then tried again
	if errors.Is(err, runs.ErrSandboxWaiting) {
		retry, err = err, nil
	}
	if reserved {
		if err := b.Ledger.ReleaseIssue(context.WithoutCancel(ctx), repo); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("could not give back an unused issue of the daily cap")
		}
	}
	if err != nil || issue == 0 {
		if err == nil {
			zerolog.Ctx(ctx).Info().Str("claim", string(entry.Relation)).Str("note", entry.Note).Msg("no tracking issue for this alert: its run neither starts nor attaches")
		}
		return cmp.Or(err, retry)
	}
	entry.About = inc.Title
	if started == nil && retry == nil && entry.RunID != "" && inc.Renotified != "" {
		// The same incident notified again: record it where people look.
		if _, err := gh.CreateComment(ctx, inc.Repo, issue, inc.Renotified); err != nil {
			return err
		}
	}
	subject := runs.Subject{Repo: repo, Issue: issue}
	next := runs.Status{InstallationID: inc.Inst, Job: string(inc.Kind), Entries: []runs.Entry{entry}}
	if started == nil && retry == nil {
		// A repeated alert of an incident whose issue showed it in the last
		// minutes writes nothing: a storm of alerts is not a storm of edits.
		// Past that, it rewrites the comment (recreating it if deleted).
		st, err := b.Ledger.Status(ctx, subject)
		if err == nil && st.CommentID != 0 && st.Job == next.Job && reflect.DeepEqual(st.Entries, next.Entries) && b.Time().Sub(st.Written) < RewriteAfter {
			return nil
		}
	}
	return cmp.Or(b.Publish.Status(ctx, gh, subject, func(st *runs.Status) { st.Replace(next) }, entry.RunID), retry)
}

// Issue finds the incident's issue (Redis, then the hidden marker
// in issue bodies); 0 when it has none.
func Issue(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, key, label string) (int, error) {
	n, found, err := b.Ledger.TrackingIssue(ctx, key)
	if err != nil || (found && n > 0) {
		return n, err
	}
	if n, err = gh.FindIssue(ctx, repo, label, marker(key), b.BotLogin()); err != nil || n == 0 {
		return 0, err
	}
	return n, b.Ledger.SetTrackingIssue(ctx, key, n)
}

// Retry rebuilds an alert run's prompt from the alert it kept.
func Retry(run runs.Run, _ repoconfig.Config) (any, error) {
	var in prompts.AlertInput
	if err := json.Unmarshal(run.Data, &in); err != nil || in.Repo == "" {
		return nil, errors.New("the run keeps no alert")
	}
	return in, nil
}
