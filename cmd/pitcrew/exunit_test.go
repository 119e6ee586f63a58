package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/exunit"
)

func TestExunitCommandReportsElixir120Runs(t *testing.T) {
	const log = `Running ExUnit with seed: 958114, max_cases: 4, remaining_runs: 2

......
Finished in 0.1 seconds (0.1s async, 0.00s sync)

Result: 6 passed
Running ExUnit with seed: 12345, max_cases: 4, remaining_runs: 1

  1) test sees mode b (RacyBTest)
     Parameters: %{mode: :b}
     test/racy_b_test.exs:20
     Assertion with == failed
     stacktrace:
       test/racy_b_test.exs:22: (test)

Finished in 0.1 seconds (0.1s async, 0.00s sync)

Result: 452/463 passed (53/54 doctests, 385/393 tests, 14/16 properties), 2 invalid, 1 skipped, 3 excluded
Failed: 1 doctest, 8 tests, 2 properties
`
	var out, errs bytes.Buffer
	if code := exunitCommand(nil, strings.NewReader(log), &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var rep exunit.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	first, last := rep.Runs[0], rep.Runs[1]
	if len(rep.Runs) != 2 || *first.Seed != 958114 || first.Repetition != 1 || *first.RemainingRuns != 2 || first.Passed != 6 || first.Total != 6 {
		t.Fatalf("%s", out.String())
	}
	want := []exunit.TypeCount{{Type: "doctest", Passed: 53, Total: 54, Failed: 1}, {Type: "test", Passed: 385, Total: 393, Failed: 8}, {Type: "property", Passed: 14, Total: 16, Failed: 2}}
	if *last.Seed != 12345 || last.Repetition != 2 || last.Format != exunit.Format120 || last.Passed != 452 || last.Total != 463 ||
		last.Failures != 11 || last.Skipped != 1 || last.Excluded != 3 || last.Invalid != 2 || !reflect.DeepEqual(last.ByType, want) {
		t.Fatalf("%s", out.String())
	}
	if f := rep.Failures[0]; f.Line != 20 || f.Parameters != "%{mode: :b}" || f.Invocation != 1 {
		t.Fatalf("%+v", f)
	}
	for _, key := range []string{`"format": "1.20"`, `"passed": 452`, `"by_type"`, `"repetition": 2`, `"remaining_runs": 1`, `"parameters": "%{mode: :b}"`} {
		if !strings.Contains(out.String(), key) {
			t.Errorf("the JSON lacks %s", key)
		}
	}
}
