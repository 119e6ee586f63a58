package evidence

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/pitcrew/pitcrew/exunit"
)

// RunLogName is the artifact a fix run keeps every mix test it ran in.
const RunLogName = "pitcrew-evidence.log"

// Phase is a step of a fix's evidence.
type Phase string

// The phases a run log's markers name.
const (
	PhaseBefore Phase = "before" // the test, on the unfixed code
	PhaseAfter  Phase = "after"  // the test, on the fix
	PhaseFile   Phase = "file"   // the test's whole file, on the fix
	PhaseSuite  Phase = "suite"  // the whole suite, on the fix
	// A polluting pair, checked by the verification: the pair on the
	// unfixed code, the test alone there, the pair on the fix.
	PhasePairBase Phase = "pair_base"
	PhaseAlone    Phase = "alone"
	PhasePairHead Phase = "pair_head"
)

// Bounds on what a run log keeps.
const (
	maxRunLogBytes = 16 << 20
	maxSeedsKept   = 600 // seeds of runs, per phase: the after-loop's 500 and some
	maxListed      = 20  // failing seeds and tests listed per phase
)

// PhaseCount is what a run log shows of one phase: its mix test runs,
// those that failed, the seeds they used and the tests that failed.
type PhaseCount struct {
	Runs         int      `json:"runs"`
	FailedRuns   int      `json:"failed_runs"`
	Seeds        []int64  `json:"seeds,omitempty"`         // of every run, up to maxSeedsKept
	FailingSeeds []int64  `json:"failing_seeds,omitempty"` // up to maxListed
	FailingTests []string `json:"failing_tests,omitempty"` // file:line, up to maxListed
}

// Measured is what pitcrew read in a run log itself: per phase, what ran
// and what failed.
type Measured struct {
	Phases map[Phase]*PhaseCount `json:"phases"`
	// Unmarked counts runs printed outside any marker (or under an
	// unknown phase): they are not counted in any phase.
	Unmarked  int  `json:"unmarked,omitempty"`
	Truncated bool `json:"truncated,omitempty"` // the log was longer than the bound
}

// Phase is the count of one phase (zero when the log has none).
func (m Measured) Phase(p Phase) PhaseCount {
	if c := m.Phases[p]; c != nil {
		return *c
	}
	return PhaseCount{}
}

// marker is the line a run log puts before each command's raw output.
var marker = regexp.MustCompile(`^=== pitcrew run phase=([a-z_]+) cmd="(.*)"\s*$`)

// ParseRunLog reads a run log: marker lines, each followed by the raw
// output of the command it names, read with the ExUnit reader as it
// streams by. Memory is bounded by the counts kept, not the log.
func ParseRunLog(r io.Reader) (Measured, error) {
	m := Measured{Phases: map[Phase]*PhaseCount{}}
	lr := &io.LimitedReader{R: r, N: maxRunLogBytes + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	var seg *segment
	closeSeg := func() {
		if seg != nil {
			m.add(seg.phase, seg.finish())
			seg = nil
		}
	}
	seg = newSegment("")
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// An over-long line: its start is enough for the reader.
			seg.write(line)
			seg.write([]byte{'\n'})
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if sub := marker.FindSubmatch(exunit.TrimTimestamp(bytes.TrimRight(line, "\r\n"))); sub != nil {
			closeSeg()
			seg = newSegment(Phase(sub[1]))
		} else if len(line) > 0 {
			seg.write(line)
		}
		if err != nil {
			closeSeg()
			if lr.N <= 0 {
				m.Truncated = true
			}
			if err == io.EOF {
				return m, nil
			}
			return m, err
		}
	}
}

func (m *Measured) add(p Phase, rep exunit.Report) {
	switch p {
	case PhaseBefore, PhaseAfter, PhaseFile, PhaseSuite, PhasePairBase, PhaseAlone, PhasePairHead:
	default:
		m.Unmarked += len(rep.Runs)
		return
	}
	c := m.Phases[p]
	if c == nil {
		c = &PhaseCount{}
		m.Phases[p] = c
	}
	for i, run := range rep.Runs {
		if !run.Summary && !run.CompileError {
			continue // a run cut short says nothing of its counts
		}
		c.Runs++
		failed := run.Failures+run.Invalid > 0 || run.CompileError
		if run.Seed != nil && len(c.Seeds) < maxSeedsKept {
			c.Seeds = append(c.Seeds, *run.Seed)
		}
		if !failed {
			continue
		}
		c.FailedRuns++
		if run.Seed != nil && len(c.FailingSeeds) < maxListed && !slices.Contains(c.FailingSeeds, *run.Seed) {
			c.FailingSeeds = append(c.FailingSeeds, *run.Seed)
		}
		for _, f := range rep.Failures {
			if ref, ok := f.Ref(); ok && f.Invocation == i && len(c.FailingTests) < maxListed && !slices.Contains(c.FailingTests, ref.String()) {
				c.FailingTests = append(c.FailingTests, ref.String())
			}
		}
	}
}

// segment is one command's output, streamed into the ExUnit reader.
type segment struct {
	phase Phase
	w     *io.PipeWriter
	done  chan exunit.Report
}

func newSegment(p Phase) *segment {
	pr, pw := io.Pipe()
	s := &segment{phase: p, w: pw, done: make(chan exunit.Report, 1)}
	go func() {
		rep, _ := exunit.ParseLog(pr)
		_, _ = io.Copy(io.Discard, pr) // drain, so writes never block
		s.done <- rep
	}()
	return s
}

func (s *segment) write(b []byte) { _, _ = s.w.Write(b) }

func (s *segment) finish() exunit.Report {
	_ = s.w.Close()
	return <-s.done
}

// RunsNeeded is how many clean runs in a row show, with 95% confidence,
// that a failure rate of p (0 < p < 1) has dropped below p:
// ⌈ln 0.05 / ln(1−p)⌉ (p = 10% → 29, 5% → 59, 2% → 149). 0 when p is not
// in (0, 1).
func RunsNeeded(p float64) int {
	if !(p > 0 && p < 1) {
		return 0
	}
	return int(math.Ceil(math.Log(0.05) / math.Log(1-p)))
}

// FailureRate is a phase's share of failed runs; 0 without runs.
func (c PhaseCount) FailureRate() float64 {
	if c.Runs == 0 {
		return 0
	}
	return float64(c.FailedRuns) / float64(c.Runs)
}

// Percent prints a rate for a reader: 10%, 2.5%.
func Percent(p float64) string {
	return strconv.FormatFloat(math.Round(p*1000)/10, 'f', -1, 64) + "%"
}
