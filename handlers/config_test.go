package handlers

import (
	"reflect"
	"strings"
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
		{"flaky:\n  lable: x\n", "field lable not found"},
		{"flaky:\n  verify_runs: many\n", "cannot unmarshal"},
		{"flaky:\n  verify_runs: 0\n", "verify_runs"},
		{"flaky:\n  cooldown: forever\n", "cannot unmarshal"},
		{"flaky: [\n", "did not find expected"},
		{"flaky:\n  label: \"\"\n", "flaky.label"},
		{"migrations:\n  paths: [db/]\n", "ending in migrations/"},
		{"migrations:\n  paths: []\n", "1 to 20"},
		{"alerts:\n  start_on: [Recovered]\n", "alerts.start_on"},
		{"daily_limit: 5000\n", "daily_limit must be"},
		{"nosuchjob:\n  enabled: true\n", "field nosuchjob not found"},
	} {
		_, err := jobs.Schema().Parse([]byte(bad.file))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.file, err, bad.want)
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
