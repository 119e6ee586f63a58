package follow

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

const ciStep = "Run the test again and again"

// The workflow's script, run with bash and a mix that prints real ExUnit
// output, prints what pitcrew counts: each run under its marker, the
// seed given first, and the base stopping once it has failed enough.
func TestTheWorkflowScriptPrintsWhatPitcrewCounts(t *testing.T) {
	script := testenv.CIStepScript(t, CIWorkflow, ciStep)
	env := func(phase, runs, stop string) map[string]string {
		return map[string]string{"TEST": "test/racy_a_test.exs:27", "SEED": "8", "RUNS": runs, "PHASE": phase, "STOP_AFTER": stop}
	}
	baseLog, code := testenv.RunCIScript(t, script, env("before", "50", "3"),
		"fail_seed_8.txt", "pass_seed_2.txt", "fail_seed_4.txt", "pass_seed_5.txt", "fail_seed_1.txt", "pass_seed_2.txt")
	if code != 0 {
		t.Fatalf("the script failed (%d) where the test did:\n%s", code, baseLog)
	}
	headLog, code := testenv.RunCIScript(t, script, env("after", "6", "0"), "pass_seed_8.txt", "pass_seed_2.txt", "pass_seed_5.txt")
	if code != 0 {
		t.Fatalf("the script failed (%d):\n%s", code, headLog)
	}
	count := func(log string, p evidence.Phase) evidence.PhaseCount {
		m, err := evidence.ParseRunLog(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		return m.Phase(p)
	}
	base, head := count(baseLog, evidence.PhaseBefore), count(headLog, evidence.PhaseAfter)
	if base.Runs != 5 || base.FailedRuns != 3 || !slices.Equal(base.FailingSeeds, []int64{8, 4, 1}) || base.Seeds[0] != 8 {
		t.Fatalf("base: %+v\n%s", base, baseLog)
	}
	if head.Runs != 6 || head.FailedRuns != 0 || head.Seeds[0] != 8 {
		t.Fatalf("head: %+v", head)
	}
	if !strings.Contains(baseLog, `=== pitcrew run phase=before cmd="mix test test/racy_a_test.exs:27 --seed 8"`) || !strings.Contains(baseLog, "pitcrew: stopping after 3 failures in 5 runs") {
		t.Fatalf("base log:\n%s", baseLog)
	}
	if r := evidence.CheckCI(base, head, 8, evidence.CIAsked{Base: 50, Head: 6, BaseStopAfter: 3}, false); r.Verdict != evidence.VerdictClean || r.Needed != 5 {
		t.Fatalf("%+v", r)
	}
}

// Inputs reach the script as environment variables and are checked: one
// that is not what pitcrew sends runs nothing.
func TestTheWorkflowScriptRefusesOtherInputs(t *testing.T) {
	script := testenv.CIStepScript(t, CIWorkflow, ciStep)
	good := map[string]string{"TEST": "test/a_test.exs:12", "SEED": "8", "RUNS": "2", "PHASE": "after", "STOP_AFTER": "0"}
	for key, bad := range map[string]string{
		"TEST": "test/a_test.exs:12; curl evil.example", "PHASE": "during", "SEED": "$(id)", "RUNS": "1e9",
	} {
		env := maps.Clone(good)
		env[key] = bad
		log, code := testenv.RunCIScript(t, script, env, "pass_seed_2.txt")
		if code != 2 || strings.Contains(log, "=== pitcrew run") {
			t.Errorf("%s=%q: exit %d\n%s", key, bad, code, log)
		}
	}
	env := maps.Clone(good)
	env["TEST"] = "test/../../etc/x_test.exs:1"
	if _, code := testenv.RunCIScript(t, script, env, "pass_seed_2.txt"); code != 2 {
		t.Errorf("a path climbing out of the checkout: exit %d", code)
	}
}

// The workflow takes exactly the inputs pitcrew dispatches, and names its
// runs so that pitcrew finds them.
func TestTheWorkflowTakesWhatPitcrewSends(t *testing.T) {
	var w struct {
		RunName string `yaml:"run-name"`
		On      struct {
			Dispatch struct {
				Inputs map[string]any `yaml:"inputs"`
			} `yaml:"workflow_dispatch"`
		} `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(CIWorkflow), &w); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(w.On.Dispatch.Inputs))
	if want := []string{"nonce", "phase", "runs", "seed", "sha", "stop_after", "test"}; !slices.Equal(keys, want) {
		t.Fatalf("inputs %v, want %v", keys, want)
	}
	nonce := newNonce()
	title := strings.NewReplacer("${{ inputs.nonce }}", nonce, "${{ inputs.phase }}", "after").Replace(w.RunName)
	if got, phase, ok := ParseCITitle(title); !ok || got != nonce || phase != evidence.PhaseAfter {
		t.Fatalf("title %q read as %q %q %v", title, got, phase, ok)
	}
	for _, title := range []string{"pitcrew verify " + nonce, "pitcrew verify " + nonce + " suite", "pitcrew verify NOTANONCE after", "CI"} {
		if _, _, ok := ParseCITitle(title); ok {
			t.Errorf("%q read as a verification's run", title)
		}
	}
}
