package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
)

// Writer writes what subjects show to GitHub: an issue's or pull
// request's status comment, a commit's comment, or a check run, each
// rendered by the renderer of the job the status names.
type Writer struct {
	Ledger *runs.Ledger
	// Renderer is the status renderer of a job (the status's Job).
	Renderer func(job string) runs.Renderer
	Now      func() time.Time // default time.Now
	// Shown, when set, is told of each run Subjects shows: what else
	// shows the run (the repository's dashboard) refreshes too.
	Shown func(ctx context.Context, run runs.Run)
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Status changes the stored status of a subject with change, then
// writes it to GitHub: an issue's status comment (created the first time,
// edited in place after that, recreated if someone deleted it) or a check
// run. The subject's lock makes concurrent updates (two runs of one issue
// ending together) apply one after the other. showing names runs the change
// adds, read with the lock rather than after it.
func (w *Writer) Status(ctx context.Context, gh github.Client, s runs.Subject, change func(*runs.Status), showing ...string) error {
	repo, err := github.ParseRepo(s.Repo)
	if err != nil {
		return err
	}
	st, found, lock, err := w.Ledger.LockStatus(ctx, s, 30*time.Second, time.Minute, showing...)
	if err != nil {
		return fmt.Errorf("locking %s: %w", s, err)
	}
	defer lock.Unlock()

	if change != nil {
		change(&st)
	} else if st.CommentID == 0 && len(st.Entries) == 0 {
		return nil // the issue's own handler has not written its status yet; it will
	}
	byID := map[string]runs.Run{}
	for _, e := range st.Entries {
		if e.RunID == "" {
			continue // nothing started for it (see Entry.Note)
		}
		if r, ok := found[e.RunID]; ok { // read with the status
			byID[e.RunID] = r
		} else if r, err := w.Ledger.Get(ctx, e.RunID); err == nil {
			byID[e.RunID] = r
		} else if !errors.Is(err, runs.ErrNotFound) {
			return err
		}
	}
	if s.IsCheck() {
		return w.writeCheckRun(ctx, gh, repo, s, st, byID, lock)
	}
	view := runs.View{Status: st, Runs: byID, Reports: map[string]string{}, Now: w.now()}
	for id, r := range byID {
		if r.Report {
			if view.Reports[id], err = w.Ledger.Report(ctx, id); err != nil {
				return err
			}
		}
	}
	return w.writeComment(ctx, commentsOn(gh, repo, s), s, st, w.Renderer(st.Job)(view), lock)
}

// comments is how a subject's status comment is created, edited and found
// again: on an issue or pull request, or on a commit.
type comments struct {
	create func(ctx context.Context, body string) (int64, error)
	edit   func(ctx context.Context, id int64, body string) error
	find   func(ctx context.Context) (int64, error)
}

func commentsOn(gh github.Client, repo github.Repo, s runs.Subject) comments {
	if s.IsCommit() {
		return comments{
			create: func(ctx context.Context, body string) (int64, error) {
				return gh.CreateCommitComment(ctx, repo, s.Commit, body)
			},
			edit: func(ctx context.Context, id int64, body string) error {
				return gh.EditCommitComment(ctx, repo, id, body)
			},
			find: func(ctx context.Context) (int64, error) {
				return gh.FindCommitComment(ctx, repo, s.Commit, StatusMarker)
			},
		}
	}
	return comments{
		create: func(ctx context.Context, body string) (int64, error) {
			return gh.CreateComment(ctx, repo, s.Issue, body)
		},
		edit: func(ctx context.Context, id int64, body string) error { return gh.EditComment(ctx, repo, id, body) },
		find: func(ctx context.Context) (int64, error) {
			return gh.FindComment(ctx, repo, s.Issue, StatusMarker)
		},
	}
}

// writeComment edits the subject's status comment, or creates it. Before a
// create, the status records that one is under way, so an attempt that died
// between GitHub's answer and recording it makes the next attempt look for
// the comment instead of making a second one.
func (w *Writer) writeComment(ctx context.Context, c comments, s runs.Subject, st runs.Status, body string, lock *runs.StatusLock) error {
	if st.CommentID != 0 {
		err := c.edit(ctx, st.CommentID, body)
		if !errors.Is(err, github.ErrCommentGone) {
			if err != nil {
				return err
			}
			return lock.SaveAndUnlock(context.WithoutCancel(ctx), st)
		}
		zerolog.Ctx(ctx).Info().Str("issue", s.String()).Msg("status comment was deleted; creating it again")
		st.CommentID, st.Creating = 0, false
	}
	if st.Creating {
		id, err := c.find(ctx)
		if err != nil {
			return err
		}
		if id != 0 {
			st.CommentID, st.Creating = id, false
			return w.writeComment(ctx, c, s, st, body, lock)
		}
	}
	if err := lock.BeforeCreate(ctx, st); err != nil {
		return err
	}
	id, err := c.create(ctx, body)
	if err != nil {
		return err
	}
	st.CommentID, st.Creating = id, false
	return lock.SaveAndUnlock(context.WithoutCancel(ctx), st)
}

// Subjects rewrites the status comment of every issue that shows the run,
// except skip; run as the ledger last wrote it names them without another
// read (runs.Ledger.SubjectsOf).
func (w *Writer) Subjects(ctx context.Context, gh github.Client, run runs.Run, skip runs.Subject) error {
	if w.Shown != nil {
		w.Shown(ctx, run)
	}
	subjects, err := w.Ledger.SubjectsOf(ctx, run)
	if err != nil {
		return err
	}
	// One subject that cannot be written (a deleted issue) must not keep
	// the others from their update.
	var errs []error
	for _, s := range subjects {
		if s == skip {
			continue
		}
		if err := w.Status(ctx, gh, s, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CheckRunName is the name of pitcrew's check run.
const CheckRunName = "pitcrew / flaky tests"

// writeCheckRun creates the subject's check run the first time and
// replaces its output after that, guarding the create as writeComment does.
func (w *Writer) writeCheckRun(ctx context.Context, gh github.Client, repo github.Repo, s runs.Subject, st runs.Status, byID map[string]runs.Run, lock *runs.StatusLock) error {
	title, summary := RenderCheckRun(runs.View{Status: st, Runs: byID, Now: w.now()})
	out := github.CheckOutput{Name: CheckRunName, ExternalID: s.Source, Title: title, Summary: summary}
	if st.CheckRunID == 0 && st.Creating {
		id, err := gh.FindCheckRun(ctx, repo, s.Commit, CheckRunName, s.Source)
		if err != nil {
			return err
		}
		st.CheckRunID = id
	}
	if st.CheckRunID != 0 {
		if err := gh.UpdateCheckRun(ctx, repo, st.CheckRunID, out); err != nil {
			return err
		}
		st.Creating = false
		return lock.SaveAndUnlock(context.WithoutCancel(ctx), st)
	}
	if err := lock.BeforeCreate(ctx, st); err != nil {
		return err
	}
	id, err := gh.CreateCheckRun(ctx, repo, s.Commit, out)
	if err != nil {
		return err
	}
	st.CheckRunID, st.Creating = id, false
	return lock.SaveAndUnlock(context.WithoutCancel(ctx), st)
}
