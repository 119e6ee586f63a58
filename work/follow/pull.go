// Package follow follows what a run leads to. The pull request a run
// opened is followed: read when the run ends, then updated by its events
// (pushes, CI, reviews, merge), its diff checked on each head, and a flaky
// fix's head verified by a separate session. What people answer the run
// (a review, a comment on its pull request, /pitcrew open-pr) goes back to
// its session as a follow-up.
package follow

import (
	"context"
	"errors"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// Follows reports whether run names a pull request of its repository
// that its job follows and pitcrew does not follow yet, or whose evidence
// check run an earlier attempt began to create and did not record.
func Follows(jobs *work.Registry, run runs.Run) bool {
	followed := jobs.Of(run.Kind).Evidence != "" || len(run.FollowUps) > 0 // a profiling run asked to open its change
	unfinished := run.PR == nil || (run.PR.Creating != "" || run.PR.Unread != "") && !run.PR.TakenOver
	return run.State.Terminal() && unfinished && followed && weburl.PullNumber(run.PullRequest(), run.Repo) > 0
}

// Next is the number of the pull request an ended run's refresh
// follows next (Pull), 0 when none.
func Next(jobs *work.Registry, run runs.Run) int {
	if j, _ := jobs.Job(run.Kind); !Follows(jobs, run) || j.Ended != nil {
		return 0
	}
	return weburl.PullNumber(run.PullRequest(), run.Repo)
}

// News is what an event says of a followed pull request; Reread says
// the pull request (and, on a new head, its diff) must be read again;
// Apply, when set, changes the pull request as the ledger keeps it.
type News struct {
	Reread bool
	Apply  func(*runs.Pull)
}

// Pull starts following the pull request run names: remembers it as
// the run's, then reads it (Read). The caller shows the run.
func Pull(ctx context.Context, b *work.Env, gh github.Client, run runs.Run) (runs.Run, error) {
	n := weburl.PullNumber(run.PullRequest(), run.Repo)
	locked, err := b.Ledger.LockPull(ctx, run.Repo, n, runs.PullFollow{RunID: run.ID, Follow: true})
	if err != nil {
		return run, err
	}
	defer locked.Unlock()
	news := News{Reread: true}
	if locked.Previous != "" && locked.Previous != run.ID {
		inherited, err := handOver(ctx, b, gh, locked.Previous, n)
		if err != nil {
			return run, err
		}
		if inherited != nil {
			// The same pull request: its head's evidence check run and
			// verification carry over instead of being made again.
			news.Apply = func(p *runs.Pull) {
				if p.Head == "" {
					*p = *inherited
					p.TakenOver = false
				}
			}
		}
	}
	if run, err = readLocked(ctx, b, gh, locked, n, news); err != nil {
		return run, err
	}
	return askOwners(ctx, b, gh, run)
}

// handOver tells the run that followed pull request number before that a
// later run took it over, and shows it so, so that its comment says so
// instead of going stale. It returns the pull request as that run knew it
// (nil when it knew none).
func handOver(ctx context.Context, b *work.Env, gh github.Client, previous string, number int) (*runs.Pull, error) {
	run, err := b.Ledger.Get(ctx, previous)
	if errors.Is(err, runs.ErrNotFound) || err == nil && (run.PR == nil || run.PR.Number != number || run.PR.State == runs.PullGone) {
		return nil, nil
	}
	if err != nil || run.PR.TakenOver {
		return run.PR, err
	}
	if run, err = b.Ledger.Update(ctx, run, func(r *runs.Run) error {
		if r.PR != nil {
			r.PR.TakenOver = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return run.PR, b.Publish.Subjects(ctx, gh, run, runs.Subject{})
}

// Update applies an event's news to the pull request number of repo,
// if a run follows it, and shows the run where it is shown.
func Update(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, number int, news News) error {
	locked, err := b.Ledger.LockPull(ctx, repo.String(), number, runs.ReadFollower)
	if err != nil {
		return err
	}
	run := locked.Run
	if run.ID != "" {
		run, err = readLocked(ctx, b, gh, locked, number, news)
	}
	locked.Unlock()
	if err != nil || run.ID == "" {
		return err
	}
	if run, err = Verify(ctx, b, gh, run); err != nil {
		return err
	}
	return b.Publish.Subjects(ctx, gh, run, runs.Subject{})
}

// Read updates run runID's pull request under the pull request's
// lock, on the run as stored (readLocked).
func Read(ctx context.Context, b *work.Env, gh github.Client, repoName, runID string, number int, news News) (runs.Run, error) {
	locked, err := b.Ledger.LockPull(ctx, repoName, number, runs.PullFollow{RunID: runID})
	if err != nil {
		return runs.Run{}, err
	}
	defer locked.Unlock()
	if locked.Run.ID == "" {
		return runs.Run{}, runs.ErrNotFound
	}
	return readLocked(ctx, b, gh, locked, number, news)
}

// readLocked updates the run read with the pull request's lock, which
// its last write releases: the news first, then, when asked, the pull
// request, its check suites and, for a head not checked yet, its diff with
// the "pitcrew / evidence" check run on that head.
func readLocked(ctx context.Context, b *work.Env, gh github.Client, locked runs.LockedPull, number int, news News) (runs.Run, error) {
	run := locked.Run
	repo, err := github.ParseRepo(run.Repo)
	if err != nil {
		return run, err
	}
	p := runs.Pull{Number: number, URL: weburl.Pull(run.Repo, number), State: runs.PullOpen}
	if run.PR != nil {
		p = *run.PR
	}
	if news.Apply != nil {
		news.Apply(&p)
	}
	if news.Reread || run.PR == nil {
		review, err := readPull(ctx, b, gh, repo, run, &p)
		if err == nil && review != nil {
			run, err = postEvidence(ctx, b, gh, repo, run, &p, *review)
		}
		if err != nil {
			return shownRetrying(ctx, locked, run, p, err)
		}
	}
	run, err = locked.Update(ctx, run, savePull(p))
	if err == nil && p.State == runs.PullNotOurs {
		err = b.Ledger.Unfollow(ctx, run.Repo, number, run.ID) // its events and comments reach no run
	}
	return run, err
}

// shownRetrying records, before the task's retry, that the pull request
// could not be read on this try and why, so the run's comment says so
// instead of nothing; it returns err for the retry. A head whose check run
// was not being created is read again whole on the retry.
func shownRetrying(ctx context.Context, locked runs.LockedPull, run runs.Run, p runs.Pull, err error) (runs.Run, error) {
	if ctx.Err() != nil {
		return run, err
	}
	p.Unread = "GitHub did not answer (" + github.Describe(err) + "); pitcrew tries again"
	if p.Creating == "" {
		p.Head = ""
	}
	if updated, uerr := locked.Update(ctx, run, savePull(p)); uerr == nil {
		run = updated
	}
	return run, err
}

// savePull is the change that records p as the run's pull request,
// keeping a hand-over another run made meanwhile.
func savePull(p runs.Pull) func(*runs.Run) error {
	return func(r *runs.Run) error {
		p.TakenOver = p.TakenOver || r.PR != nil && r.PR.TakenOver
		r.PR = &p
		return nil
	}
}

// readPull reads the pull request run opened, and, on a head it has not
// seen, the head's check suites and the review of its diff, which the
// caller posts; nil when the head was checked already.
func readPull(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, run runs.Run, p *runs.Pull) (*evidence.Review, error) {
	pr, err := gh.PullRequest(ctx, repo, p.Number)
	if errors.Is(err, github.ErrPullGone) {
		p.State = runs.PullGone
		return nil, nil
	}
	if why := unreadable(ctx, err); why != "" {
		p.Unread = why + " for the pull request"
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p.Unread = ""
	switch {
	case flaky.CommitOrigin{RepoFullName: run.Repo, HeadRepo: pr.HeadRepo}.Ownership() != flaky.Ours:
		// A fork's head (or one whose repository is gone) is not the
		// agent's work, whatever its answer says: not checked, verified
		// or talked to.
		p.State, p.HeadRepo = runs.PullNotOurs, pr.HeadRepo
		return nil, nil
	case pr.Merged:
		p.State, p.MergedAt = runs.PullMerged, pr.MergedAt
	case pr.State == "closed":
		p.State = runs.PullClosed
	default:
		p.State = runs.PullOpen
	}
	if pr.HeadSHA == "" || pr.HeadSHA == p.Checked {
		return nil, nil
	}
	if pr.HeadSHA != p.Head {
		p.Head, p.Base = pr.HeadSHA, pr.BaseSHA
		if err := readSuites(ctx, b, gh, repo, p); err != nil {
			return nil, err
		}
	}
	job := b.Jobs.Of(run.Kind).Evidence
	if job == "" {
		return nil, nil // a job without reviewer rules: its pull request is followed, its diff not checked
	}
	review, err := checkDiff(ctx, gh, siblingsCache(ctx, b, gh, repo, job), repo, pr, job)
	if err != nil {
		return nil, err
	}
	if err := predict(ctx, b, run, p.Number, review); err != nil {
		return nil, err
	}
	return &review, nil
}

// readSuites reads the check suites of p's head. One GitHub will not
// show (or did not show on the task's last try) is said on the pull
// request instead: the evidence is checked all the same.
func readSuites(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, p *runs.Pull) error {
	suites, err := gh.HeadSuites(ctx, repo, p.Head)
	p.Suites, p.SuitesUnread = map[string]string{}, ""
	if why := unreadable(ctx, err); why != "" {
		p.SuitesUnread = why
		return nil
	}
	if err != nil {
		return err
	}
	for k, v := range suites {
		if !strings.HasPrefix(k, b.AppSlug+"/") && len(p.Suites) < runs.MaxSuites { // pitcrew's own check runs are not the CI
			p.Suites[k] = v
		}
	}
	return nil
}

// postEvidence posts the review of the head's diff as its evidence check
// run. The head is marked in the ledger first, so that an attempt that
// created the check run but could not record it is followed by a lookup
// of that check run, not by a second one.
func postEvidence(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, run runs.Run, p *runs.Pull, review evidence.Review) (runs.Run, error) {
	job := b.Jobs.Of(run.Kind).Evidence
	out := evidenceOutput(job, run, p.Number, review)
	var id int64
	var err error
	if p.Creating == p.Head {
		if id, err = gh.FindCheckRun(ctx, repo, p.Head, out.Name, out.ExternalID); err != nil {
			return run, err
		}
	}
	if id == 0 {
		p.Creating = p.Head
		if run, err = b.Ledger.Update(ctx, run, savePull(*p)); err != nil {
			return run, err
		}
		if id, err = gh.CreateCheckRun(ctx, repo, p.Head, out); err != nil {
			return run, err
		}
	}
	p.Creating = ""
	p.SetEvidence(p.Head, review, id)
	return run, nil
}

// evidenceOutput is the evidence check run of a pull request run opened:
// the review of its diff, then what the run's own log shows.
func evidenceOutput(job evidence.Job, run runs.Run, pr int, review evidence.Review) github.CheckOutput {
	return publish.WithSiblings(publish.WithRunLog(publish.RenderEvidence(job, pr, review), job, run), run.Repo, review)
}
