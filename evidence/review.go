package evidence

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Severity says how much a finding asks of the reviewer.
type Severity string

// Severities, strongest first.
const (
	Concern Severity = "concern" // looks like what the job must not do: read it before merging
	Note    Severity = "note"    // may be right, worth a look
)

// Verdict sums a review up.
type Verdict string

// Verdicts: the strongest finding's severity, or clean.
const (
	VerdictConcern Verdict = "concern"
	VerdictNote    Verdict = "note"
	VerdictClean   Verdict = "clean"
)

// Job names the rule set: what a fix of that job must not do.
type Job string

// The rule sets.
const (
	JobFlaky Job = "flaky"
	JobAlert Job = "alert"
)

// Finding is one rule that matched: where, the changed line quoted, and
// why it matters.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"` // in the new file; in the old one for removed lines
	Text     string   `json:"text"` // the changed line(s), trimmed
	Why      string   `json:"why"`
	// Construct is the Elixir construct the rule read (call, assertion,
	// test, attribute, use, plug, function, config).
	Construct string `json:"construct,omitempty"`
}

// constructs names what each rule reads.
var constructs = map[string]string{
	"sleep-added": "call", "sleep-lengthened": "call", "receive-timeout-raised": "call", "call-timeout-raised": "call",
	"wait-default-raised": "call", "retry-loop": "call", "polling": "call", "timer-stretched": "call",
	"concurrency-reduced": "call", "bound-loosened": "assertion", "assertion-deleted": "assertion",
	"assertion-weakened": "assertion", "refute-narrowed": "call", "rescue-around-assertion": "assertion", "rescue-in-test": "test",
	"test-deleted": "test", "test-skipped": "test", "test-timeout-raised": "test", "tag-excluded": "test",
	"timeout-attribute-raised": "attribute", "async-disabled": "use", "plug-changed": "plug", "plug-removed": "plug",
	"pipeline-changed": "plug", "authorization-changed": "function", "check-removed": "function",
	"default-changed": "function", "role-changed": "function", "privileged-bypass": "function",
	"ci-retry": "config", "failure-ignored": "config", "not-parsed": "file",
	"switched-off-in-tests": "config", "test-tagged-flaky": "test", "assertion-conditional": "assertion", "seed-fixed": "config", "property-weakened": "call", "authorization-rescued": "function", "error-swallowed": "function",
}

// Review is what the rules found in a diff.
type Review struct {
	Verdict  Verdict   `json:"verdict"`
	Findings []Finding `json:"findings"`
	// NotChecked says what of the diff was not read and why (too large,
	// cut short, only binary files, or what GitHub answered instead of
	// it); the verdict is then never clean. Findings, when any, are
	// those of the part that was read.
	NotChecked string `json:"not_checked,omitempty"`
	// Siblings are the repository's tests that share a flaky fix's cause
	// (FindSiblings), scanned at commit SiblingsAt; MoreSiblings counts
	// those past MaxSiblings, SiblingsNote says what was not scanned.
	Siblings     []Sibling `json:"siblings,omitempty"`
	MoreSiblings int       `json:"more_siblings,omitempty"`
	SiblingsAt   string    `json:"siblings_at,omitempty"`
	SiblingsNote string    `json:"siblings_note,omitempty"`
}

// Check applies the job's rules to a parsed diff.
func Check(d Diff, job Job) Review { return CheckFiles(d, job, nil, nil) }

// CheckWithHead is Check with some files as they are at the pull
// request's head (path to content; HeadReads says which help): a rule
// that looks for what the diff does not show, such as the global state a
// test module touches outside its hunks, reads the whole file.
func CheckWithHead(d Diff, job Job, head map[string]string) Review {
	return CheckFiles(d, job, nil, head)
}

