package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/runs"
)

// The dashboard: one issue per repository listing the tests pitcrew has
// seen flaking, rewritten in place from the ledger, with a box per test
// that starts a fix run when someone with write access ticks it.
const (
	DashboardTitle  = "Flaky tests dashboard"
	DashboardLabel  = "pitcrew:dashboard"
	DashboardMarker = "<!-- pitcrew:dashboard -->"
)

// DashboardView is what a dashboard shows: the repository's most recently
// seen flaky tests, how many there are in all, and a note (a reverted
// tick), already Markdown-safe.
type DashboardView struct {
	Repo  string
	Tests []runs.FlakyTest
	Total int
	Note  string
	// Predicted are the tests predicted to flake next (siblings of a fix):
	// those not seen yet get rows of their own, the others a line.
	Predicted []runs.Predicted
	// Owners are the test files' owners, by path (those looked up).
	Owners map[string]runs.Owners
	// OutOfQuarantine are the tests whose quarantine expired, with when:
	// their CI failures are no longer re-run (flaky.quarantine_days).
	OutOfQuarantine map[string]time.Time
}

// dashboardBudget keeps the body well under GitHub's 65,536 characters:
// tests past it are counted, not listed.
const dashboardBudget = 60000

// TickID is the id a test's box carries in the dashboard: a digest of its
// key, so the body names no key a hand edit could forge into a new one.
func TickID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

func tickMarker(key string) string { return "<!-- pitcrew:tick:" + TickID(key) + " -->" }

// tickedBox is a ticked task-list item carrying a tick marker.
var tickedBox = regexp.MustCompile(`^\s{0,3}[-*+] \[[xX]\] .*<!-- pitcrew:tick:([0-9a-f]{12}) -->\s*$`)

// maxTicks bounds the ticks one edit of the body is read for.
const maxTicks = 20

// Ticks reads the ids of the ticked boxes of a dashboard body (at most
// maxTicks, each once). It reads nothing else: whatever else a hand edit
// wrote is rewritten from the ledger.
func Ticks(body string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		m := tickedBox.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		if ids = append(ids, m[1]); len(ids) == maxTicks {
			break
		}
	}
	return ids
}

// RenderDashboard writes the dashboard's body. It holds no time relative
// to now (only dates), so a refresh that has nothing new writes the same
// body.
func RenderDashboard(v DashboardView) string {
	var b strings.Builder
	b.WriteString(DashboardMarker + "\n**pitcrew** · flaky tests\n\n")
	b.WriteString("The tests pitcrew has seen fail and then pass (a CI re-run, a retried job) or seen named in an issue labelled as flaky, over the last 90 days, most recently seen first. " +
		"pitcrew rewrites this issue from its own records; other edits are undone.\n\n" +
		"**Tick a test's box to start a fix run for it**: for people with write access, when no run is live on it, within the daily limit.\n\n")
	if v.Note != "" {
		b.WriteString("> " + v.Note + "\n\n")
	}
	predicted := map[string]runs.Predicted{}
	for _, p := range v.Predicted {
		predicted[p.Key] = p
	}
	if len(v.Tests) == 0 {
		b.WriteString("No test has flaked in the last 90 days.\n")
	}
	shown := 0
	for _, t := range v.Tests {
		item := dashboardItem(t)
		if o, ok := v.Owners[strings.SplitN(t.Test(), ":", 2)[0]]; ok && OwnersNamed(&o) != "" {
			item += "  - " + OwnersNamed(&o) + ".\n"
		}
		if at, ok := v.OutOfQuarantine[t.Key]; ok {
			item += "  - ⏳ Out of quarantine since " + day(at) + ": its CI failures are no longer re-run; tick the box to start a fix run, which quarantines it again.\n"
		}
		if p, ok := predicted[t.Key]; ok {
			item += "  - " + predictedLine(v.Repo, p) + "\n"
			delete(predicted, t.Key)
		}
		if b.Len()+len(item) > dashboardBudget {
			break
		}
		b.WriteString(item)
		shown++
	}
	if more := v.Total - shown; more > 0 {
		fmt.Fprintf(&b, "\nand %d more, seen less recently.\n", more)
	}
	writePredicted(&b, v.Repo, v.Predicted, predicted)
	return b.String()
}

