package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/evidence"
)

// Pull is the pull request a run opened, as pitcrew follows it: what it
// last read of the pull request, of the CI and reviews on its head, and of
// its diff (evidence).
type Pull struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Head   string `json:"head,omitempty"`
	Base   string `json:"base,omitempty"` // the base commit Head was compared with
	State  string `json:"state"`          // PullOpen, PullMerged, PullClosed, PullGone or PullNotOurs
	// HeadRepo is, for PullNotOurs, the repository its head is in ("" when
	// that repository is gone).
	HeadRepo string    `json:"head_repo,omitempty"`
	MergedAt time.Time `json:"merged_at,omitzero"`
	// Suites are the conclusions of the check suites on Head, by
	// github.SuiteKey ("" while one runs).
	Suites map[string]string `json:"suites,omitempty"`
	// SuitesUnread says why Head's check suites could not be read (what
	// GitHub answered); "" when they were.
	SuitesUnread string `json:"suites_unread,omitempty"`
	// Reviews are each reviewer's latest verdict (approved or
	// changes_requested), by login.
	Reviews map[string]Review `json:"reviews,omitempty"`
	// Checked is the head whose diff the evidence read; CheckRunID its
	// "pitcrew / evidence" check run.
	Checked    string `json:"checked,omitempty"`
	CheckRunID int64  `json:"check_run_id,omitempty"`
	// Unread says why pitcrew could not read the pull request on its last
	// try ("" once it did): what GitHub answered, and whether it tries again.
	Unread string `json:"unread,omitempty"`
	// Creating is the head whose evidence check run is being created.
	Creating   string             `json:"creating,omitempty"`
	Verdict    evidence.Verdict   `json:"verdict,omitempty"`
	NotChecked string             `json:"not_checked,omitempty"`
	Concerns   int                `json:"concerns,omitempty"`
	Notes      int                `json:"notes,omitempty"`
	Findings   []evidence.Finding `json:"findings,omitempty"` // the first MaxPullFindings
	// Verify is the independent verification of the fix on Checked; nil
	// before one was decided on.
	Verify *Verify `json:"verify,omitempty"`
	// TakenOver says a later run named this pull request too and follows
	// it from then on; what this run shows of it stops there.
	TakenOver bool `json:"taken_over,omitempty"`
	// OwnersAsked says the test file's owners were asked to review it
	// (once, whatever GitHub answered).
	OwnersAsked bool `json:"owners_asked,omitempty"`
}

// Verify is the independent verification of a fix on one head of its pull
// request: a separate session runs the test with the failing seed on the
// base and the head, then the after-loop.
type Verify struct {
	Head  string `json:"head"`
	RunID string `json:"run_id,omitempty"` // the verification run; "" when none started
	// Note says why none started, or why it could not verify.
	Note string `json:"note,omitempty"`
	// Result is what its log showed, once it ended.
	Result *evidence.FixCheck `json:"result,omitempty"`
	// InCI says the repository asked for a verification in its own CI
	// (flaky.verify: ci) instead of a separate session; CI is it, once
	// its workflow runs were dispatched.
	InCI bool      `json:"in_ci,omitempty"`
	CI   *CIVerify `json:"ci,omitempty"`
}

// PriorFix is a merged pull request that fixed a key before.
type PriorFix struct {
	Number   int       `json:"number"`
	URL      string    `json:"url"`
	MergedAt time.Time `json:"merged_at"`
}

// Review is a reviewer's latest verdict and when it was given (reviews
// may be delivered out of order).
type Review struct {
	State string    `json:"state"`
	At    time.Time `json:"at"`
}

// AddReview records a review unless a later one of the same reviewer is
// known; a dismissal removes the verdict it dismissed.
func (p *Pull) AddReview(login, state string, at time.Time) {
	cur, known := p.Reviews[login]
	switch {
	case known && cur.At.After(at):
	case state == "dismissed":
		delete(p.Reviews, login)
	case known || len(p.Reviews) < MaxReviewers:
		if p.Reviews == nil {
			p.Reviews = map[string]Review{}
		}
		p.Reviews[login] = Review{State: state, At: at}
	}
}

