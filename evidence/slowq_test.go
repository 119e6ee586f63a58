package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Samples built from real PostgreSQL plans (testdata/slowq/make.sh): a
// report whose numbers agree, and the same report edited the ways a report
// can be wrong.
func TestSlowQueriesAreCheckedAgainstTheirPlans(t *testing.T) {
	for _, c := range []struct {
		file, parseErr, problem, notChecked string
	}{
		{file: "agrees.json"},
		{file: "time_disagrees.json", problem: "the time after the migration (86 ms) disagrees with its plan's Execution Time (28.7 ms)"},
		{file: "no_plan.json", problem: "no plan quoted for the time after the migration"},
		{file: "fix_not_faster.json", problem: "the fix is shown faster (28.7 ms → 2.9 ms) but its plan's Execution Time is 28.7 ms, against 28.7 ms without it"},
		{file: "index_no_write_cost.json", notChecked: "write cost: not checked"},
		{file: "rewrite_unchecked.json", notChecked: "same rows: not checked"},
		{file: "malformed.json", parseErr: "slow-queries.json does not fit its schema: /queries/0/ecto/line: minimum: got 0, want 1"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "slowq", c.file))
			if err != nil {
				t.Fatal(err)
			}
			q, err := ParseSlowQueries(data)
			if c.parseErr != "" {
				if err == nil || err.Error() != c.parseErr {
					t.Fatalf("error %v, want %q", err, c.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(q.Queries) != 1 || !q.Pages[0].Slower() || q.Pages[1].Slower() || q.Queries[0].NPlusOne() {
				t.Fatalf("%+v", q)
			}
			got := CheckSlowQuery(q.Queries[0])
			problems, unchecked := strings.Join(got.Problems, "\n"), strings.Join(got.NotChecked, "\n")
			if c.problem == "" && len(got.Problems) > 0 || c.problem != "" && !strings.Contains(problems, c.problem) {
				t.Errorf("problems:\n%s\nwant %q", problems, c.problem)
			}
			if c.notChecked == "" && len(got.NotChecked) > 0 || c.notChecked != "" && !strings.Contains(unchecked, c.notChecked) {
				t.Errorf("not checked: %q, want %q", unchecked, c.notChecked)
			}
		})
	}
}

func TestExecutionTimeReadsTextAndJSONPlans(t *testing.T) {
	for plan, want := range map[string]float64{
		"Planning Time: 0.4 ms\nExecution Time: 28.683 ms":            28.683,
		`[{"Plan": {}, "Planning Time": 0.1, "Execution Time": 3.5}]`: 3.5,
		"Total runtime: 12.0 ms":                                      12,
	} {
		if got, ok := ExecutionTime(plan); !ok || got != want {
			t.Errorf("%q: %v %v", plan, got, ok)
		}
	}
	if _, ok := ExecutionTime("Seq Scan on orders  (cost=0.00..4.00 rows=1 width=8)"); ok {
		t.Error("read a time from a plan without ANALYZE")
	}
}

func FuzzParseSlowQueries(f *testing.F) {
	for _, name := range []string{"agrees.json", "malformed.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "slowq", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ParseSlowQueries(data)
		if err != nil {
			return
		}
		for _, query := range q.Queries {
			if query.Ecto.Line < 1 || query.Ecto.File == "" && query.Ecto.Function == "" && query.CallsPerPage < 0 {
				t.Fatalf("accepted %+v", query)
			}
			CheckSlowQuery(query)
		}
	})
}
