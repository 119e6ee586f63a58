package main

import (
	"bytes"
	"strings"
	"testing"
)

// The command line a newcomer tries first: help lists every subcommand,
// each answers --help, and a typo exits 2 with the usage instead of
// starting a server.
func TestTheCommandLine(t *testing.T) {
	for _, c := range []struct {
		args         []string
		code         int
		serve        bool
		stdout, errs string
	}{
		{args: nil, serve: true},
		{args: []string{"-config", "pitcrew.yml"}, serve: true},
		{args: []string{"help"}, stdout: "subcommands:\n  replay"},
		{args: []string{"--help"}, stdout: "  healthcheck  exits 0 when"},
		{args: []string{"-h"}, stdout: "usage: pitcrew [-config FILE]"},
		{args: []string{"serve"}, code: 2, errs: "pitcrew: unknown subcommand \"serve\"\n\nusage: pitcrew"},
		{args: []string{"healthcheck", "--help"}, stdout: "usage: pitcrew healthcheck [-config FILE]\n\nExits 0 when"},
		{args: []string{"runs", "-h"}, stdout: "usage: pitcrew runs [-config FILE] list | show RUN_ID | retry RUN_ID\n"},
		{args: []string{"replay", "help"}, stdout: "usage: pitcrew replay --event TYPE"},
		{args: []string{"review", "--help"}, stdout: "usage: pitcrew review [--job flaky|alert] [--base DIR] [--head DIR] FILE|-\n\nReads a unified diff"},
		{args: []string{"exunit", "--help"}, stdout: "usage: pitcrew exunit [FILE]"},
	} {
		var out, errs bytes.Buffer
		code, serve := dispatch(c.args, strings.NewReader(""), &out, &errs)
		if code != c.code || serve != c.serve || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errs.String(), c.errs) {
			t.Errorf("pitcrew %v: code %d serve %v\nstdout: %s\nstderr: %s", c.args, code, serve, out.String(), errs.String())
		}
	}
	var out bytes.Buffer
	usage(&out)
	for _, s := range subcommands {
		if !strings.Contains(out.String(), "  "+s.name+" ") {
			t.Errorf("help lacks %s", s.name)
		}
	}
}