// CheckFiles is Check with the changed files as they are on both sides,
// where they could be read (path to content; FileReads says which): each
// Elixir file is then read as code whole, the test a line is in and the
// call it belongs to known; a file only the hunks show is read from them.
func CheckFiles(d Diff, job Job, base, head map[string]string) Review {
	if d.TooLarge {
		return Review{}.Unread(fmt.Sprintf(
			"not checked: too large (%d files, %d changed lines read; the bounds are %d files and %d changed lines)",
			d.FilesSeen, d.Lines, MaxFiles, MaxChangedLine))
	}
	rules := flakyRules
	if job == JobAlert {
		rules = alertRules
	}
	var changes []*change
	var unparsed []Finding
	added := map[string]int{} // the lines every file adds, by movedKey
	for _, f := range d.Files {
		ci := ciFile(f, head[f.Path()])
		if f.Binary || !elixirFile(f.Path()) && !elixirFile(f.OldPath) && !ci {
			continue
		}
		elixir := elixirFile(f.Path())
		headLines := wholeLines(head[f.Path()], elixir)
		docs := wholeDocs{}
		if elixir {
			docs = wholeDocs{base: heredocLines(wholeLines(base[f.OldPath], true)), head: heredocLines(headLines)}
		}
		c := newFileChange(f, docs)
		c.ci = ci
		for k, n := range c.ownAdded {
			added[k] += n
		}
		if headLines != nil {
			c.readHead(headLines)
		}
		if elixirFile(f.Path()) {
			c.readCode(base[f.OldPath], head[f.Path()])
			unparsed = append(unparsed, c.unparsed()...)
		}
		changes = append(changes, &c)
	}
	out := unparsed
	wide := readDiffWide(changes, head)
	for _, c := range changes {
		c.diff = wide
		// A line removed here and added in another file moved there.
		c.movedTo = func(text string) bool { k := movedKey(text); return added[k]-c.ownAdded[k] > 0 }
	}
	found := runRules(changes, rules)
	if job == JobAlert {
		renamed := renamedOnly(changes)
		found = slices.DeleteFunc(found, func(f Finding) bool { return renamed[f.File] })
	}
	out = append(out, found...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Severity != out[j].Severity {
			return out[i].Severity == Concern
		}
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	for i := range out {
		out[i].Construct = constructs[out[i].Rule]
	}
	r := Review{Verdict: VerdictClean, Findings: dedupe(out)}
	for _, f := range r.Findings {
		if f.Severity == Concern {
			r.Verdict = VerdictConcern
			break
		}
		r.Verdict = VerdictNote
	}
	switch {
	case d.Cut != "":
		r = r.Unread("not read whole: the diff was cut short (" + d.Cut + ")")
	case len(d.Files) > 0 && binaryOnly(d):
		r = r.Unread(fmt.Sprintf("not checked: the diff holds only binary files (%d), no text to read", len(d.Files)))
	}
	return r
}

// Unread is the review with why part or all of the diff was not read:
// never clean, whatever the part read showed.
func (r Review) Unread(why string) Review {
	r.NotChecked = why
	if r.Verdict == VerdictClean || r.Verdict == "" {
		r.Verdict = VerdictNote
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	return r
}

func binaryOnly(d Diff) bool {
	for _, f := range d.Files {
		if !f.Binary {
			return false
		}
	}
	return true
}

// movedKey is a line as moving it keeps it: its code, without
// indentation or module qualifiers (a moved test may call Repo.get where
// it called MyApp.Repo.get, under an alias).
func movedKey(text string) string { return movedKeyOf(code(text)) }

// movedKeyOf is movedKey of a line's code (Line.code).
func movedKeyOf(code string) string {
	code = strings.TrimSpace(code)
	if !strings.Contains(code, ".") {
		return code
	}
	// Module qualifiers (Foo.Bar.) dropped by hand: a regexp on every
	// line of a diff at the bound costs too much.
	var b strings.Builder
	for i := 0; i < len(code); {
		if c := code[i]; c >= 'A' && c <= 'Z' && (i == 0 || !isWordByte(code[i-1])) {
			j := i
			for j < len(code) && isWordByte(code[j]) {
				j++
			}
			if j < len(code) && code[j] == '.' {
				i = j + 1
				continue
			}
		}
		b.WriteByte(code[i])
		i++
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// dedupe keeps one finding per rule and line.
func dedupe(in []Finding) []Finding {
	out := []Finding{}
	seen := map[string]bool{}
	for _, f := range in {
		k := fmt.Sprintf("%s\x00%s\x00%d", f.Rule, f.File, f.Line)
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// elixirFile is Elixir source or a template with code.
func elixirFile(p string) bool {
	return strings.HasSuffix(p, ".ex") || strings.HasSuffix(p, ".exs")
}

// configFile is where test runs are configured outside Elixir: CI
// workflows and configurations (YAML under .github/ and the other CIs'
// folders, or at the root), the services the tests use (docker compose),
// Makefiles, and scripts that run mix test.
func configFile(p string) bool {
	yaml := yamlFile(p)
	if yaml && (!strings.Contains(p, "/") || strings.Contains(p, "compose")) {
		return true // .travis.yml, .drone.yml, bitbucket-pipelines.yml, docker-compose.yml
	}
	for _, dir := range []string{".github/", ".circleci/", ".buildkite/", ".semaphore/", ".gitlab/", ".woodpecker/"} {
		if strings.HasPrefix(p, dir) && yaml {
			return true
		}
	}
	for _, dir := range []string{"bin/", "script/", "scripts/", "ci/", ".ci/"} {
		if strings.HasPrefix(p, dir) && !elixirFile(p) {
			return true
		}
	}
	return p == ".gitlab-ci.yml" || strings.HasSuffix(p, "Makefile") || strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, "Jenkinsfile") || strings.HasSuffix(p, "Earthfile")
}

// ciFile is a configFile, or a YAML file anywhere else whose lines run
// the tests (a pipeline kept under deploy/, an umbrella app's CI): read
// as a CI configuration all the same.
func ciFile(f File, head string) bool {
	if configFile(f.Path()) {
		return true
	}
	if !yamlFile(f.Path()) {
		return false
	}
	if testCommand.MatchString(head) {
		return true
	}
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if testCommand.MatchString(l.Text) {
				return true
			}
		}
	}
	return false
}

func yamlFile(p string) bool { return strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml") }

// testFile is an ExUnit test or its support code.
func testFile(p string) bool {
	return strings.HasSuffix(p, "_test.exs") || strings.HasPrefix(p, "test/") || strings.Contains(p, "/test/")
}
