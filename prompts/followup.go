package prompts

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Follow-ups: messages to a run's session after its first answer. What a
// reviewer wrote is outside text: it reaches the prompt only as JSON data
// inside a fence whose marker is random.

// ReviewInput is a review of the run's pull request that asks for more:
// its text and each inline comment with its file and line.
type ReviewInput struct {
	PR       int
	Reviewer string
	Body     string
	Comments []ReviewComment
}

// ReviewComment is one inline comment of a review.
type ReviewComment struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Body string `json:"body"`
}

// Bounds of what a review brings into a prompt.
const (
	MaxReviewText     = 8000
	MaxReviewComments = 30
	MaxCommentText    = 2000
)

var login = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

func (in ReviewInput) fields() (any, error) {
	if in.PR <= 0 || !login.MatchString(in.Reviewer) {
		return nil, fmt.Errorf("prompts: invalid review of #%d by %q", in.PR, in.Reviewer)
	}
	data := struct {
		Review   string          `json:"review"`
		Comments []ReviewComment `json:"inline_comments,omitempty"`
	}{Review: clipText(in.Body, MaxReviewText)}
	for i, c := range in.Comments {
		if i == MaxReviewComments {
			break
		}
		data.Comments = append(data.Comments, ReviewComment{Path: clipText(c.Path, 300), Line: c.Line, Body: clipText(c.Body, MaxCommentText)})
	}
	fence, text, err := fenced("REVIEW", data)
	if err != nil {
		return nil, err
	}
	return map[string]any{"PR": in.PR, "Reviewer": in.Reviewer, "Fence": fence, "Data": text}, nil
}

// OpenPRInput asks a profiling session to open the change it measured.
type OpenPRInput struct {
	PR    int // the merged pull request it profiled
	Files []string
}

func (in OpenPRInput) fields() (any, error) {
	if in.PR <= 0 {
		return nil, fmt.Errorf("prompts: invalid pull request #%d", in.PR)
	}
	for _, f := range in.Files {
		if !ValidMigrationFile(f) {
			return nil, fmt.Errorf("prompts: invalid migration file %q", f)
		}
	}
	return in, nil
}

// fenced is v as indented JSON and the random fence to put around it.
func fenced(label string, v any) (fence, data string, err error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", "", err
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return "=====" + label + "-DATA-" + hex.EncodeToString(nonce[:]) + "=====", string(b), nil
}

// clipText bounds s at max bytes on a rune boundary.
func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "")
}
