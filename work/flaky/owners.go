package flaky

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/codeowners"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// Owners are whom pitcrew names for a test file (runs.Owners).
type Owners = runs.Owners

// ownersTTL is how long a repository's CODEOWNERS, and a file's last
// committer, are reused: like the configuration.
const ownersTTL = 5 * time.Minute

// OwnersOf names the owners of the test file path in repo: CODEOWNERS
// costs one to three contents calls a repository every five minutes, the
// last committer one call a file.
func OwnersOf(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, path string) (Owners, error) {
	listed, err := ListedOwners(ctx, b, gh, repo, path)
	if err != nil || len(listed) > 0 {
		return Owners{Listed: listed}, err
	}
	name := "committer:" + strings.ToLower(repo.String()) + ":" + path
	cached, hit, err := b.Ledger.Cached(ctx, name)
	if err != nil || hit {
		return Owners{LastCommitter: string(cached)}, err
	}
	login, err := gh.LastCommitter(ctx, repo, path, "")
	if err != nil {
		return Owners{}, err
	}
	return Owners{LastCommitter: login}, b.Ledger.Cache(ctx, name, []byte(login), ownersTTL)
}

// ListedOwners are the owners CODEOWNERS names for path, none without a
// line for it (or a file).
func ListedOwners(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, path string) ([]string, error) {
	file, err := codeownersOf(ctx, b, gh, repo)
	return file.Owners(path), err
}

// codeownersOf reads the repository's CODEOWNERS where GitHub looks for
// it, through the shared cache ("" kept for a repository with none).
func codeownersOf(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo) (codeowners.File, error) {
	name := "codeowners:" + strings.ToLower(repo.String())
	cached, hit, err := b.Ledger.Cached(ctx, name)
	if err != nil {
		return codeowners.File{}, err
	}
	var text string
	if hit && json.Unmarshal(cached, &text) == nil {
		return codeowners.Parse(text), nil
	}
	for _, p := range codeowners.Paths {
		content, err := gh.FileAt(ctx, repo, p, "")
		if errors.Is(err, github.ErrFileGone) || errors.Is(err, github.ErrFileTooLarge) {
			continue
		}
		if err != nil {
			return codeowners.File{}, err
		}
		text = content
		break
	}
	enc, _ := json.Marshal(text)
	return codeowners.Parse(text), b.Ledger.Cache(ctx, name, enc, ownersTTL)
}

// Reviewers are the users and team slugs a review is asked of: o's
// CODEOWNERS owners that are accounts (teams of the repository's owner).
func Reviewers(o Owners, repo github.Repo) (users, teams []string) {
	for _, owner := range o.Listed {
		switch org, slug, team := codeowners.Team(owner); {
		case team && strings.EqualFold(org, repo.Owner):
			teams = append(teams, slug)
		case !team && strings.HasPrefix(owner, "@"):
			users = append(users, strings.TrimPrefix(owner, "@"))
		}
	}
	return users, teams
}

// ownersOrNone is OwnersOf for what only names owners: nil (nothing named)
// when GitHub did not answer, logged, so that naming them never holds up
// what the signal does.
func ownersOrNone(ctx context.Context, b *work.Env, gh github.Client, repoName, path string) *Owners {
	repo, err := github.ParseRepo(repoName)
	if err != nil {
		return nil
	}
	o, err := OwnersOf(ctx, b, gh, repo, path)
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("path", path).Msg("could not read the test file's owners; they are not named")
		return nil
	}
	return &o
}
