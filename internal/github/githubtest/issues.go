package githubtest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pitcrew/pitcrew/internal/github"
)

// Issues, their comments, labels and reactions, and who may act on them
// (github.Issues).

// Permission implements github.Issues.
func (f *Fake) Permission(_ context.Context, _ github.Repo, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.Permissions[user]; ok {
		return p, nil
	}
	return "read", nil
}

// CreateComment implements github.Issues.
func (f *Fake) CreateComment(_ context.Context, _ github.Repo, issue int, body string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.write("CreateComment #%d", issue)
	f.Comments = append(f.Comments, Comment{ID: id, Issue: issue, Body: body})
	return id, nil
}

// EditComment implements github.Issues.
func (f *Fake) EditComment(_ context.Context, _ github.Repo, id int64, body string) error {
	return f.edit(id, body, "EditComment")
}

func (f *Fake) edit(id int64, body, call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Comments {
		if f.Comments[i].ID == id {
			f.write("%s %d", call, id)
			f.Comments[i].Body = body
			return nil
		}
	}
	return github.ErrCommentGone
}

// FindComment implements github.Issues.
func (f *Fake) FindComment(_ context.Context, _ github.Repo, issue int, marker string) (int64, error) {
	return f.find(func(c Comment) bool { return c.Issue == issue && strings.Contains(c.Body, marker) }), nil
}

func (f *Fake) find(match func(Comment) bool) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.Comments {
		if match(c) {
			return c.ID
		}
	}
	return 0
}

// CreateLabel implements github.Issues: created is false for a label the
// repository has (GitHub answers 422, names compared case-insensitively).
func (f *Fake) CreateLabel(_ context.Context, _ github.Repo, name, _, _ string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.labels[strings.ToLower(name)] {
		return false, nil
	}
	if f.labels == nil {
		f.labels = map[string]bool{}
	}
	f.labels[strings.ToLower(name)] = true
	f.write("CreateLabel %s", name)
	return true, nil
}

// CreateIssue implements github.Issues.
func (f *Fake) CreateIssue(_ context.Context, _ github.Repo, title, body string, labels []string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 100 + len(f.Issues)
	f.write("CreateIssue #%d", n)
	f.Issues = append(f.Issues, Issue{Number: n, Title: title, Body: body, Labels: labels})
	return n, nil
}

// FindIssue implements github.Issues.
func (f *Fake) FindIssue(_ context.Context, _ github.Repo, label, marker, _ string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, is := range f.Issues {
		if strings.Contains(is.Body, marker) && slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, label) }) {
			return is.Number, nil
		}
	}
	return 0, nil
}

// EditIssueBody implements github.Issues.
func (f *Fake) EditIssueBody(_ context.Context, _ github.Repo, number int, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Issues {
		if f.Issues[i].Number == number {
			f.write("EditIssueBody #%d", number)
			f.Issues[i].Body = body
			return nil
		}
	}
	return fmt.Errorf("githubtest: no issue #%d: %w", number, github.ErrIssueGone)
}

// ReactToComment implements github.Issues.
func (f *Fake) ReactToComment(_ context.Context, _ github.Repo, id int64, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.write("React %d %s", id, content)
	return nil
}
