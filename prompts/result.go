package prompts

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/weburl"
)

// Outcome is what the agent says it achieved.
type Outcome string

// The outcomes an agent may report for a fix run.
const (
	OutcomeFixed         Outcome = "fixed"
	OutcomeNotFixed      Outcome = "not_fixed"
	OutcomeNotReproduced Outcome = "not_reproduced"
	OutcomeOutsideCode   Outcome = "outside_code" // an alert whose cause is not in the repository
)

// Result is the JSON block a fix run ends its answer with, after validation.
// Zero values mean "not stated".
type Result struct {
	Outcome        Outcome `json:"outcome"`
	PRURL          string  `json:"pr_url,omitempty"`
	Cause          string  `json:"cause,omitempty"`
	Seed           *int64  `json:"seed,omitempty"`
	FailuresBefore *int    `json:"failures_before,omitempty"`
	FailuresAfter  *int    `json:"failures_after,omitempty"`
	Runs           *int    `json:"runs,omitempty"`
	Dependency     string  `json:"dependency,omitempty"` // what to check when the cause is outside the code
	// Polluter is the test that makes this one fail when they run
	// together, as the agent claims it (nil when it names none).
	Polluter *Polluter `json:"polluter,omitempty"`
}

// Polluter is another test that pollutes the flaky one: the smallest pair
// that fails is it and the flaky test, with Seed; Shares is what they
// share (one line: an Application env key, a named process, ...).
type Polluter struct {
	Test   string `json:"test"` // file:line
	Seed   int64  `json:"seed"`
	Shares string `json:"shares,omitempty"`
}

// ErrNoResultBlock means the answer did not end with a JSON block.
var ErrNoResultBlock = errors.New("the answer has no result block")

var (
	fencedJSON = regexp.MustCompile("(?s)```(?:json)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```")
)

// MaxCauseLen bounds the cause sentence shown on GitHub.
const MaxCauseLen = 300

// ParseResult reads the last fenced JSON block of an agent's answer.
// Unknown fields are ignored (agents add some); known fields are checked:
// the outcome must be one of the three, the PR URL a GitHub pull request,
// counts non-negative. The cause is reduced to one plain line.
func ParseResult(answer string) (Result, error) {
	blocks := fencedJSON.FindAllStringSubmatch(answer, -1)
	if len(blocks) == 0 {
		return Result{}, ErrNoResultBlock
	}
	var raw struct {
		Outcome        string   `json:"outcome"`
		PRURL          *string  `json:"pr_url"`
		Cause          *string  `json:"cause"`
		Seed           *float64 `json:"seed"`
		FailuresBefore *float64 `json:"failures_before"`
		FailuresAfter  *float64 `json:"failures_after"`
		Runs           *float64 `json:"runs"`
		Dependency     *string  `json:"dependency"`
		Polluter       *struct {
			Test   string   `json:"test"`
			Seed   *float64 `json:"seed"`
			Shares string   `json:"shares"`
		} `json:"polluter"`
	}
	if err := json.Unmarshal([]byte(blocks[len(blocks)-1][1]), &raw); err != nil {
		return Result{}, fmt.Errorf("result block is not valid JSON: %w", err)
	}
	var r Result
	switch o := Outcome(raw.Outcome); o {
	case OutcomeFixed, OutcomeNotFixed, OutcomeNotReproduced, OutcomeOutsideCode:
		r.Outcome = o
	default:
		return Result{}, fmt.Errorf("result block has unknown outcome “%s”", oneLine(raw.Outcome, 40))
	}
	if raw.PRURL != nil && *raw.PRURL != "" {
		page, ok := weburl.PullPage(*raw.PRURL)
		if !ok {
			return Result{}, fmt.Errorf("result block has a pr_url that is not a GitHub pull request")
		}
		r.PRURL = page
	}
	if raw.Cause != nil {
		r.Cause = oneLine(*raw.Cause, MaxCauseLen)
	}
	if raw.Dependency != nil {
		r.Dependency = oneLine(*raw.Dependency, 200)
	}
	var err error
	if r.Seed, err = count64("seed", raw.Seed); err != nil {
		return Result{}, err
	}
	if p := raw.Polluter; p != nil && p.Test != "" {
		ref, err := exunit.ParseTestRef(p.Test)
		if err != nil {
			return Result{}, fmt.Errorf("result block's polluter is not a test file:line")
		}
		seed, err := count64("polluter.seed", p.Seed)
		if err != nil || seed == nil {
			return Result{}, fmt.Errorf("result block's polluter names no seed")
		}
		r.Polluter = &Polluter{Test: ref.String(), Seed: *seed, Shares: oneLine(p.Shares, 200)}
	}
	for _, f := range []struct {
		name string
		in   *float64
		out  **int
	}{{"failures_before", raw.FailuresBefore, &r.FailuresBefore}, {"failures_after", raw.FailuresAfter, &r.FailuresAfter}, {"runs", raw.Runs, &r.Runs}} {
		v, err := count64(f.name, f.in)
		if err != nil {
			return Result{}, err
		}
		if v != nil {
			n := int(*v)
			*f.out = &n
		}
	}
	return r, nil
}

func count64(name string, v *float64) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	if *v < 0 || *v != float64(int64(*v)) || *v > 1<<53 {
		return nil, fmt.Errorf("result block field %s is not a non-negative integer", name)
	}
	n := int64(*v)
	return &n, nil
}

// oneLine keeps outside text as one line of valid UTF-8, at most max runes
// (plus an ellipsis). It does not make it safe for Markdown: what is shown
// on GitHub goes through publish.Text when it is rendered.
func oneLine(s string, max int) string {
	return clip(strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " "), max)
}

func clip(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
