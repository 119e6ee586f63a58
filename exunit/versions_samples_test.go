package exunit

// Samples of what Elixir 1.16 to 1.20 print, written by hand: Debian's
// Elixir is 1.14, so no newer output can be captured here (see
// testdata/README.md). Each follows the format strings below, quoted
// from ExUnit's source as the code search of the public index holds it.
//
// formatter.ex, the version with parameterized tests (1.18+), from
// elixir-lang/elixir lib/ex_unit/lib/ex_unit/formatter.ex:
//
//	test_info(with_counter(counter, "#{name} (#{inspect(module)})"), formatter) <>
//	  test_parameters(parameters, formatter) <>
//	  test_location(with_location(tags), formatter) <> ...
//	defp test_parameters(params, nil) when is_binary(params), do: "     " <> params <> "\n"
//	defp test_parameters(params, nil) when is_map(params),
//	  do: test_parameters("Parameters: #{inspect(params)}", nil)
//	defp pad_line([first, "" | rest], padding), do: [first, "\n" | pad_line(["" | rest], padding)]
//
// (the last line, since 1.16: a message's blank line is not indented).
//
// cli_formatter.ex at 1.19, from a copy of it that keeps its SPDX lines
// ("2021 The Elixir Team"; the index holds no 1.19 version of Elixir's
// own file):
//
//	puts_line("Running ExUnit with seed: #{opts[:seed]}, max_cases: #{opts[:max_cases]}", newline)
//	"#{formatted_test_type_counts}#{config.failure_counter} #{failure_pl}"
//	|> if_true(config.invalid_counter > 0, &(&1 <> ", #{config.invalid_counter} invalid"))
//	|> if_true(config.skipped_counter > 0, &(&1 <> ", " <> skipped("#{config.skipped_counter} skipped", config)))
//	|> if_true(config.excluded_counter > 0, &(&1 <> " (#{config.excluded_counter} excluded)"))
//	defp update_test_counter(test_counter, %{state: {:excluded, _reason}}), do: test_counter
//
// 1.20: the index holds no 1.20 source, so the shapes are those issue 48
// states, as it read them in cli_formatter.ex at v1.20.3 and its tests
// ("Result: 1 passed, 3 excluded", "Result: 0 tests, 1 skipped"). A
// third-party test suite (muex, test/muex/test_runner/port_test.exs)
// quotes output it says it captured from 1.20.3, and agrees: "Finished in
// 0.00 seconds\n\nResult: 1 passed", "Result: 0/1 passed, 1
// skipped\nFailed: 1 test", "Result: 1/2 passed, 1 skipped, 1
// excluded\nFailed: 1 test".

// logParameterized: 1.18, a parameterized test's failure, then a failure
// whose message holds a blank line.
const logParameterized = `Running ExUnit with seed: 4711, max_cases: 4

.....

  1) test stores the row (Hexpm.RepoTest)
     Parameters: %{db: :mysql}
     test/hexpm/repo_test.exs:27
     Assertion with == failed
     code:  assert Repo.count() == 1
     left:  0
     right: 1
     stacktrace:
       test/hexpm/repo_test.exs:29: (test)

...

  2) test keeps the order (Hexpm.OrderTest)
     test/hexpm/order_test.exs:12
     the rows came back out of order

     expected [1, 2], got [2, 1]
     code: assert rows == [1, 2], msg
     stacktrace:
       test/hexpm/order_test.exs:14: (test)

....
Finished in 0.4 seconds (0.3s async, 0.1s sync)
2 doctests, 12 tests, 2 failures, 1 excluded
`

// failureB is the racy fixture's failure of test/racy_b_test.exs:25.
const failureB = `
  1) test get_env/2 sees mode b after work (RacyBTest)
     test/racy_b_test.exs:25
     mode was clobbered by another async test
     code: assert mode == :b, "mode was clobbered by another async test"
     stacktrace:
       test/racy_b_test.exs:27: (test)

`

// log119Fail: 1.19, a failure and a setup_all that invalidated two tests.
const log119Fail = `Running ExUnit with seed: 958114, max_cases: 8
Excluding tags: [:slow]

...` + failureB + `  1) RacySetupAllTest: failure on setup_all callback, all tests have been invalidated
     ** (RuntimeError) setup_all exploded
     stacktrace:
       test/racy_setup_all_test.exs:6: RacySetupAllTest.__ex_unit_setup_all_0/1

..**??..
Finished in 0.1 seconds (0.1s async, 0.00s sync)
3 doctests, 12 tests, 1 failure, 2 invalid, 2 skipped (1 excluded)
`

// log119Pass: 1.19, all passed, one test excluded.
const log119Pass = `Running ExUnit with seed: 2, max_cases: 8
Excluding tags: [:slow]

...
Finished in 0.1 seconds (0.1s async, 0.00s sync)
3 tests, 0 failures (1 excluded)
`

// log120Fail: 1.20, three types of tests, failures in each.
const log120Fail = `Running ExUnit with seed: 958114, max_cases: 4

...` + failureB + `....
Finished in 2.1 seconds (1.9s async, 0.2s sync)

Result: 452/463 passed (53/54 doctests, 385/393 tests, 14/16 properties), 1 skipped
Failed: 1 doctest, 8 tests, 2 properties
`

// log120Pass: 1.20, all passed.
const log120Pass = `Running ExUnit with seed: 2, max_cases: 4

....
Finished in 2.1 seconds (1.9s async, 0.2s sync)

Result: 84 passed (70 tests, 14 properties), 1 excluded
`

// logRetry119 and logRetry120: mix test || mix test --failed.
const logRetry119 = `Running ExUnit with seed: 1, max_cases: 4

...` + failureB + `..
Finished in 0.1 seconds (0.1s async, 0.00s sync)
8 tests, 1 failure (1 excluded)
Running ExUnit with seed: 7, max_cases: 4

.
Finished in 0.01 seconds (0.01s async, 0.00s sync)
1 test, 0 failures
`

const logRetry120 = `Running ExUnit with seed: 1, max_cases: 4

...` + failureB + `..
Finished in 0.1 seconds (0.1s async, 0.00s sync)

Result: 7/8 passed, 1 excluded
Failed: 1 test
Running ExUnit with seed: 7, max_cases: 4

.
Finished in 0.01 seconds (0.01s async, 0.00s sync)

Result: 1 passed
`

// logRepeat: 1.20, mix test --repeat-until-failure 3 || mix test --failed:
// the second repetition fails, the --failed run passes.
const logRepeat = `Running ExUnit with seed: 958114, max_cases: 4, remaining_runs: 3

......
Finished in 0.1 seconds (0.1s async, 0.00s sync)

Result: 6 passed
Running ExUnit with seed: 12345, max_cases: 4, remaining_runs: 2

...` + failureB + `..
Finished in 0.1 seconds (0.1s async, 0.00s sync)

Result: 5/6 passed
Failed: 1 test
Running ExUnit with seed: 99, max_cases: 4

.
Finished in 0.01 seconds (0.01s async, 0.00s sync)

Result: 1 passed
`

// logDryRun: 1.20's --dry-run lists tests without running them, and
// prints no failure and no summary. Only that is known of its output
// here: the listed lines are made up.
const logDryRun = `Running ExUnit with seed: 4711, max_cases: 4

  * test get_env/2 sees mode b after work [test/racy_b_test.exs:25]
  * test mode b first [test/racy_b_test.exs:14]
`

// versionSamples seed the fuzz target.
var versionSamples = []string{logParameterized, log119Fail, log119Pass, log120Fail, log120Pass, logRetry120, logRepeat, logDryRun}
