// Package prompts renders the instructions sent to the agent for each job,
// by the job's prompt name (the template <name>.md.tmpl), and parses the
// structured block the agent ends its answer with.
//
// Prompts are built only from validated fields (repository, issue number,
// test path and line); text from outside (an alert's message, its stack
// frames) reaches a prompt only as data inside a fence.
package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/weburl"
)

//go:embed *.tmpl
var files embed.FS

var templates = template.Must(template.New("").Option("missingkey=error").ParseFS(files, "*.tmpl"))

// Has reports whether a prompt of that name exists.
func Has(name string) bool { return templates.Lookup(name+".md.tmpl") != nil }

// Render writes the prompt name with input, which is the input type its
// template takes: FlakyInput, MigrationInput, VerifyInput, AlertInput
// for the prompt of any alert source, ReviewInput and OpenPRInput for the
// follow-ups. Input that did not come through validation
// is refused.
func Render(name string, input any) (string, error) {
	t := templates.Lookup(name + ".md.tmpl")
	if t == nil {
		return "", fmt.Errorf("prompts: no prompt named %q", name)
	}
	var fields any
	var err error
	switch in := input.(type) {
	case FlakyInput:
		fields, err = in.fields()
	case MigrationInput:
		fields, err = in.fields()
	case AlertInput:
		fields, err = in.fields()
	case VerifyInput:
		fields, err = in.fields()
	case ReviewInput:
		fields, err = in.fields()
	case OpenPRInput:
		fields, err = in.fields()
	default:
		err = fmt.Errorf("prompts: %T is not a prompt input", input)
	}
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = t.Execute(&b, fields)
	return b.String(), err
}

// FlakyInput is everything the flaky-test prompt may contain.
type FlakyInput struct {
	Repo       string // owner/name
	Issue      int    // 0 when the signal was not an issue
	Test       exunit.TestRef
	VerifyRuns int
	// PriorFix is the merged pull request that fixed the test before it
	// flaked again (its URL, as pitcrew built it), with its merge date.
	PriorFix       string
	PriorFixMerged time.Time
}

// WithPriorFix is the input naming the fix the test came back after.
func (in FlakyInput) WithPriorFix(url string, mergedAt time.Time) any {
	in.PriorFix, in.PriorFixMerged = url, mergedAt
	return in
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// fields are what the prompt that asks the agent to reproduce and fix one
// flaky test reads.
func (in FlakyInput) fields() (any, error) {
	if !repoName.MatchString(in.Repo) {
		return nil, fmt.Errorf("prompts: invalid repository %q", in.Repo)
	}
	if _, err := exunit.ParseTestRef(in.Test.String()); err != nil {
		return nil, fmt.Errorf("prompts: invalid test reference: %w", err)
	}
	if in.VerifyRuns < 1 || in.VerifyRuns > 1000 {
		return nil, fmt.Errorf("prompts: verification runs %d out of range", in.VerifyRuns)
	}
	if in.PriorFix != "" && !weburl.IsPull(in.PriorFix) {
		return nil, fmt.Errorf("prompts: invalid prior fix %q", in.PriorFix)
	}
	return map[string]any{
		"Repo": in.Repo, "Issue": in.Issue, "Test": in.Test.String(),
		"Path": in.Test.Path, "Line": in.Test.Line, "VerifyRuns": in.VerifyRuns,
		"PriorFix": in.PriorFix, "PriorFixMerged": in.PriorFixMerged.UTC().Format("2 January 2006"),
	}, nil
}

// VerifyInput is everything the prompt of an independent verification of
// a flaky-test fix may contain: the fix's pull request, its base and head
// commits, the test, the seed that failed and how many runs to make.
type VerifyInput struct {
	Repo       string // owner/name
	PR         int
	Base, Head string // commit SHAs
	Test       exunit.TestRef
	Seed       int64
	Runs       int
	// Polluter is the test the fix's answer says pollutes Test with
	// PolluterSeed (nil: none), whose pair the verification checks.
	Polluter     *exunit.TestRef
	PolluterSeed int64
}

func (in VerifyInput) fields() (any, error) {
	switch {
	case !repoName.MatchString(in.Repo) || in.PR <= 0:
		return nil, fmt.Errorf("prompts: invalid repository %q or pull request %d", in.Repo, in.PR)
	case !commitSHA.MatchString(in.Base) || !commitSHA.MatchString(in.Head):
		return nil, fmt.Errorf("prompts: invalid base or head commit")
	case in.Seed < 0 || in.Runs < 1 || in.Runs > 500:
		return nil, fmt.Errorf("prompts: seed %d or runs %d out of range", in.Seed, in.Runs)
	}
	if _, err := exunit.ParseTestRef(in.Test.String()); err != nil {
		return nil, fmt.Errorf("prompts: invalid test reference: %w", err)
	}
	fields := map[string]any{"Repo": in.Repo, "PR": in.PR, "Base": in.Base, "Head": in.Head,
		"Test": in.Test.String(), "Path": in.Test.Path, "Seed": in.Seed, "Runs": in.Runs, "Polluter": "", "PolluterSeed": in.PolluterSeed}
	if in.Polluter != nil {
		if _, err := exunit.ParseTestRef(in.Polluter.String()); err != nil || in.PolluterSeed < 0 {
			return nil, fmt.Errorf("prompts: invalid polluter")
		}
		fields["Polluter"] = in.Polluter.String()
	}
	return fields, nil
}

// MigrationInput is everything the slow-query prompt may contain.
type MigrationInput struct {
	Repo   string // owner/name
	Commit string // the merge commit; the pull request's head when BeforeMerge
	PR     int    // 0 for a push without a pull request
	Files  []string
	// BeforeMerge profiles an open pull request's head (/pitcrew profile),
	// before the change ships.
	BeforeMerge bool
	// Pages are the pages to exercise (none: the agent finds them in the
	// router); Scale the rows of the largest table; ThresholdMS the time
	// from which a query is reported; StatsFile a pg_stat_statements
	// export in the repository ("" for none).
	Pages       []string
	Scale       int
	ThresholdMS int
	StatsFile   string
}

var (
	commitSHA     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	migrationFile = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*\.exs$`)
	repoPath      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*$`)
	page          = regexp.MustCompile(`^/[A-Za-z0-9_./?=&%:+,~-]{0,199}$`)
)

