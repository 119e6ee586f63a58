package exunit

import (
	"bytes"
	"strconv"
)

// The lines that open and close a run, as each Elixir version's
// ExUnit.CLIFormatter prints them (quoted in versions_samples_test.go):
// the seed line and the counts.

// seed reads the seed line, "Running ExUnit with seed: S, ..." before the
// run (Elixir 1.17+) or "Randomized with seed S" after it.
func (p *parser) seed(b []byte) {
	if rest, ok := bytes.CutPrefix(b, []byte("Running ExUnit with seed: ")); ok {
		// "Running ExUnit with seed: 1, max_cases: 4", and from 1.20 under
		// --repeat-until-failure ", remaining_runs: 50"
		seed, rest, _ := bytes.Cut(rest, []byte(", max_cases: "))
		cases := leadingDigits(rest)
		prev := p.cur
		p.open, p.finished = false, false // a new invocation starts with this line
		r := p.run()
		r.Seed = parseSeed(seed)
		r.MaxCases, _ = strconv.Atoi(string(cases))
		if left, ok := bytes.CutPrefix(rest[len(cases):], []byte(", remaining_runs: ")); ok {
			if n, _, ok := number(left); ok {
				p.repetition(r, prev, n)
			}
		}
		return
	}
	if rest, ok := bytes.CutPrefix(b, []byte("Randomized with seed ")); ok {
		// Printed after the summary, up to Elixir 1.16.
		seed := parseSeed(leadingDigits(rest))
		if p.cur >= 0 && p.rep.Runs[p.cur].Seed == nil {
			p.rep.Runs[p.cur].Seed = seed
		} else {
			p.run().Seed = seed
		}
	}
}

// repetition numbers a run of a --repeat-until-failure series: it goes on
// the previous run of the step when that one had one run more left.
func (p *parser) repetition(r *Run, prev, remaining int) {
	r.RemainingRuns, r.Repetition = &remaining, 1
	if prev < 0 || prev != p.cur-1 || p.stepRuns < 2 {
		return // the first run of the step, or runs beyond MaxRuns
	}
	if pr := p.rep.Runs[prev]; pr.RemainingRuns != nil && *pr.RemainingRuns == remaining+1 {
		// One command repeated: its runs share the step's command.
		r.Repetition, r.StepRun = pr.Repetition+1, pr.StepRun
		p.stepRuns--
	}
}

// summary reads the counts line of Elixir up to 1.19: "1 doctest, 2
// properties, 3 tests, 4 failures, 1 invalid, 1 excluded, 2 skipped":
// counts by kind, then the failures, then extras. From 1.19 the excluded
// count ends the line in parentheses: "3 tests, 0 failures (1 excluded)".
func (p *parser) summary(b []byte) {
	format, excluded := Format114, 0
	if rest, ok := bytes.CutSuffix(b, []byte(" excluded)")); ok {
		i := bytes.LastIndex(rest, []byte(" ("))
		if i < 0 {
			return
		}
		n, tail, ok := number(rest[i+2:])
		if !ok || len(tail) > 0 {
			return
		}
		b, format, excluded = rest[:i], Format119, n
	}
	var counts [7]int // doctests, properties, tests, failures, invalid, excluded, skipped
	seenFailures := false
	for len(b) > 0 {
		digits := leadingDigits(b)
		if len(digits) == 0 || len(b) == len(digits) || b[len(digits)] != ' ' {
			return
		}
		n, _ := strconv.Atoi(string(digits))
		b = b[len(digits)+1:]
		word := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			word, b = b[:i], bytes.TrimPrefix(b[i:], []byte(", "))
		} else {
			b = nil
		}
		k, ok := summaryWords[string(word)]
		switch {
		case !ok && seenFailures:
			return
		case !ok: // a kind of test some library registered
			continue
		case k < 3 && seenFailures:
			return
		case k == 3:
			seenFailures = true
		case k > 3 && !seenFailures, k == 5 && format == Format119:
			return
		}
		counts[k] = n
	}
	if !seenFailures {
		return
	}
	r := p.run()
	r.Summary, r.Format = true, format
	r.Doctests, r.Properties, r.Tests, r.Failures, r.Invalid, r.Excluded, r.Skipped =
		counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]+excluded, counts[6]
	p.open, p.finished = false, false
}

var summaryWords = map[string]int{
	"doctest": 0, "doctests": 0, "property": 1, "properties": 1, "test": 2, "tests": 2,
	"failure": 3, "failures": 3, "invalid": 4, "excluded": 5, "skipped": 6,
}

// maxTypes bounds the test types a 1.20 summary may name.
const maxTypes = 8

