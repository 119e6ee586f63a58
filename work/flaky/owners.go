package flaky

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/codeowners"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/work"
)

// Owners are whom pitcrew names for a test file: its owners in the
// repository's CODEOWNERS at the default branch, or, when no line names
// any, whoever changed it last (named, never pinged).
type Owners struct {
	Listed        []string // @user, @org/team or an email, as CODEOWNERS writes them
	LastCommitter string
}

// ownersTTL is how long a repository's CODEOWNERS, and a file's last
// committer, are reused: like the configuration.
const ownersTTL = 5 * time.Minute

// OwnersOf names the owners of the test file path in repo: CODEOWNERS
// costs one to three contents calls a repository every five minutes, the
// last committer one call a file.
func OwnersOf(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, path string) (Owners, error) {
	file, err := codeownersOf(ctx, b, gh, repo)
	if err != nil {
		return Owners{}, err
	}
	if listed := file.Owners(path); len(listed) > 0 {
		return Owners{Listed: listed}, nil
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

// Named is the owners as a line names them: CODEOWNERS' owners as code
// (ping them with Mentions), or the last committer, never pinged; "" when
// there is neither.
func (o Owners) Named() string {
	switch {
	case len(o.Listed) > 0:
		return "owners: " + publish.CodeList(o.Listed)
	case o.LastCommitter != "":
		return "no CODEOWNERS line names its owners; last changed by " + publish.Code(o.LastCommitter, 100)
	}
	return ""
}

// Mentions is the CODEOWNERS owners as mentions that notify them (@user,
// @org/team; emails as code); "" without any.
func (o Owners) Mentions() string {
	var out []string
	for _, owner := range o.Listed {
		if strings.HasPrefix(owner, "@") {
			out = append(out, owner) // codeowners.Parse keeps only well-formed names
		} else {
			out = append(out, publish.Code(owner, 200))
		}
	}
	return strings.Join(out, ", ")
}

// Reviewers are the users and team slugs a review is asked of: the
// CODEOWNERS owners that are accounts.
func (o Owners) Reviewers(repo github.Repo) (users, teams []string) {
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