// writePredicted lists the predicted tests not seen yet, in order.
func writePredicted(b *strings.Builder, repo string, all []runs.Predicted, unseen map[string]runs.Predicted) {
	if len(unseen) == 0 {
		return
	}
	b.WriteString("\n### Predicted, not seen yet\n\nTests that share the cause of a fix pitcrew followed, and may flake next; tick one to start a fix run before it does.\n\n")
	for _, p := range all {
		if _, ok := unseen[p.Key]; !ok {
			continue
		}
		item := fmt.Sprintf("- [ ] %s", Code(p.Test, 300))
		if p.Name != "" {
			item += " " + Text(p.Name, 200)
		}
		item += " " + tickMarker(p.Key) + "\n  - " + predictedLine(repo, p) + "\n"
		if p.Run != nil {
			item += "  - " + dashboardRun(p.Run) + "\n"
		}
		if b.Len()+len(item) > dashboardBudget {
			return
		}
		b.WriteString(item)
	}
}

// predictedLine says when and from which fix a test was predicted, with
// a link to the test at the commit scanned.
func predictedLine(repo string, p runs.Predicted) string {
	at := ""
	if file, line, ok := strings.Cut(p.Test, ":"); ok && p.Commit != "" {
		if n, err := strconv.Atoi(line); err == nil {
			at = fmt.Sprintf(" ([the test](%s))", SafeURL(weburl.Line(repo, p.Commit, file, n)))
		}
	}
	return fmt.Sprintf("Predicted on %s from [PR #%d](%s)%s: %s.", day(p.At), p.PR, SafeURL(weburl.Pull(repo, p.PR)), at, Text(p.Why, 200))
}

func dashboardItem(t runs.FlakyTest) string {
	s := t.Sighting
	var b strings.Builder
	fmt.Fprintf(&b, "- [ ] %s", Code(t.Test(), 300))
	if s.Name != "" {
		fmt.Fprintf(&b, " %s", Text(s.Name, 200))
		if s.Module != "" {
			fmt.Fprintf(&b, " (%s)", Code(s.Module, 200))
		}
	}
	b.WriteString(" " + tickMarker(t.Key) + "\n")
	fmt.Fprintf(&b, "  - Seen %d %s", s.Count, Plural(int(s.Count), "time", "times"))
	if s.Commits > 0 {
		fmt.Fprintf(&b, " on %d %s", s.Commits, Plural(int(s.Commits), "commit", "commits"))
	}
	fmt.Fprintf(&b, ", first on %s, last on %s", day(s.FirstSeen), day(s.LastSeen))
	if len(s.Commit) >= 7 {
		fmt.Fprintf(&b, " at `%s`", s.Commit[:7])
	}
	if u := SafeURL(s.Where); u != "" {
		what := "CI run"
		if strings.Contains(u, "/issues/") {
			what = "issue"
		}
		fmt.Fprintf(&b, " in [%s](%s)", what, u)
	}
	b.WriteString(".\n  - " + dashboardRun(t.Run) + "\n")
	return b.String()
}

func day(t time.Time) string { return t.UTC().Format("2 Jan 2006") }

// dashboardRun says where the test's run is.
func dashboardRun(r *runs.Run) string {
	if r == nil {
		return "No run yet: tick the box to start one."
	}
	link := ""
	if r.SessionURL != "" {
		link = fmt.Sprintf(" ([run](%s))", r.SessionURL)
	}
	back := ""
	if f := r.PriorFix; f != nil {
		back = fmt.Sprintf("↩️ came back after [PR #%d](%s) (merged on %s). ", f.Number, f.URL, day(f.MergedAt))
	}
	switch r.State {
	case runs.Queued:
		return back + "Run: 🕓 queued; the agent starts shortly."
	case runs.Started:
		return back + fmt.Sprintf("Run: 🔄 the agent is working on it since %s UTC%s.", r.StartedAt.UTC().Format("2 Jan 15:04"), link) + pullLine(*r)
	case runs.Failed:
		return back + fmt.Sprintf("Run: ❌ failed on %s: %s%s. Tick the box to start a new one.", day(r.EndedAt), orDefault(r.Error, "no reason was given"), link)
	}
	return back + fmt.Sprintf("Run, ended on %s: ", day(r.EndedAt)) + describeResult(*r, link)
}
