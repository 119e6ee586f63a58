package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/runs"
)

// updateStatus changes the stored status of an issue with change, then
// writes its status comment: created the first time, edited in place after
// that, recreated if someone deleted it. The issue's lock makes concurrent
// updates (two runs of one issue ending together) apply one after the other.
func (b *Base) updateStatus(ctx context.Context, gh GitHub, s runs.Subject, change func(*runs.Status)) error {
	repo, err := ParseRepo(s.Repo)
	if err != nil {
		return err
	}
	unlock, err := b.Ledger.Lock(ctx, "issue:"+s.String(), time.Minute, 30*time.Second)
	if err != nil {
		return fmt.Errorf("locking %s: %w", s, err)
	}
	defer unlock()

	st, err := b.Ledger.Status(ctx, s)
	if err != nil {
		return err
	}
	if change != nil {
		change(&st)
	} else if st.CommentID == 0 && len(st.Entries) == 0 {
		return nil // the issue's own handler has not written its status yet; it will
	}
	byID := map[string]runs.Run{}
	for _, e := range st.Entries {
		if r, err := b.Ledger.Get(ctx, e.RunID); err == nil {
			byID[e.RunID] = r
		} else if !errors.Is(err, runs.ErrNotFound) {
			return err
		}
	}
	body := RenderStatus(st, byID, b.now())

	if st.CommentID != 0 {
		err := gh.EditComment(ctx, repo, st.CommentID, body)
		if err == nil {
			return b.Ledger.SaveStatus(ctx, s, st)
		}
		if !errors.Is(err, ErrCommentGone) {
			return err
		}
		logFor(ctx).Info().Str("issue", s.String()).Msg("status comment was deleted; creating it again")
		st.CommentID = 0
	} else if n, _ := asynq.GetRetryCount(ctx); n > 0 {
		// An earlier attempt may have created the comment and died before
		// recording it; look before making a second one.
		if st.CommentID, err = gh.FindComment(ctx, repo, s.Issue, StatusMarker); err != nil {
			return err
		}
		if st.CommentID != 0 {
			if err := gh.EditComment(ctx, repo, st.CommentID, body); err != nil {
				return err
			}
			return b.Ledger.SaveStatus(ctx, s, st)
		}
	}
	if st.CommentID, err = gh.CreateComment(ctx, repo, s.Issue, body); err != nil {
		return err
	}
	return b.Ledger.SaveStatus(ctx, s, st)
}

// publishToSubjects rewrites the status comment of every issue that shows
// the run, except skip.
func (b *Base) publishToSubjects(ctx context.Context, gh GitHub, runID string, skip runs.Subject) error {
	subjects, err := b.Ledger.Subjects(ctx, runID)
	if err != nil {
		return err
	}
	for _, s := range subjects {
		if s == skip {
			continue
		}
		if err := b.updateStatus(ctx, gh, s, nil); err != nil {
			return err
		}
	}
	return nil
}
