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

	"github.com/pitcrew/pitcrew/evidence"
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
	Job:    runs.Job{Kind: runs.KindMigration, Prompt: "migration", Artifact: publish.ReportName, Data: evidence.SlowQueriesName, Render: publish.RenderReport},
	Config: Section,
	Retry: func(run runs.Run, cfg repoconfig.Config) (any, error) {
		d := publish.MigrationOf(run)
		return Input(run.Repo, run.About, run.Origin, d.Files, d.BeforeMerge, cfg), nil
	},
	Shown: Shown,
}

// Input is the slow-query prompt's input for a merge (or a pull
// request's head), steered by the repository's migrations section.
func Input(repo, commit string, pr int, files []string, beforeMerge bool, cfg repoconfig.Config) prompts.MigrationInput {
	m := Of(cfg)
	return prompts.MigrationInput{Repo: repo, Commit: commit, PR: pr, Files: files, BeforeMerge: beforeMerge,
		Pages: m.Pages, Scale: m.Scale, ThresholdMS: m.ThresholdMS, StatsFile: m.StatsFile}
}

// Of is c's migrations section.
func Of(c repoconfig.Config) Config { return Section.Of(c) }

// Config configures the slow-query report after merged
// migrations (section migrations).
type Config struct {
	Enabled bool `yaml:"enabled"`
	// Paths are the migration directories, as path.Match patterns ending in
	// "migrations/" ("*" matches one directory name).
	Paths []string `yaml:"paths" doc:"a list of 1 to 20 directory patterns ending in migrations/"`
	// Pages are the pages to exercise (paths such as /orders?sort=total);
	// none: the agent finds the main ones from the router.
	Pages []string `yaml:"pages" doc:"a list of up to 20 paths starting with /"`
	// Scale is the rows to seed in the largest table; ThresholdMS the
	// time from which a query is reported.
	Scale       int `yaml:"scale" doc:"a whole number of rows, 1000 to 10000000"`
	ThresholdMS int `yaml:"threshold_ms" doc:"a whole number of milliseconds, 1 to 10000"`
	// StatsFile is a pg_stat_statements export kept in the repository, to
	// start from and to compare the seeded data's shape with.
	StatsFile string `yaml:"stats_file" doc:"a path in the repository"`
}

// Section is the migrations section of .github/pitcrew.yml.
var Section = repoconfig.Section[Config]{
	Key: "migrations",
	Defaults: func() Config {
		return Config{Enabled: true, Paths: []string{"priv/repo/migrations/", "apps/*/priv/repo/migrations/"}, Scale: 100_000, ThresholdMS: 50}
	},
	Check: func(m Config) error {
		switch {
		case len(m.Paths) == 0 || len(m.Paths) > 20:
			return errors.New("migrations.paths must list 1 to 20 directories")
		case len(m.Pages) > 20:
			return errors.New("migrations.pages must list at most 20 pages")
		case m.Scale < 1000 || m.Scale > 10_000_000:
			return errors.New("migrations.scale must be between 1000 and 10000000 rows")
		case m.ThresholdMS < 1 || m.ThresholdMS > 10_000:
			return errors.New("migrations.threshold_ms must be between 1 and 10000")
		case m.StatsFile != "" && !prompts.ValidRepoPath(m.StatsFile):
			return fmt.Errorf("migrations.stats_file: %q must be a path in the repository of letters, digits and _ . / -", m.StatsFile)
		}
		for _, p := range m.Pages {
			if !prompts.ValidPage(p) {
				return fmt.Errorf("migrations.pages: %q must be a path starting with / (letters, digits and / _ . - ? = & %% : + , ~), at most 200 characters", p)
			}
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
		Input:       Input(repo, sig.Commit, sig.PR, files, sig.BeforeMerge, cfg),
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
