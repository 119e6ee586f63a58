// Package commands reads the /pitcrew commands people write on GitHub, in
// comments and reviews. It is its own package, free of HTTP, because a
// comment is outside input: anyone who can comment writes it.
//
// Only a line that starts with /pitcrew is a command; everything else is
// people talking to each other and is not read. Lines in fenced code
// blocks and quoted lines (a reply quoting an earlier command) are not
// commands either.
package commands

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name is what a command asks for.
type Name string

// The commands pitcrew knows.
const (
	OpenPR  Name = "open-pr" // the profiling session opens its migration and query change as a pull request
	Profile Name = "profile" // profile an open pull request's migrations before it merges
	Retry   Name = "retry"   // a new run of the job, when none is live
	Help    Name = "help"    // what pitcrew understands
)

// Known lists the commands, in the order help shows them.
var Known = []Name{OpenPR, Profile, Retry, Help}

// Command is one /pitcrew line.
type Command struct {
	// Name is the command; "" when the word after /pitcrew is none of
	// Known (then Text holds the whole rest: on the agent's pull request,
	// a request for its run).
	Name Name
	// Text is what follows the command word on its line, trimmed, at most
	// MaxText bytes.
	Text string
	Line int // 1-based, in the body as given
}

// Bounds: how much of a body is read, and how long a command's text is.
const (
	MaxBody = 64 << 10 // GitHub's own limit on a comment is 65,536 characters
	MaxText = 2000
)

const prefix = "/pitcrew"

// First returns the body's first command; ok is false when it has none.
// A comment holding a hundred commands acts once, on its first.
func First(body string) (c Command, ok bool) {
	if len(body) > MaxBody {
		body = body[:MaxBody]
	}
	fence := ""
	for i, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimLeft(strings.TrimRight(line, "\r"), " \t")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.HasPrefix(trimmed, prefix) || indented(line) {
			continue
		}
		rest := trimmed[len(prefix):]
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && !unicode.IsSpace(r) {
			continue // "/pitcrewbot", "/pitcrew-x": another word
		}
		return parse(strings.TrimSpace(rest), i+1), true
	}
	return Command{}, false
}

// indented is a line Markdown shows as code: four spaces or a tab first.
func indented(line string) bool {
	return strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
}

// fenceOf is the fence a line opens or closes (``` or ~~~, three or more),
// "" when it is none.
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

func parse(rest string, line int) Command {
	word, text, _ := strings.Cut(rest, " ")
	if i := strings.IndexFunc(word, unicode.IsSpace); i >= 0 {
		word, text = word[:i], word[i:]+" "+text
	}
	for _, k := range Known {
		if strings.EqualFold(word, string(k)) {
			return Command{Name: k, Text: clip(strings.TrimSpace(text)), Line: line}
		}
	}
	return Command{Text: clip(rest), Line: line}
}

// clip bounds a command's text at MaxText bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	return strings.ToValidUTF8(s[:MaxText], "")
}
