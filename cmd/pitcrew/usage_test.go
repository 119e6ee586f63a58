package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReviewNamesAnUnknownJobBeforeItsUsage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"a job pitcrew has no rules for", []string{"--job", "slow", "-"}, 2, "pitcrew review: unknown job \"slow\" (flaky or alert)\n\nusage: pitcrew review"},
		{"an empty job", []string{"--job", "", "-"}, 2, "pitcrew review: unknown job \"\" (flaky or alert)"},
		{"no diff at all", []string{"--job", "alert"}, 2, "usage: pitcrew review"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			code := reviewCommand(tc.args, strings.NewReader(""), &out, &errs)
			if code != tc.code || !strings.HasPrefix(errs.String(), tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, errs.String(), tc.code, tc.stderr)
			}
		})
	}
}
