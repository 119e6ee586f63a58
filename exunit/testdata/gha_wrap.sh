#!/usr/bin/env bash
# Wrap a raw `mix test` log into the shape of a GitHub Actions job log as
# returned by the "download job logs" API (one job's plain-text log):
#   - a UTF-8 BOM before the first line (as real downloads have; GHA_BOM=0 to omit)
#   - every line prefixed by an ISO-8601 UTC timestamp with 7 fractional
#     digits and "Z " (e.g. "2026-10-02T10:12:58.0088449Z "), strictly increasing
#   - runner preamble and a checkout / setup-beam step before, each step header
#     inside "##[group]Run ..." / "##[endgroup]"
#   - the test step header "##[group]Run mix test" ... "##[endgroup]"; as in real
#     GHA logs the group holds only the step's command/shell/env lines and the
#     command's output follows the "##[endgroup]" line
#   - "##[error]Process completed with exit code N." after the output when N != 0,
#     then the post-job cleanup lines.
#   - the problem matchers setup-beam registers (matchers/elixir-matchers.json,
#     on unless the step sets disable_problem_matchers), applied as the runner
#     does: each output line, its colour codes stripped, is tried against the
#     matchers; a multi-line pattern must match on consecutive lines; the line
#     that completes a match is written as "##[error]" (or "##[warning]")
#     followed by that stripped line. Emulated: elixir-mixTestFailure
#     (`^\s*\d+\) (.*)$` then `^\s+(.*):(\d+)$`), elixir-mixCompileError
#     (`^\*\* \((\w+)\) (.*):(\d+): (.*)$`) and elixir-mixCompileWarning
#     (`^warning: (.*)$` then `^  (.*):(\d+)(:\d+)?(: .*)?$`, a warning).
#
# Usage: gha_wrap.sh RAW_LOG [EXIT_CODE] > wrapped.txt
#   EXIT_CODE defaults to a guess from the log: 1 for a compilation error,
#   2 when the summary reports failures or invalid tests, else 0.
# Env:   GHA_CMD   command shown in the step header (default "mix test")
#        GHA_START start time, UTC, "YYYY-MM-DDTHH:MM:SS" (default 2026-10-02T10:12:40)
#        GHA_BOM   1 (default) to emit the BOM, 0 not to
#        GHA_MATCHERS 1 (default) to apply setup-beam's problem matchers, 0 not to
set -euo pipefail

raw=${1:?usage: gha_wrap.sh RAW_LOG [EXIT_CODE]}
code=${2:-}
cmd=${GHA_CMD:-mix test}
start=${GHA_START:-2026-10-02T10:12:40}
bom=${GHA_BOM:-1}
matchers=${GHA_MATCHERS:-1}

if [[ -z $code ]]; then
  if grep -qE '== Compilation error|\((CompileError|SyntaxError|TokenMissingError)\)' "$raw"; then
    code=1
  elif grep -qE '(^|, )[1-9][0-9]* (failures?|invalid)(,|$)' "$raw"; then
    code=2
  else
    code=0
  fi
fi

