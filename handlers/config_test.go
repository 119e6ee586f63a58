package handlers

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRepoConfig(t *testing.T) {
	cfg, err := ParseRepoConfig(nil)
	if err != nil || !reflect.DeepEqual(cfg, DefaultRepoConfig()) {
		t.Fatalf("empty file: %+v %v", cfg, err)
	}
	cfg, err = ParseRepoConfig([]byte("flaky:\n  label: flaky-test\n  cooldown: 2h\n"))
	if err != nil || cfg.Flaky.Label != "flaky-test" || cfg.Flaky.Cooldown != 2*time.Hour || cfg.Flaky.VerifyRuns != 50 || !cfg.Flaky.Enabled {
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
	} {
		_, err := ParseRepoConfig([]byte(bad.file))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.file, err, bad.want)
		}
	}
}
