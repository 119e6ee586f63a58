package exunit

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// Limits that keep the parser's memory bounded whatever the log holds.
const (
	MaxFailures       = 500  // failures kept per log; the rest are only counted
	MaxRuns           = 100  // `mix test` runs kept per log; later ones share the last
	MaxMessageLines   = 8    // lines of each failure's message kept
	maxLineBytes      = 8192 // longer lines are cut
	maxMessageLineLen = 300
)

// Failure kinds.
const (
	KindTest     = "test"
	KindDoctest  = "doctest"
	KindProperty = "property"  // a StreamData property
	KindSetupAll = "setup_all" // the module's setup_all failed: no line, every test invalidated
)

// Failure is one numbered failure block of an ExUnit run.
type Failure struct {
	Kind       string   `json:"kind"`
	File       string   `json:"file,omitempty"` // relative to the repository's root when it could be made so
	Line       int      `json:"line,omitempty"`
	Test       string   `json:"test,omitempty"` // as ExUnit names it, describe included
	Module     string   `json:"module"`
	Message    []string `json:"message,omitempty"` // the first lines: assertion, code, left, right
	Invocation int      `json:"invocation"`        // index into Report.Runs
	// Parameters is what a parameterized test (Elixir 1.18+) ran with, as
	// ExUnit inspects it: "%{db: :mysql}".
	Parameters string `json:"parameters,omitempty"`
	// Unusable says why the location cannot name a test of the repository
	// (an absolute path outside any checkout pitcrew recognises).
	Unusable string `json:"unusable,omitempty"`
}

// Ref returns the failure's test reference when it has a valid one.
func (f Failure) Ref() (TestRef, bool) {
	if f.File == "" || f.Line == 0 || f.Unusable != "" {
		return TestRef{}, false
	}
	ref, err := ParseTestRef(f.File + ":" + strconv.Itoa(f.Line))
	return ref, err == nil
}

// Summary formats: how a run's counts line was printed (Run.Format).
const (
	// Format114 is "3 doctests, 13 tests, 1 failure, 1 excluded, 2 skipped",
	// Elixir up to 1.18 (and 1.19 when nothing was excluded, which prints
	// the same): each type's count includes its skipped, excluded and
	// invalid tests.
	Format114 = "1.14"
	// Format119 is "3 doctests, 12 tests, 1 failure, 2 skipped (1 excluded)":
	// the counts by type leave the excluded tests out.
	Format119 = "1.19"
	// Format120 is "Result: 12/13 passed (3/3 doctests, 9/10 tests), 2
	// skipped, 1 excluded" then "Failed: 1 test": the totals count only
	// the tests that ran (skipped, excluded and invalid ones aside).
	Format120 = "1.20"
)

// Run is one `mix test` invocation found in the log.
type Run struct {
	Seed     *int64 `json:"seed,omitempty"`
	MaxCases int    `json:"max_cases,omitempty"`
	// RemainingRuns is what the seed line of a --repeat-until-failure run
	// (Elixir 1.20) says is left; Repetition counts, from 1, the runs of
	// that series the log printed.
	RemainingRuns *int   `json:"remaining_runs,omitempty"`
	Repetition    int    `json:"repetition,omitempty"`
	Summary       bool   `json:"summary"`          // the counts line was seen
	Format        string `json:"format,omitempty"` // how it was printed: Format114, Format119 or Format120
	// The counts by type, as Format says they count. The one type of a
	// 1.20 summary that names none is counted in Tests, unless its
	// Failed: line names it.
	Doctests   int `json:"doctests"`
	Properties int `json:"properties,omitempty"`
	Tests      int `json:"tests"`
	Failures   int `json:"failures"`
	Invalid    int `json:"invalid"`
	Excluded   int `json:"excluded"`
	Skipped    int `json:"skipped"`
	// Passed and Total are a 1.20 summary's "passed/total"; ByType its
	// breakdown, with the Failed: line's counts.
	Passed       int         `json:"passed,omitempty"`
	Total        int         `json:"total,omitempty"`
	ByType       []TypeCount `json:"by_type,omitempty"`
	CompileError bool        `json:"compile_error,omitempty"` // compilation failed: no tests ran
	// Step is the script of the GitHub Actions step that printed the run,
	// when the log shows it; StepRun counts the runs printed before it in
	// that step (mix test || mix test --failed prints two).
	Step    string `json:"step,omitempty"`
	StepRun int    `json:"step_run,omitempty"`
	// App is the umbrella app whose "==> app" section printed the run, in
	// an umbrella's log.
	App string `json:"app,omitempty"`
}

// TypeCount is one test type's counts in an Elixir 1.20 summary.
type TypeCount struct {
	Type   string `json:"type"` // "doctest", "test", "property", or a type a library registered, as printed
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
	Failed int    `json:"failed,omitempty"`
}

