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
	Issue        int
	Installation int64 // the installation it was last written with
	Digest       string
	Note         string    // Markdown-safe
	NoteAt       time.Time // when the note was set; it is shown for a day
	// Edits counts the edits of the issue by others (DashboardEdited), so
	// a refresh that read the record before one does not record its body
	// as the issue's.
	Edits int64
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
	edits, _ := strconv.ParseInt(h["edits"], 10, 64)
	inst, _ := strconv.ParseInt(h["inst"], 10, 64)
	return Dashboard{Issue: n, Installation: inst, Digest: h["digest"], Note: h["note"], NoteAt: time.Unix(at, 0).UTC(), Edits: edits}, nil
}

// saveDashboardScript records the issue and the body a refresh wrote.
// An edit by someone else since the refresh read the record (edits moved)
// keeps the digest empty, so the next refresh writes again, and keeps the
// note that edit set; otherwise an expired note (ARGV[4]) is dropped.
var saveDashboardScript = redis.NewScript(`
local edits = redis.call('HGET', KEYS[1], 'edits') or '0'
redis.call('HSET', KEYS[1], 'issue', ARGV[1], 'inst', ARGV[6])
if edits == ARGV[3] then
  redis.call('HSET', KEYS[1], 'digest', ARGV[2])
  if ARGV[4] == '1' then redis.call('HDEL', KEYS[1], 'note', 'note_at') end
else
  redis.call('HSET', KEYS[1], 'digest', '')
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
`)

// SaveDashboard records the issue and the digest of the body a refresh
// that read d wrote, dropping its note when dropNote. It is kept as long
// as the repository's sightings are (SightingsKept).
func (l *Ledger) SaveDashboard(ctx context.Context, repo string, d Dashboard, dropNote bool) error {
	drop := "0"
	if dropNote {
		drop = "1"
	}
	return saveDashboardScript.Run(ctx, l.rdb, []string{l.dashboardKey(repo)}, d.Issue, d.Digest, d.Edits, drop, int64(SightingsKept/time.Second), d.Installation).Err()
}

// DashboardEdited records that someone else edited repo's dashboard
// issue: its body is no longer the one last written, so the next refresh
// writes it whatever the digest says. A note, when given, is shown from
// then on (for a day).
func (l *Ledger) DashboardEdited(ctx context.Context, repo, note string) error {
	k := l.dashboardKey(repo)
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, k, "edits", 1)
		if note == "" {
			p.HSet(ctx, k, "digest", "")
		} else {
			p.HSet(ctx, k, "digest", "", "note", note, "note_at", l.now().Unix())
		}
		return nil
	})
	return err
}
