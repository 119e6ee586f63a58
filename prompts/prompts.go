// Package prompts renders the instructions sent to the agent for each job
// and parses the structured block the agent ends its answer with.
//
// Prompts are built only from validated fields (repository, issue number,
// test path and line); no text written by users ever reaches a prompt.
package prompts

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/pitcrew/pitcrew/exunit"
)

//go:embed *.tmpl
var files embed.FS

var templates = template.Must(template.New("").Option("missingkey=error").ParseFS(files, "*.tmpl"))

// FlakyInput is everything the flaky-test prompt may contain.
type FlakyInput struct {
	Repo       string // owner/name
	Issue      int    // 0 when the signal was not an issue
	Test       exunit.TestRef
	VerifyRuns int
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// Flaky renders the prompt that asks the agent to reproduce and fix one
// flaky test. It refuses input that did not come through validation.
func Flaky(in FlakyInput) (string, error) {
	if !repoName.MatchString(in.Repo) {
		return "", fmt.Errorf("prompts: invalid repository %q", in.Repo)
	}
	if _, err := exunit.ParseTestRef(in.Test.String()); err != nil {
		return "", fmt.Errorf("prompts: invalid test reference: %w", err)
	}
	if in.VerifyRuns < 1 || in.VerifyRuns > 1000 {
		return "", fmt.Errorf("prompts: verification runs %d out of range", in.VerifyRuns)
	}
	var b bytes.Buffer
	err := templates.ExecuteTemplate(&b, "flaky.md.tmpl", map[string]any{
		"Repo": in.Repo, "Issue": in.Issue, "Test": in.Test.String(),
		"Path": in.Test.Path, "Line": in.Test.Line, "VerifyRuns": in.VerifyRuns,
	})
	return b.String(), err
}

// MigrationInput is everything the slow-query prompt may contain.
type MigrationInput struct {
	Repo   string // owner/name
	Commit string // the merge commit
	PR     int    // 0 for a push without a pull request
	Files  []string
}

var (
	commitSHA     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	migrationFile = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*\.exs$`)
)

// ValidMigrationFile reports whether a migration's path is one the prompt
// may name: letters, digits, _ . / - only, no "..", ending in .exs.
func ValidMigrationFile(f string) bool {
	return migrationFile.MatchString(f) && !strings.Contains(f, "..")
}

// MaxMigrationFiles bounds the files a prompt names.
const MaxMigrationFiles = 50

// Migration renders the prompt that asks the agent for a slow-query report
// after a merge that changed migrations.
func Migration(in MigrationInput) (string, error) {
	if !repoName.MatchString(in.Repo) || !commitSHA.MatchString(in.Commit) {
		return "", fmt.Errorf("prompts: invalid repository or commit")
	}
	if len(in.Files) == 0 || len(in.Files) > MaxMigrationFiles {
		return "", fmt.Errorf("prompts: %d migration files", len(in.Files))
	}
	for _, f := range in.Files {
		if !ValidMigrationFile(f) {
			return "", fmt.Errorf("prompts: invalid migration file %q", f)
		}
	}
	var b bytes.Buffer
	err := templates.ExecuteTemplate(&b, "migration.md.tmpl", in)
	return b.String(), err
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

// Alert renders the prompt that asks the agent to fix the bug behind a
// monitor alert. The alert's data is JSON inside a fence whose marker is
// random, so no text in the alert can close the fence early.
func Alert(in AlertInput) (string, error) {
	if !repoName.MatchString(in.Repo) {
		return "", fmt.Errorf("prompts: invalid repository %q", in.Repo)
	}
	data, err := json.MarshalIndent(in.Data, "", "  ")
	if err != nil {
		return "", err
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	fence := "=====ALERT-DATA-" + hex.EncodeToString(nonce[:]) + "====="
	var b bytes.Buffer
	err = templates.ExecuteTemplate(&b, "alert.md.tmpl", map[string]any{
		"Repo": in.Repo, "Fired": fired(in.Fired), "Fence": fence, "Data": string(data),
	})
	return b.String(), err
}