// Report is what a log holds.
type Report struct {
	Runs            []Run     `json:"runs"`
	Failures        []Failure `json:"failures"`
	DroppedFailures int       `json:"dropped_failures,omitempty"` // beyond MaxFailures
	MergedRuns      int       `json:"merged_runs,omitempty"`      // beyond MaxRuns, counted into the last
}

// Flaky returns the failures that name a test by file and line, from
// runs that compiled: the candidates for a flaky test. Failures printed
// by a run that then failed to compile are left out.
func (r Report) Flaky() []Failure {
	var out []Failure
	for _, f := range r.Failures {
		if _, ok := f.Ref(); ok && f.Kind != KindSetupAll && !r.Runs[f.Invocation].CompileError {
			out = append(out, f)
		}
	}
	return out
}

// CompileErrorOnly reports whether the log shows a failed compilation and
// no test results: a broken build, never a flaky test.
func (r Report) CompileErrorOnly() bool {
	if len(r.Flaky()) > 0 {
		return false
	}
	for _, run := range r.Runs {
		if run.CompileError {
			return true
		}
	}
	return false
}

// MostlyFailed reports whether a run failed in most of its tests (at least
// ten): a database or service that was down, not a flaky test.
func (r Report) MostlyFailed() bool {
	for _, run := range r.Runs {
		if run.Summary && run.mostlyFailed() {
			return true
		}
	}
	return false
}

// ran is how many tests the run ran or invalidated.
func (r Run) ran() int {
	switch r.Format {
	case Format120:
		return r.Total + r.Invalid
	case Format119:
		return r.Doctests + r.Properties + r.Tests - r.Skipped
	}
	return r.Doctests + r.Properties + r.Tests - r.Excluded - r.Skipped
}

func (r Run) mostlyFailed() bool {
	failed := r.Failures + r.Invalid
	return failed >= 10 && 2*failed > r.ran()
}

// ParseLog reads an ExUnit log line by line: the raw output of `mix test`,
// or a CI job's log (GitHub Actions' timestamps, groups, problem-matcher
// annotations, colours). It keeps only the failures (at most MaxFailures,
// each bounded) and the counts, so its memory does not grow with the log.
func ParseLog(r io.Reader) (Report, error) {
	p := &parser{cur: -1}
	br := bufio.NewReaderSize(r, 64*1024)
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		switch {
		case !isPrefix && len(buf) == 0 && (len(chunk) > 0 || err == nil):
			// The common case: a whole line in the reader's buffer. cleanLine
			// may rewrite it in place, which bufio allows until the next read.
			p.line(cleanLine(chunk[:min(len(chunk), maxLineBytes)]))
		case len(chunk) > 0 || err == nil:
			if len(buf)+len(chunk) <= maxLineBytes {
				buf = append(buf, chunk...)
			}
			if !isPrefix {
				p.line(cleanLine(buf))
				buf = buf[:0]
			}
		}
		if err == io.EOF {
			return p.finish(), nil
		}
		if err != nil {
			return p.finish(), err
		}
	}
}

// cleanLine removes what the terminal and GitHub Actions add: the
// byte-order mark, the text a carriage return overwrote, the timestamp,
// colour codes. It reuses b's memory.
func cleanLine(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		b = b[3:]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	// IndexByte first: it is vectorised, LastIndexByte is not.
	if bytes.IndexByte(b, '\r') >= 0 {
		b = b[bytes.LastIndexByte(b, '\r')+1:]
	}
	if n := timestampLen(b); n > 0 {
		b = b[n:]
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = stripANSI(b)
	}
	return b
}

// timestampLen is the length of a leading GitHub Actions timestamp
// ("2026-10-02T10:12:58.0088449Z "), or 0.
func timestampLen(b []byte) int {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(b) < len(shape)+1 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return 0
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if b[i]-'0' > 9 {
			return 0
		}
	}
	i := len(shape)
	if b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i >= len(b) || b[i] != 'Z' {
		return 0
	}
	if i+1 < len(b) && b[i+1] == ' ' {
		return i + 2
	}
	return i + 1
}

// TrimTimestamp is line without the timestamp GitHub Actions puts before
// each line of a job's log, if it has one.
func TrimTimestamp(line []byte) []byte { return line[timestampLen(line):] }

// stripANSI removes terminal escape sequences (ESC [ params letter) in place.
func stripANSI(b []byte) []byte {
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';' || b[j] == '?') {
				j++
			}
			if j < len(b) && (b[j] >= 'A' && b[j] <= 'Z' || b[j] >= 'a' && b[j] <= 'z') {
				i = j
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

func parseSeed(s []byte) *int64 {
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}