// The states of a followed pull request.
const (
	PullOpen   = "open"
	PullMerged = "merged"
	PullClosed = "closed"
	PullGone   = "gone" // it no longer exists
	// PullNotOurs is a pull request the agent named whose head is not in
	// the run's repository (a fork): not the agent's, so not followed.
	PullNotOurs = "not_ours"
)

// MaxPullFindings bounds the findings a run keeps of its pull request's
// diff; the check run carries them all. MaxSuites bounds the check suites
// and MaxReviewers the reviewers it remembers.
const (
	MaxPullFindings = 5
	MaxSuites       = 30
	MaxReviewers    = 20
)

// CI sums the check suites up: passed when every one finished green,
// failed when one did not, running while one runs; "" when none reported.
func (p Pull) CI() string {
	if len(p.Suites) == 0 {
		return ""
	}
	running := false
	for _, c := range p.Suites {
		switch c {
		case "success", "neutral", "skipped":
		case "":
			running = true
		default:
			return "failed"
		}
	}
	if running {
		return "running"
	}
	return "passed"
}

// Review sums the reviews up: changes requested when any reviewer's latest
// asks for them, else approved when one approved; "" when neither.
func (p Pull) Review() string {
	approved := false
	for _, r := range p.Reviews {
		if r.State == "changes_requested" {
			return "changes requested"
		}
		approved = approved || r.State == "approved"
	}
	if approved {
		return "approved"
	}
	return ""
}

// SetEvidence records a review of the diff at head.
func (p *Pull) SetEvidence(head string, r evidence.Review, checkRunID int64) {
	p.Checked, p.CheckRunID, p.Verdict, p.NotChecked = head, checkRunID, r.Verdict, r.NotChecked
	p.Concerns, p.Notes, p.Findings = 0, 0, nil
	for _, f := range r.Findings {
		if f.Severity == evidence.Concern {
			p.Concerns++
		} else {
			p.Notes++
		}
	}
	p.Findings = r.Findings[:min(len(r.Findings), MaxPullFindings)]
}

func (l *Ledger) pullKey(repo string, number int) string {
	return fmt.Sprintf("%spull:%s#%d", l.prefix, strings.ToLower(repo), number)
}

// lockPullScript takes a pull request's lock (KEYS[1]) and, in the same
// round trip, reads the run that follows it: ARGV[4] when given, else the
// one the pull request points at (KEYS[2]). With ARGV[5] 'follow', ARGV[4]
// becomes the run the pull request points at and the one it pointed at
// before is returned; with 'ahead', that one is returned and the pointer
// left for the write that releases the lock (a lock taken ahead, to
// follow). It answers {'0'} when the lock is held elsewhere,
// {'none'} (the lock not taken) when no run follows the pull request, else
// {'1', previous, id, state, body, then the run's subjects}.
var lockPullScript = redis.NewScript(`
local id, previous = ARGV[4], ''
if ARGV[5] ~= 'follow' and id == '' then
  id = redis.call('GET', KEYS[2]) or ''
  if id == '' then return {'none'} end
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'0'} end
if ARGV[5] == 'follow' then
  previous = redis.call('SET', KEYS[2], id, 'EX', ARGV[6], 'GET') or ''
elseif ARGV[5] == 'ahead' then
  previous = redis.call('GET', KEYS[2]) or ''
end
local f = redis.call('HMGET', ARGV[3] .. id, 'state', 'json')
local out = {'1', previous, id, f[1] or '', f[2] or ''}
for _, s in ipairs(redis.call('SMEMBERS', ARGV[3] .. id .. ':subjects')) do table.insert(out, s) end
return out`)

// LockedPull is a pull request's lock, held, with the run read under it.
type LockedPull struct {
	// Run is the run read with the lock; zero when none follows the pull
	// request.
	Run Run
	// Previous is, for a lock taken to follow, the run that followed the
	// pull request before ("" when none).
	Previous string

	ledger *Ledger
	held   *held // nil when no lock was taken
	// pointer, for a lock taken ahead to follow, is the pull request's
	// pointer that the write releasing the lock sets to the run.
	pointer string
}

