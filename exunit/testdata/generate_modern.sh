#!/usr/bin/env bash
# Derive the HAND-MADE logs of newer Elixir versions (README.md, "Elixir
# 1.17 to 1.20") from the REAL 1.14 logs under logs/, and their GitHub
# Actions versions with setup-beam's problem matchers (gha_wrap.sh).
#
# Debian ships Elixir 1.14 only, so real 1.18/1.19/1.20 output cannot be
# captured here. Each log is a real one re-shaped line by line to what
# ExUnit's own cli_formatter.ex and formatter.ex print at that version
# (the format strings are quoted in ../versions_samples_test.go); nothing
# else of the log changes. Needs python3 and awk; no Elixir.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOGS=$HERE/logs
codes=$LOGS/EXIT_CODES_MODERN
: >"$codes"

# reshape SRC DST VERSION [PARAMS]: VERSION is 1.18, 1.19 or 1.20; PARAMS,
# when given, is printed as the "Parameters:" line of every failure.
reshape() {
  python3 - "$LOGS/$1" "$LOGS/$2" "$3" "${4:-}" <<'PY'
import re, sys
src, dst, version, params = sys.argv[1:5]
lines = open(src).read().split("\n")
summary = re.compile(r"^(?:(\d+) doctests?, )?(\d+) tests?, (\d+) failures?(?:, (\d+) excluded)?(?:, (\d+) invalid)?(?:, (\d+) skipped)?$")
header = re.compile(r"^ {0,2}\d+\) test ")

def plural(n, one, many):
    return f"{n} {one if n == 1 else many}"

def reshaped(m):
    d, t, f, e, i, s = (int(x or 0) for x in m.groups())
    if version == "1.18":  # the summary did not change before 1.19
        return [m.group(0)]
    if version == "1.19":
        # cli_formatter.ex 1.19: excluded tests are no longer counted by
        # type; the excluded count goes last, in parentheses
        out = (plural(d, "doctest", "doctests") + ", " if d else "") + plural(t - e, "test", "tests")
        out += ", " + plural(f, "failure", "failures")
        out += f", {i} invalid" if i else ""
        out += f", {s} skipped" if s else ""
        out += f" ({e} excluded)" if e else ""
        return [out]
    # 1.20: passed/total of the tests that ran (skipped, excluded and
    # invalid ones aside), by type when there is more than one, then a
    # Failed: line; the racy fixture's failures are all tests
    ran = {"doctests": d, "tests": t - e - s - i}
    total = sum(ran.values())
    failed = {"doctests": 0, "tests": f}
    types = [k for k, n in ran.items() if n]
    out = f"Result: {total - f}/{total} passed" if f else f"Result: {total} passed"
    if len(types) > 1:
        parts = [f"{ran[k] - failed[k]}/{ran[k]} {k}" if f else f"{ran[k]} {k}" for k in types]
        out += " (" + ", ".join(parts) + ")"
    out += f", {i} invalid" if i else ""
    out += f", {s} skipped" if s else ""
    out += f", {e} excluded" if e else ""
    res = ["", out]
    if f:
        res.append("Failed: " + plural(f, "test", "tests"))
    return res

out, i = [], 0
while i < len(lines):
    l = lines[i]
    if l.startswith("Excluding tags: "):
        # Elixir >= 1.17 prints the seed first; "Randomized with seed" goes
        seed = next(re.match(r"^Randomized with seed (\d+)$", x).group(1)
                    for x in lines[i:] if x.startswith("Randomized with seed "))
        out.append(f"Running ExUnit with seed: {seed}, max_cases: 4")
    m = summary.match(l)
    if m:
        out += reshaped(m)
        # drop the blank line and "Randomized with seed N" that followed
        if i + 2 < len(lines) and lines[i + 1] == "" and lines[i + 2].startswith("Randomized with seed "):
            i += 2
        i += 1
        continue
    out.append(l)
    if params and header.match(l):
        out.append("     Parameters: " + params)  # formatter.ex 1.18: before the location
    i += 1
open(dst, "w").write("\n".join(out))
PY
  echo "$2 $5 (from $1)" >>"$codes"
  GHA_CMD=${6:-mix test} "$HERE/gha_wrap.sh" "$LOGS/$2" "$5" >"$LOGS/gha_pm_$2"
}

reshape fail_seed_1.txt handmade_1_18_params_fail.txt 1.18 "%{mode: :b}" 2
reshape pass_seed_2.txt handmade_1_18_pass.txt 1.18 "" 0
reshape fail_seed_1.txt handmade_1_19_fail.txt 1.19 "" 2
reshape pass_seed_2.txt handmade_1_19_pass.txt 1.19 "" 0
reshape fail_seed_1.txt handmade_1_20_fail.txt 1.20 "" 2
reshape pass_seed_2.txt handmade_1_20_pass.txt 1.20 "" 0
reshape in_job_retry.txt handmade_1_20_in_job_retry.txt 1.20 "" 0 "mix test || mix test --failed"