{
  cat <<PRE
@@ Current runner version: '2.328.0'
@@ ##[group]Operating System
@@ Ubuntu
@@ 24.04.3
@@ LTS
@@ ##[endgroup]
@@ ##[group]Runner Image
@@ Image: ubuntu-24.04
@@ Version: 20250929.60.1
@@ ##[endgroup]
@@ ##[group]GITHUB_TOKEN Permissions
@@ Contents: read
@@ Metadata: read
@@ ##[endgroup]
@@ Secret source: Actions
@@ Prepare workflow directory
@@ Prepare all required actions
@@ Getting action download info
@@ Download action repository 'actions/checkout@v4' (SHA:08eba0b27e820071cde6df949e0beb9ba4906955)
@@ Download action repository 'erlef/setup-beam@v1' (SHA:e6d7c94229049569db56a7ad5a540c051a010af9)
@@ Complete job name: test
@@ ##[group]Run actions/checkout@v4
@@ with:
@@   repository: pitcrew/racy
@@   token: ***
@@   ssh-strict: true
@@   persist-credentials: true
@@   clean: true
@@   fetch-depth: 1
@@ ##[endgroup]
@@ Syncing repository: pitcrew/racy
@@ ##[group]Getting Git version info
@@ Working directory is '/home/runner/work/racy/racy'
@@ [command]/usr/bin/git version
@@ git version 2.51.0
@@ ##[endgroup]
@@ [command]/usr/bin/git init /home/runner/work/racy/racy
@@ Initialized empty Git repository in /home/runner/work/racy/racy/.git/
@@ [command]/usr/bin/git log -1 --format=%H
@@ 3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39
@@ ##[group]Run erlef/setup-beam@v1
@@ with:
@@   otp-version: 25.2.3
@@   elixir-version: 1.14.0
@@   version-type: strict
@@ ##[endgroup]
@@ ##[group]Installing Erlang/OTP
@@ Installing Erlang/OTP OTP-25.2.3 - built on ubuntu-24.04
@@ Installed Erlang/OTP version
@@ ##[endgroup]
@@ ##[group]Installing Elixir
@@ Installing Elixir v1.14.0-otp-24
@@ Installed Elixir version
@@ ##[endgroup]
@@ ##[group]Run ${cmd}
@@ ${cmd}
@@ shell: /usr/bin/bash -e {0}
@@ env:
@@   MIX_ENV: test
@@   INSTALL_DIR_FOR_OTP: /home/runner/work/_temp/.setup-beam/otp
@@   INSTALL_DIR_FOR_ELIXIR: /home/runner/work/_temp/.setup-beam/elixir
@@ ##[endgroup]
PRE
  # the command's output, each line marked "R"; "P" marks a pause
  # (compilation takes a while)
  echo "P"
  # keep the raw bytes of each line (ANSI escapes, \r ...) as they are
  while IFS= read -r line || [[ -n $line ]]; do
    printf 'R%s\n' "$line"
  done <"$raw"
  echo "P"
  if [[ $code != 0 ]]; then
    echo "@@ ##[error]Process completed with exit code ${code}."
  fi
  cat <<'POST'
@@ Post job cleanup.
@@ [command]/usr/bin/git version
@@ git version 2.51.0
@@ [command]/usr/bin/git config --local --name-only --get-regexp core\.sshCommand
@@ [command]/usr/bin/git submodule foreach --recursive sh -c "git config --local --name-only --get-regexp 'core\.sshCommand' && git config --local --unset-all 'core.sshCommand' || :"
@@ Cleaning up orphan processes
POST
} | python3 -c '
import re, sys
on = sys.argv[1] == "1"
ansi = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
# (severity, patterns): a pattern list matches consecutive lines.
matchers = [
    (b"error", [re.compile(rb"^\s*\d+\) (.*)$"), re.compile(rb"^\s+(.*):(\d+)$")]),
    (b"error", [re.compile(rb"^\*\* \((\w+)\) (.*):(\d+): (.*)$")]),
    (b"warning", [re.compile(rb"^warning: (.*)$"), re.compile(rb"^  (.*):(\d+)(:\d+)?(: .*)?$")]),
]
state = [0] * len(matchers)  # how many patterns of each matcher matched so far
out = sys.stdout.buffer
for raw in sys.stdin.buffer:
    line = raw.rstrip(b"\n")
    if not on or not line.startswith(b"R"):
        out.write(line + b"\n")
        continue
    # the runner reads output line by line: a carriage return does not split
    text = ansi.sub(b"", line[1:])
    done = None
    for i, (sev, pats) in enumerate(matchers):
        if state[i] and not pats[state[i]].match(text):
            state[i] = 0
        if pats[state[i]].match(text):
            state[i] += 1
            if state[i] == len(pats):
                state[i] = 0
                done = done or sev
    out.write(b"R##[" + done + b"]" + text + b"\n" if done else line + b"\n")
' "$matchers" | LC_ALL=C awk -v start="$start" -v bom="$bom" '
  BEGIN {
    split(start, dt, "T"); date = dt[1]; split(dt[2], hms, ":")
    # time of day in 100ns ticks
    t = ((hms[1] * 3600) + (hms[2] * 60) + hms[3]) * 10000000 + 1234567
    seed = 12345; first = 1
  }
  function tick(max) { seed = (seed * 16807) % 2147483647; return 1 + (seed % max) }
  function stamp(   s, h, m, sec, frac) {
    s = int(t / 10000000); frac = t - s * 10000000
    h = int(s / 3600); m = int((s % 3600) / 60); sec = s % 60
    return sprintf("%sT%02d:%02d:%02d.%07dZ", date, h, m, sec, frac)
  }
  # preamble lines start "@@ ", raw log lines "R", pauses are "P"
  $0 == "P" { t += 20000000 + tick(9000000); next }
  {
    if (substr($0, 1, 3) == "@@ ") line = substr($0, 4); else line = substr($0, 2)
    t += tick(40000)                       # up to 4 ms between lines
    pre = ""
    if (first && bom == "1") pre = "\357\273\277"
    first = 0
    printf "%s%s %s\n", pre, stamp(), line
  }
'
