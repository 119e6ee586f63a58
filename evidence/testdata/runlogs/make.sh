#!/usr/bin/env bash
# Builds the run-log samples from real `mix test` output: the logs under
# exunit/testdata/logs, which exunit/testdata/generate.sh made with real
# mix test runs of exunit/testdata/fixture. Each sample is what an agent
# writes to pitcrew-evidence.log: a marker line, then a command's raw
# output, as the prompt asks.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logs=$here/../../../exunit/testdata/logs

# pass_seed_8.txt is itself real: `MIX_ENV=test mix test --seed 8` in
# exunit/testdata/fixture, kept from a run that passed (its race is timing
# dependent, so the same seed fails or passes): a fix's after-run with the
# seed that failed before.
mark() { printf '=== pitcrew run phase=%s cmd="%s"\n' "$1" "$2"; }
run() { mark "$1" "$2"; cat "$logs/$3"; }

# A fix the log backs: the test failed with seeds 4 and 8 in 4 runs before,
# passed 6 times after (seed 8 among them; a loop printing 3 runs in one
# command), then its file and the suite.
{
  run before "mix test test/racy_a_test.exs:27 --seed 4" fail_seed_4.txt
  run before "mix test test/racy_a_test.exs:27" pass_seed_2.txt
  run before "mix test test/racy_a_test.exs:27" fail_seed_8.txt
  run before "mix test test/racy_a_test.exs:27" pass_seed_5.txt
  mark after 'for i in 1 2 3; do mix test test/racy_a_test.exs:27; done'
  cat "$logs/pass_seed_2.txt" "$logs/pass_seed_5.txt" "$logs/pass_seed_2.txt"
  mark after "mix test test/racy_a_test.exs:27 --seed 8"
  cat "$here/pass_seed_8.txt"
  run after "mix test test/racy_a_test.exs:27" pass_seed_2.txt
  run after "mix test test/racy_a_test.exs:27" pass_seed_5.txt
  run file "mix test test/racy_a_test.exs" pass_seed_2.txt
  run suite "mix test" pass_seed_5.txt
} >"$here/backed.log"

# A fix whose after-runs still fail, with CI's wrapping (GitHub Actions
# timestamps) kept as the agent pasted it.
{
  run before "mix test test/racy_b_test.exs:25" gha_fail_seed_1.txt
  run after "mix test test/racy_b_test.exs:25" gha_pass_seed_2.txt
  run after "mix test test/racy_b_test.exs:25 --seed 1" gha_fail_seed_1.txt
} >"$here/still_failing.log"

# Output with no marker, and a marker of a phase that does not exist.
{
  cat "$logs/fail_seed_1.txt"
  run warmup "mix test" pass_seed_2.txt
  run after "mix test test/racy_a_test.exs:27" pass_seed_2.txt
} >"$here/unmarked.log"

# Independent verifications: the failing seed on the pull request's base
# (phase before), on its head (after), then the after-loop on the head.
# One that agrees with the fix: seed 8 fails on the base, passes on the head.
{
  run before "git checkout BASE && mix test test/racy_a_test.exs:27 --seed 8" fail_seed_8.txt
  mark after "git checkout HEAD && mix test test/racy_a_test.exs:27 --seed 8"
  cat "$here/pass_seed_8.txt"
  mark after 'for i in 1 2 3 4; do mix test test/racy_a_test.exs:27; done'
  cat "$logs/pass_seed_2.txt" "$logs/pass_seed_5.txt" "$logs/pass_seed_2.txt" "$logs/pass_seed_5.txt"
} >"$here/verify_agrees.log"

# One where the seed passes on the base too (the failure did not
# reproduce), and one where the seed still fails on the head.
{
  mark before "git checkout BASE && mix test test/racy_a_test.exs:27 --seed 8"
  cat "$here/pass_seed_8.txt"
  mark after "git checkout HEAD && mix test test/racy_a_test.exs:27 --seed 8"
  cat "$here/pass_seed_8.txt"
  run after "mix test test/racy_a_test.exs:27" pass_seed_2.txt
} >"$here/verify_base_green.log"
{
  run before "git checkout BASE && mix test test/racy_a_test.exs:27 --seed 4" fail_seed_4.txt
  run after "git checkout HEAD && mix test test/racy_a_test.exs:27 --seed 4" fail_seed_4.txt
  run after "mix test test/racy_a_test.exs:27" pass_seed_5.txt
} >"$here/verify_head_red.log"

# A verification that also checks the polluting pair the fix names: the
# pair fails on the base each time, the test alone passes there, the pair
# passes on the head. Then the same, but the test also fails alone.
{
  run before "git checkout BASE && mix test test/racy_a_test.exs:27 --seed 8" fail_seed_8.txt
  mark after "git checkout HEAD && mix test test/racy_a_test.exs:27 --seed 8"
  cat "$here/pass_seed_8.txt"
  mark after 'for i in 1 2 3 4; do mix test test/racy_a_test.exs:27; done'
  cat "$logs/pass_seed_2.txt" "$logs/pass_seed_5.txt" "$logs/pass_seed_2.txt" "$logs/pass_seed_5.txt"
  for i in 1 2 3 4 5; do run pair_base "mix test test/racy_b_test.exs:25 test/racy_a_test.exs:27 --seed 8" fail_seed_8.txt; done
  for i in 1 2 3 4 5; do mark alone "mix test test/racy_a_test.exs:27 --seed 8"; cat "$here/pass_seed_8.txt"; done
  for i in 1 2 3 4 5; do mark pair_head "mix test test/racy_b_test.exs:25 test/racy_a_test.exs:27 --seed 8"; cat "$here/pass_seed_8.txt"; done
} >"$here/verify_polluter.log"
{
  run before "git checkout BASE && mix test test/racy_a_test.exs:27 --seed 8" fail_seed_8.txt
  mark after "git checkout HEAD && mix test test/racy_a_test.exs:27 --seed 8"
  cat "$here/pass_seed_8.txt"
  for i in 1 2 3 4 5; do run pair_base "mix test test/racy_b_test.exs:25 test/racy_a_test.exs:27 --seed 8" fail_seed_8.txt; done
  for i in 1 2 3 4 5; do run alone "mix test test/racy_a_test.exs:27 --seed 8" fail_seed_8.txt; done
  for i in 1 2 3 4 5; do mark pair_head "mix test test/racy_b_test.exs:25 test/racy_a_test.exs:27 --seed 8"; cat "$here/pass_seed_8.txt"; done
} >"$here/verify_polluter_alone_fails.log"