// result reads Elixir 1.20's summary, b without its "Result: ": "12/13
// passed (3/3 doctests, 9/10 tests), 2 skipped, 1 excluded", "13 passed",
// "0 tests, 1 skipped". ExUnit prints it after "Finished in": the line
// is taken as a summary only there, as a program of some other kind may
// print "Result: 3 passed" too.
func (p *parser) result(b []byte) {
	if !p.finished {
		return
	}
	passed, total, word, rest, ok := item(b)
	if !ok || !(string(word) == "passed" || (string(word) == "tests" && total == 0)) {
		return
	}
	var types []TypeCount
	if r, ok := bytes.CutPrefix(rest, []byte(" (")); ok {
		end := bytes.IndexByte(r, ')')
		if end < 0 {
			return
		}
		if types, ok = breakdown(r[:end], passed, total); !ok {
			return
		}
		rest = r[end+1:]
	}
	var extra [3]int // invalid, skipped, excluded
	for len(rest) > 0 {
		var n, of int
		if rest, ok = bytes.CutPrefix(rest, []byte(", ")); !ok {
			return
		}
		if n, of, word, rest, ok = item(rest); !ok || n != of {
			return
		}
		switch string(word) {
		case "invalid":
			extra[0] = n
		case "skipped":
			extra[1] = n
		case "excluded":
			extra[2] = n
		default:
			return
		}
	}
	r := p.run()
	r.Summary, r.Format, r.Passed, r.Total, r.Failures, r.ByType = true, Format120, passed, total, total-passed, types
	r.Invalid, r.Skipped, r.Excluded = extra[0], extra[1], extra[2]
	r.Doctests, r.Properties, r.Tests = 0, 0, 0
	if len(types) == 0 {
		r.Tests = total
	}
	for _, t := range types {
		r.addType(t.Type, t.Total)
	}
	p.open, p.finished, p.afterResult = false, false, total > passed
}

// breakdown reads the inside of a 1.20 summary's "(3/3 doctests, 9/10
// tests)", or "(3 doctests, 10 tests)" when all passed: the counts by
// type, which must add up to the summary's.
func breakdown(b []byte, passed, total int) ([]TypeCount, bool) {
	var types []TypeCount
	sumPassed, sumTotal := 0, 0
	for len(types) < maxTypes {
		p, t, word, rest, ok := item(b)
		if !ok {
			return nil, false
		}
		types = append(types, TypeCount{Type: typeName(word), Passed: p, Total: t})
		sumPassed, sumTotal = sumPassed+p, sumTotal+t
		if len(rest) == 0 {
			return types, sumPassed == passed && sumTotal == total
		}
		if b, ok = bytes.CutPrefix(rest, []byte(", ")); !ok {
			return nil, false
		}
	}
	return nil, false
}

// failedLine reads "8 tests, 1 property", the "Failed:" line that follows
// a 1.20 summary whose run failed: the failures of each type.
func (p *parser) failedLine(b []byte) {
	r := &p.rep.Runs[p.cur]
	var got [maxTypes]TypeCount
	n, sum := 0, 0
	for {
		k, of, word, rest, ok := item(b)
		if !ok || k != of || n == maxTypes {
			return
		}
		got[n] = TypeCount{Type: typeName(word), Failed: k}
		sum, n = sum+k, n+1
		if len(rest) == 0 {
			break
		}
		if b, ok = bytes.CutPrefix(rest, []byte(", ")); !ok {
			return
		}
	}
	if sum != r.Failures {
		return
	}
	if len(r.ByType) == 0 && n == 1 {
		// One type: the summary did not name it, this line does.
		r.ByType = []TypeCount{{Type: got[0].Type, Passed: r.Passed, Total: r.Total, Failed: sum}}
		r.Tests = 0
		r.addType(got[0].Type, r.Total)
		return
	}
	for _, g := range got[:n] {
		if typeIndex(r.ByType, g.Type) < 0 {
			return
		}
	}
	for _, g := range got[:n] {
		r.ByType[typeIndex(r.ByType, g.Type)].Failed = g.Failed
	}
}

func typeIndex(types []TypeCount, name string) int {
	for i, t := range types {
		if t.Type == name {
			return i
		}
	}
	return -1
}

// addType counts n tests of a type into the run's counts by type.
func (r *Run) addType(name string, n int) {
	switch name {
	case KindDoctest:
		r.Doctests += n
	case KindProperty:
		r.Properties += n
	case KindTest:
		r.Tests += n
	}
}

// item reads "N word" or "N/M word" at the start of b (n == of without
// the "/M"); rest is what follows the word, from the ',' or ' ' after it.
func item(b []byte) (n, of int, word, rest []byte, ok bool) {
	if n, b, ok = number(b); !ok {
		return
	}
	of = n
	if len(b) > 0 && b[0] == '/' {
		if of, b, ok = number(b[1:]); !ok || n > of {
			return 0, 0, nil, nil, false
		}
	}
	if len(b) < 2 || b[0] != ' ' {
		return 0, 0, nil, nil, false
	}
	end := 1
	for end < len(b) && (b[end] >= 'a' && b[end] <= 'z' || b[end] == '_') {
		end++
	}
	if end == 1 || end < len(b) && b[end] != ',' && b[end] != ' ' {
		return 0, 0, nil, nil, false
	}
	return n, of, b[1:end], b[end:], true
}

// typeName is the singular of a test type's printed name.
func typeName(word []byte) string {
	switch string(word) {
	case "doctest", "doctests":
		return KindDoctest
	case "test", "tests":
		return KindTest
	case "property", "properties":
		return KindProperty
	}
	return string(word)
}

// number reads a count at the start of b: at most 9 digits, so it fits.
func number(b []byte) (n int, rest []byte, ok bool) {
	digits := leadingDigits(b)
	if len(digits) == 0 || len(digits) > 9 {
		return 0, b, false
	}
	n, _ = strconv.Atoi(string(digits))
	return n, b[len(digits):], true
}
