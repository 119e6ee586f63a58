package follow

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// siblingCache keeps a scan's result by repository, commit and cause
// (runs.Ledger's shared cache).
type siblingCache interface {
	Cached(ctx context.Context, name string) ([]byte, bool, error)
	Cache(ctx context.Context, name string, value []byte, ttl time.Duration) error
}

// siblingsTTL is how long a scan of one commit for one cause is kept.
const siblingsTTL = 24 * time.Hour

// scanTimeout bounds the tarball's download and the scan.
const scanTimeout = 30 * time.Second

// scanSiblings adds to a flaky fix's review the repository's tests that
// share its cause (evidence.FindSiblings), read from the tarball of the
// pull request's base commit (on the default branch), once per commit and
// cause. What could not be scanned is said on the review, never an error:
// siblings are advice beside the evidence.
func scanSiblings(ctx context.Context, gh github.Client, cache siblingCache, repo github.Repo, pr github.PullRequest, d evidence.Diff, base map[string]string, r *evidence.Review) {
	cause := evidence.CauseOf(d, base)
	if cache == nil || cause.Empty() || pr.BaseSHA == "" {
		return
	}
	key, _ := json.Marshal(cause)
	name := fmt.Sprintf("siblings:%s:%s:%x", repo, pr.BaseSHA, sha256.Sum256(key))
	var kept struct {
		Siblings []evidence.Sibling
		More     int
		Note     string
	}
	if b, ok, err := cache.Cached(ctx, name); err == nil && ok && json.Unmarshal(b, &kept) == nil {
		r.Siblings, r.MoreSiblings, r.SiblingsNote, r.SiblingsAt = kept.Siblings, kept.More, kept.Note, pr.BaseSHA
		return
	}
	scan, cancel := context.WithTimeout(ctx, scanTimeout)
	defer cancel()
	files, err := gh.TestModules(scan, repo, pr.BaseSHA)
	switch {
	case errors.Is(err, github.ErrTarballCut):
		kept.Note = "scanned in part: the repository is larger than pitcrew reads"
	case err != nil:
		r.SiblingsNote = "not scanned: " + sayTarball(err)
		return // not kept: the next head tries again
	}
	var changed []string
	for _, f := range d.Files {
		changed = append(changed, f.Path())
	}
	kept.Siblings, kept.More = evidence.FindSiblings(cause, files, changed)
	r.Siblings, r.MoreSiblings, r.SiblingsNote, r.SiblingsAt = kept.Siblings, kept.More, kept.Note, pr.BaseSHA
	if b, err := json.Marshal(kept); err == nil {
		_ = cache.Cache(ctx, name, b, siblingsTTL)
	}
}

// sayTarball is why the repository's tarball could not be read.
func sayTarball(err error) string {
	if status := github.StatusOf(err); status != 0 {
		return fmt.Sprintf("GitHub answered %d for the repository's tarball", status)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("the repository's tarball took longer than %s", scanTimeout)
	}
	return "the repository's tarball could not be read"
}

// predict records each sibling in a test as predicted to flake (its row
// on the dashboard, "predicted, not seen yet") and asks for a refresh.
func predict(ctx context.Context, b *work.Env, run runs.Run, pr int, r evidence.Review) error {
	var ps []runs.Predicted
	for _, s := range r.Siblings {
		ref, err := exunit.ParseTestRef(fmt.Sprintf("%s:%d", s.File, s.TestLine))
		if s.TestLine == 0 || err != nil {
			continue // a module's setup: no test to run
		}
		ps = append(ps, runs.Predicted{Key: flaky.Key(run.Repo, ref), Test: ref.String(), Name: s.Test, Why: s.Why, PR: pr, At: b.Time(), Commit: r.SiblingsAt})
	}
	if len(ps) == 0 {
		return nil
	}
	if err := b.Ledger.Predict(ctx, run.Repo, ps); err != nil {
		return err
	}
	b.DashboardChanged(ctx, run.Repo, run.InstallationID)
	return nil
}

// siblingsCache is the cache a scan of siblings keeps its result in, nil
// when the repository turned the scan off (flaky.siblings: false) or its
// configuration cannot be read.
func siblingsCache(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, job evidence.Job) siblingCache {
	if job != evidence.JobFlaky {
		return nil // only a flaky fix has siblings: no configuration to read
	}
	cfg, err := b.LoadConfig(ctx, gh, repo)
	if err != nil || !flaky.Of(cfg).Siblings {
		return nil
	}
	return b.Ledger
}