// ValidRepoPath reports whether a path in the repository is one a prompt
// may name: letters, digits, _ . / - only, no "..".
func ValidRepoPath(p string) bool { return repoPath.MatchString(p) && !strings.Contains(p, "..") }

// ValidPage reports whether a page's path is one a prompt may name.
func ValidPage(p string) bool { return page.MatchString(p) && !strings.Contains(p, "..") }

// ValidMigrationFile reports whether a migration's path is one the prompt
// may name: letters, digits, _ . / - only, no "..", ending in .exs.
func ValidMigrationFile(f string) bool {
	return migrationFile.MatchString(f) && !strings.Contains(f, "..")
}

// MaxMigrationFiles bounds the files a prompt names.
const MaxMigrationFiles = 50

// fields are what the prompt that asks the agent for a slow-query report
// after a merge that changed migrations reads.
func (in MigrationInput) fields() (any, error) {
	if !repoName.MatchString(in.Repo) || !commitSHA.MatchString(in.Commit) {
		return nil, fmt.Errorf("prompts: invalid repository or commit")
	}
	if len(in.Files) == 0 || len(in.Files) > MaxMigrationFiles {
		return nil, fmt.Errorf("prompts: %d migration files", len(in.Files))
	}
	for _, f := range in.Files {
		if !ValidMigrationFile(f) {
			return nil, fmt.Errorf("prompts: invalid migration file %q", f)
		}
	}
	if len(in.Pages) > 20 || in.Scale < 1000 || in.Scale > 10_000_000 || in.ThresholdMS < 1 || in.ThresholdMS > 10_000 || in.StatsFile != "" && !ValidRepoPath(in.StatsFile) {
		return nil, fmt.Errorf("prompts: invalid profiling settings")
	}
	for _, p := range in.Pages {
		if !ValidPage(p) {
			return nil, fmt.Errorf("prompts: invalid page %q", p)
		}
	}
	return struct {
		MigrationInput
		Schema string
	}{in, evidence.SlowQueriesSchema}, nil
}

// AlertInput is everything the alert prompt may contain. Data is the
// alert's own fields, already cleaned of control and invisible characters
// and capped (alerts.Clean); it goes into the prompt only inside a fence.
type AlertInput struct {
	Repo  string
	Fired time.Time // when the monitor fired; zero when Datadog gave no valid date
	Data  map[string]any
}

// fired is the alert's time as the prompt states it, outside the fence:
// formatted here from a time, so no text of the payload reaches it.
func fired(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// fields are what the prompt that asks the agent to fix the bug behind an
// alert reads. The alert's data is JSON inside a fence whose marker is
// random, so no text in the alert can close the fence early.
func (in AlertInput) fields() (any, error) {
	if !repoName.MatchString(in.Repo) {
		return nil, fmt.Errorf("prompts: invalid repository %q", in.Repo)
	}
	fence, data, err := fenced("ALERT", in.Data)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Repo": in.Repo, "Fired": fired(in.Fired), "Fence": fence, "Data": data}, nil
}
