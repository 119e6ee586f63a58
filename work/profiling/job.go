// Package profiling reports the queries of migrations before they ship:
// the job that profiles a merge (or, on /pitcrew profile, an open pull
// request's head) that changed migrations, its section of
// .github/pitcrew.yml, and which changed files are migrations.
package profiling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// Job profiles the queries of a merge that changed migrations
// and keeps the agent's report, which its status comment shows.
var Job = work.Job{
	Job:    runs.Job{Kind: runs.KindMigration, Prompt: "migration", Artifact: publish.ReportName, Render: publish.RenderReport},
	Config: Section,
	Retry: func(run runs.Run, _ repoconfig.Config) (any, error) {
		d := publish.MigrationOf(run)
		return prompts.MigrationInput{Repo: run.Repo, Commit: run.About, PR: run.Origin, Files: d.Files, BeforeMerge: d.BeforeMerge}, nil
	},
}

// Config configures the slow-query report after merged
// migrations (section migrations).
type Config struct {
	Enabled bool `yaml:"enabled"`
	// Paths are the migration directories, as path.Match patterns ending in
	// "migrations/" ("*" matches one directory name).
	Paths []string `yaml:"paths" doc:"a list of 1 to 20 directory patterns ending in migrations/"`
}

// Section is the migrations section of .github/pitcrew.yml.
var Section = repoconfig.Section[Config]{
	Key: "migrations",
	Defaults: func() Config {
		return Config{Enabled: true, Paths: []string{"priv/repo/migrations/", "apps/*/priv/repo/migrations/"}}
	},
	Check: func(m Config) error {
		if len(m.Paths) == 0 || len(m.Paths) > 20 {
			return errors.New("migrations.paths must list 1 to 20 directories")
		}
		for _, p := range m.Paths {
			if _, err := path.Match(p, ""); err != nil || !strings.HasSuffix(p, "migrations/") || strings.HasPrefix(p, "/") {
				return fmt.Errorf("migrations.paths: %q must be a relative directory pattern ending in migrations/", p)
			}
		}
		return nil
	},
}

// Key is the idempotency key of a merge's profiling run: the
// repository and the merge commit, so a redelivered or replayed merge (or
// the push of the same merge) starts one run.
func Key(repo, sha string) string { return "migration:" + strings.ToLower(repo) + ":" + sha }

// MayHoldMigrations is the check made before the configuration is read:
// configured directories all end in "migrations/", so a change list
// without that string has none, whatever the configuration says.
func MayHoldMigrations(files []github.ChangedFile) bool {
	for _, f := range files {
		if strings.Contains(f.Path, "migrations/") {
			return true
		}
	}
	return false
}

// Files returns, sorted, the files added, changed or renamed into
// one of the migration directories (patterns as in Config.Paths).
func Files(files []github.ChangedFile, patterns []string) []string {
	var out []string
	for _, f := range files {
		if f.Status == "removed" || !strings.HasSuffix(f.Path, ".exs") {
			continue
		}
		dir := path.Dir(f.Path) + "/"
		for _, p := range patterns {
			if ok, _ := path.Match(p, dir); ok {
				out = append(out, f.Path)
				break
			}
		}
	}
	sort.Strings(out)
	if len(out) > prompts.MaxMigrationFiles {
		out = out[:prompts.MaxMigrationFiles]
	}
	return out
}

// UsableNames keeps the files a prompt may name and says which
// were skipped: a name with a backtick, a space or a shell character is
// left out of the run, not allowed to fail it.
func UsableNames(files []string) (usable []string, notice string) {
	var skipped []string
	for _, f := range files {
		if prompts.ValidMigrationFile(f) {
			usable = append(usable, f)
		} else {
			skipped = append(skipped, publish.Code(f, 200))
		}
	}
	if len(skipped) > 0 {
		notice = fmt.Sprintf("%d migration %s skipped: pitcrew names in a prompt only paths of letters, digits and `_ . / -`: %s.",
			len(skipped), publish.Plural(len(skipped), "file was", "files were"), strings.Join(skipped, ", "))
	}
	return usable, notice
}

// Signal is a merge to the default branch that changed migrations.
type Signal struct {
	InstallationID int64
	Delivery       string
	Repo           github.Repo
	Commit         string
	PR             int          // 0 for a push without a pull request
	Subject        runs.Subject // the pull request, or the commit
	// BeforeMerge: Commit is an open pull request's head (/pitcrew profile).
	BeforeMerge bool
}

// Start claims the merge's profiling run and shows it on the
// subject: a status comment that will hold the report.
func Start(ctx context.Context, b *work.Env, gh github.Client, sig Signal, files []string, cfg repoconfig.Config) error {
	repo := sig.Repo.String()
	files, notice := UsableNames(files)
	if len(files) == 0 {
		return b.Publish.Status(ctx, gh, sig.Subject, func(st *runs.Status) {
			st.Replace(runs.Status{InstallationID: sig.InstallationID, Job: string(runs.KindMigration), Notice: "Not profiled: " + notice})
		})
	}
	data, err := json.Marshal(publish.MigrationData{Files: files, BeforeMerge: sig.BeforeMerge})
	if err != nil {
		return err
	}
	entry, started, err := b.Runs.Start(ctx, runs.Request{
		Run: runs.Run{Key: Key(repo, sig.Commit), Kind: runs.KindMigration, InstallationID: sig.InstallationID,
			Repo: repo, Origin: sig.PR, About: sig.Commit, Data: data, Delivery: sig.Delivery},
		Subject: sig.Subject, Cooldown: runs.Retention, DailyLimit: cfg.DailyLimit,
		Input:       prompts.MigrationInput{Repo: repo, Commit: sig.Commit, PR: sig.PR, Files: files, BeforeMerge: sig.BeforeMerge},
		LastAttempt: queue.LastAttempt(ctx),
	})
	if err != nil {
		return err
	}
	entry.About = sig.Commit
	err = b.Publish.Status(ctx, gh, sig.Subject, func(st *runs.Status) {
		st.Replace(runs.Status{InstallationID: sig.InstallationID, Job: string(runs.KindMigration), Notice: notice, Entries: []runs.Entry{entry}})
	}, entry.RunID)
	if err != nil || started == nil {
		return err
	}
	return b.Publish.Subjects(ctx, gh, *started, sig.Subject)
}
