package handlers

import (
	"reflect"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/work/flaky"
)

func TestParseRepoConfig(t *testing.T) {
	cfg, err := jobs.Schema().Parse(nil)
	if err != nil || !reflect.DeepEqual(cfg, jobs.Schema().Defaults()) {
		t.Fatalf("empty file: %+v %v", cfg, err)
	}
	cfg, err = jobs.Schema().Parse([]byte("flaky:\n  label: flaky-test\n  cooldown: 2h\n"))
	if err != nil || flaky.Section.Of(cfg).Label != "flaky-test" || flaky.Section.Of(cfg).Cooldown != 2*time.Hour || flaky.Section.Of(cfg).VerifyRuns != 50 || !flaky.Section.Of(cfg).Enabled {
		t.Fatalf("partial file: %+v %v", cfg, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"flaky:\n  lable: x\n", "line 2: flaky.lable: unknown key (the keys of flaky are: enabled, label, verify_runs, cooldown, track_issues, in_job_retries, dashboard, verify, verify_runs_max, verify_daily_limit, siblings, rerun_known, rerun_daily_limit, quarantine_days)"},
		{"flaky:\n  verify_runs: many\n", `line 2: flaky.verify_runs: "many" is not a number (a whole number of runs of the fixed test, 1 to 500, default 50)`},
		{"flaky:\n  verify_runs: 0\n", "line 2: flaky.verify_runs must be between 1 and 500"},
		{"flaky:\n  cooldown: forever\n", `line 2: flaky.cooldown: "forever" is not a duration (a duration such as 90m or 24h, 0s to 720h, default 24h)`},
		{"flaky:\n  enabled: maybe\n", `line 2: flaky.enabled: "maybe" is not true or false (true or false, default true)`},
		{"flaky: [\n", "line 1: this is not valid YAML: did not find expected node content"},
		{"flaky:\n  label: \"\"\n", "line 2: flaky.label must be 1 to 50 characters"},
		{"migrations:\n  paths: [db/]\n", `line 2: migrations.paths: "db/" must be a relative directory pattern ending in migrations/`},
		{"migrations:\n  paths: db/migrations/\n", `line 2: migrations.paths: "db/migrations/" is not a list (a list of 1 to 20 directory patterns ending in migrations/, default ["priv/repo/migrations/", "apps/*/priv/repo/migrations/"])`},
		{"migrations:\n  paths: []\n", "line 2: migrations.paths must list 1 to 20 directories"},
		{"alerts:\n  start_on: [Recovered]\n", `line 2: alerts.start_on: "Recovered" is not a transition that can start a run`},
		{"followups:\n  max_per_run: lots\n", `line 2: followups.max_per_run: "lots" is not a number (a whole number of follow-ups per run, 0 to 20, default 3)`},
		{"daily_limit: 5000\n", "line 1: daily_limit must be between 0 and 1000"},
		{"nosuchjob:\n  enabled: true\n", "line 1: nosuchjob: unknown key (the top-level keys are: daily_limit, daily_issue_limit, followups, flaky, migrations, alerts, sentry)"},
	} {
		_, err := jobs.Schema().Parse([]byte(bad.file))
		if err == nil || err.Error() != bad.want {
			t.Errorf("%q:\n got %v\nwant %s", bad.file, err, bad.want)
		}
	}
}

func TestADeliveryNamesTheConfigurationOfItsRepository(t *testing.T) {
	for body, want := range map[string][]string{
		`{"action":"labeled","repository":{"full_name":"HexPM/hexpm"}}`: {"config:hexpm/hexpm"},
		`{"action":"created","installation":{"id":1}}`:                  nil,
		`{"repository":{"full_name":"../../etc"}}`:                      nil,
		`{"repository":`: nil,
	} {
		if got := CachedReads([]byte(body)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
