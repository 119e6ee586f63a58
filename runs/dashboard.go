package runs

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Dashboard is what the ledger keeps of a repository's flaky-tests
// dashboard issue: its number, a digest of the body last written (a
// refresh that would write the same body writes nothing), and the note
// the next refresh shows (a tick that was reverted, and why).
type Dashboard struct {
	Issue  int
	Digest string
	Note   string    // Markdown-safe
	NoteAt time.Time // when the note was set; it is shown for a day
}

func (l *Ledger) dashboardKey(repo string) string {
	return l.prefix + "dashboard:" + strings.ToLower(repo)
}

// DashboardLock is the lock a dashboard's writer holds (Ledger.Lock).
func DashboardLock(repo string) string { return "dashboard:" + strings.ToLower(repo) }

// Dashboard reads repo's dashboard record; the zero Dashboard when none.
func (l *Ledger) Dashboard(ctx context.Context, repo string) (Dashboard, error) {
	h, err := l.rdb.HGetAll(ctx, l.dashboardKey(repo)).Result()
	if err != nil {
		return Dashboard{}, err
	}
	n, _ := strconv.Atoi(h["issue"])
	at, _ := strconv.ParseInt(h["note_at"], 10, 64)
	return Dashboard{Issue: n, Digest: h["digest"], Note: h["note"], NoteAt: time.Unix(at, 0).UTC()}, nil
}

// SaveDashboard records repo's dashboard. It is kept as long as the
// repository's sightings are (SightingsKept).
func (l *Ledger) SaveDashboard(ctx context.Context, repo string, d Dashboard) error {
	k := l.dashboardKey(repo)
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "issue", d.Issue, "digest", d.Digest, "note", d.Note, "note_at", d.NoteAt.Unix())
		p.Expire(ctx, k, SightingsKept)
		return nil
	})
	return err
}

// DashboardEdited records that someone else edited repo's dashboard
// issue: its body is no longer the one last written, so the next refresh
// writes it whatever the digest says. A note, when given, is shown from
// then on (for a day).
func (l *Ledger) DashboardEdited(ctx context.Context, repo, note string) error {
	k := l.dashboardKey(repo)
	if note == "" {
		return l.rdb.HSet(ctx, k, "digest", "").Err()
	}
	return l.rdb.HSet(ctx, k, "digest", "", "note", note, "note_at", l.now().Unix()).Err()
}