// Unlock releases the lock; later calls, and calls after the write that
// released it (Update), do nothing.
func (p LockedPull) Unlock() {
	if p.held != nil {
		p.held.unlock()
	}
}

// Update is Ledger.Update releasing the lock with the write, in the same
// round trip; the lock stays held (for Unlock) when nothing is written.
// Its callers show the run next: when the run has one subject, the write
// tries its status lock ahead (UpdateShowing).
func (p LockedPull) Update(ctx context.Context, run Run, change func(*Run) error) (Run, error) {
	var show Subject
	if len(run.subjects) == 1 {
		show, _ = ParseSubject(run.subjects[0])
	}
	return p.ledger.update(ctx, run, change, writeAhead{release: p.held, show: show, pointer: p.pointer})
}

// PullFollow says what LockPull reads: the run that follows the pull
// request (ReadFollower), run RunID, or run RunID made the one that
// follows it (Follow): one run follows a pull request, the last that named it.
type PullFollow struct {
	RunID  string
	Follow bool
}

// ReadFollower is the PullFollow that reads whichever run follows the pull request.
var ReadFollower = PullFollow{}

// LockPull takes the lock of pull request number of repo (see Lock), which
// serialises what pitcrew reads and writes of it, and reads the run which
// names, in the same round trip. A run named but not stored is
// ErrNotFound, with the lock released. A lock ctx took ahead for the run
// to follow (the Finisher's, see WithLocksAhead) is handed over without a
// round trip.
func (l *Ledger) LockPull(ctx context.Context, repo string, number int, which PullFollow) (LockedPull, error) {
	if which.Follow {
		if locked, ok := locksAheadIn(ctx).takePull(pullLockName(repo, number), which.RunID); ok {
			return locked, nil
		}
	}
	var res []string
	mode := ""
	if which.Follow {
		mode = "follow"
	}
	h, err := l.lock(ctx, pullLockName(repo, number), time.Minute, 2*time.Minute, func(key, token string) (bool, error) {
		c := l.lockPullCall(repo, number, key, token, which.RunID, mode)
		var err error
		res, err = c.script.Run(ctx, l.rdb, c.keys, c.args...).StringSlice()
		return err == nil && (len(res) >= 5 && res[0] == "1" || len(res) == 1 && res[0] == "none"), err
	})
	if err != nil {
		return LockedPull{}, err
	}
	if res[0] == "none" {
		// Nothing to serialise: the script took no lock.
		_ = h.release(func() error { return nil })
		return LockedPull{ledger: l}, nil
	}
	return l.pullLocked(h, res)
}

func pullLockName(repo string, number int) string {
	return fmt.Sprintf("pull:%s#%d", strings.ToLower(repo), number)
}

// lockPullCall is one attempt at a pull request's lock for token, reading
// run runID (lockPullScript, in mode "", "follow" or "ahead").
func (l *Ledger) lockPullCall(repo string, number int, key, token, runID, mode string) *scriptCall {
	return &scriptCall{script: lockPullScript, keys: []string{key, l.pullKey(repo, number)},
		args: []any{token, time.Minute.Milliseconds(), l.prefix + "run:", runID, mode, int64(Retention / time.Second)}}
}

// pullLocked decodes what lockPullScript read with the lock h took.
func (l *Ledger) pullLocked(h *held, res []string) (LockedPull, error) {
	locked := LockedPull{Previous: res[1], ledger: l, held: h}
	var err error
	if locked.Run, err = decodeRun(res[2], res[3], res[4]); err != nil {
		h.unlock()
		return LockedPull{}, err
	}
	locked.Run.subjects = res[5:]
	return locked, nil
}

// Unfollow makes pull request number of repo followed by no run, if run
// runID follows it: its events and comments then reach no run.
func (l *Ledger) Unfollow(ctx context.Context, repo string, number int, runID string) error {
	return unfollowScript.Run(ctx, l.rdb, []string{l.pullKey(repo, number)}, runID).Err()
}

var unfollowScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// PullRun is the run that opened pull request number of repo; "" when
// pitcrew follows no run there.
func (l *Ledger) PullRun(ctx context.Context, repo string, number int) (string, error) {
	id, err := l.rdb.Get(ctx, l.pullKey(repo, number)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return id, err
}
