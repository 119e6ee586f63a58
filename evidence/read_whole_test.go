package evidence

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// Shapes the rules read in CI files outside GitHub Actions and in test
// support, across the files of one change, with each file read whole at
// base and head as pitcrew reads a pull request.

// sides is one file's text at base and head ("" where it does not exist).
type sides struct{ base, head string }

// checkWhole reviews a change of files given whole on both sides: the
// diff is each file's one hunk between its common start and end.
func checkWhole(t *testing.T, files map[string]sides) Review {
	t.Helper()
	return checkWholeFor(t, JobFlaky, files)
}

func checkWholeFor(t *testing.T, job Job, files map[string]sides) Review {
	t.Helper()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var diff strings.Builder
	base, head := map[string]string{}, map[string]string{}
	for _, p := range paths {
		f := files[p]
		from, to := "a/"+p, "b/"+p
		if f.base == "" {
			from = "/dev/null" // a file the change adds
		}
		if f.head == "" {
			to = "/dev/null" // a file the change deletes
		}
		diff.WriteString("--- " + from + "\n+++ " + to + "\n" + unifiedMinimal(f.base, f.head))
		base[p], head[p] = f.base, f.head
	}
	d, err := ParseDiff(strings.NewReader(diff.String()))
	if err != nil {
		t.Fatal(err)
	}
	return CheckFiles(d, job, base, head)
}

func TestCIShapesReadWhole(t *testing.T) {
	travis := "language: elixir\nmatrix:\n  include:\n    - elixir: 1.8.2\n      otp_release: 20.3\n    - elixir: 1.9.4\n      otp_release: 22.2\n\nscript:\n  - mix test\n"
	compose := "services:\n  test:\n    build: .\n    command: >\n      sh -c \"mix ecto.create &&\n             mix test\"\n"
	earthfile := "test:\n  FROM +deps\n  WITH DOCKER --compose docker-compose.yml --service postgres\n    RUN mix ecto.create && \\\n        mix test\n  END\n"
	makefile := "services:\n\tdocker compose up -d postgres\n\ntest: services\n\tmix test\n"
	gitlab := "test:\n  image: elixir:1.16\n  script:\n    - mix test\n"
	actions := "jobs:\n  test:\n    continue-on-error: ${{ matrix.experimental == true }}\n    strategy:\n      matrix:\n        include:\n          - pair:\n              elixir: \"1.13.4\"\n              otp: \"25.3\"\n          - pair:\n              elixir: \"1.15.7\"\n              otp: \"26.1\"\n    steps:\n      - run: mix test\n"
	// A Makefile recipe that polls a service's readiness (each sleep paces
	// a check, in a loop written over continued lines) waits for the cause.
	polled := strings.Replace(makefile, "postgres\n", "postgres\n\t@for i in $$(seq 1 60); do \\\n\t\tpg_isready -q && break; \\\n\t\tsleep 1; \\\n\tdone\n", 1)
	runWholeCases(t, []wholeCase{
		{"a Travis matrix entry allowed to fail", map[string]sides{".travis.yml": {travis, strings.Replace(travis, "\nscript:", "  allow_failures:\n    - otp_release: 20.3\n\nscript:", 1)}}, "failure-ignored"},
		{"a fixed sleep in a compose service's folded command", map[string]sides{"docker-compose.test.yml": {compose, strings.Replace(compose, "sh -c \"mix ecto.create &&", "sh -c \"sleep 15 &&\n             mix ecto.create &&", 1)}}, "sleep-added"},
		{"a fixed sleep in an Earthfile's test step", map[string]sides{"Earthfile": {earthfile, strings.Replace(earthfile, "RUN mix ecto.create && \\", "RUN sleep 10 && \\\n        mix ecto.create && \\", 1)}}, "sleep-added"},
		{"a browser wait raised through a CI variable", map[string]sides{".gitlab-ci.yml": {gitlab, strings.Replace(gitlab, "  script:", "  variables:\n    WALLABY_MAX_WAIT_TIME: \"15000\"\n  script:", 1)}}, "receive-timeout-raised"},
		{"a variable set in CI that skips", map[string]sides{".travis.yml": {travis, strings.Replace(travis, "\nscript:", "\nenv:\n  - SKIP_DISTRIBUTED=true\n\nscript:", 1)}}, "test-skipped"},
		{"a variable set in CI that switches a run off", map[string]sides{".gitlab-ci.yml": {gitlab, strings.Replace(gitlab, "  script:", "  variables:\n    RUN_SLOW_TESTS: \"false\"\n  script:", 1)}}, "test-skipped"},
		{"the test run narrowed to some paths", map[string]sides{".gitlab-ci.yml": {gitlab, strings.Replace(gitlab, "    - mix test\n", "    - mix test test/unit test/web\n", 1)}}, "test-skipped"},
		{"a second job for a path beside the full run", map[string]sides{".gitlab-ci.yml": {gitlab, gitlab + "\nslow:\n  script:\n    - mix test test/slow\n"}}, ""},
		{"a job that ran the tests removed", map[string]sides{".gitlab-ci.yml": {gitlab + "\nintegration:\n  script:\n    - mix test --include integration\n", gitlab}}, "test-skipped"},
		{"a test job rewritten", map[string]sides{".gitlab-ci.yml": {gitlab, strings.Replace(gitlab, "    - mix test\n", "    - mix test --cover\n", 1)}}, ""},
		{"a matrix entry the CI ran marked experimental", map[string]sides{".github/workflows/ci.yml": {actions, strings.Replace(actions, "              otp: \"25.3\"\n", "              otp: \"25.3\"\n            experimental: true\n", 1)}}, "failure-ignored"},
		{"a new matrix entry tried as experimental", map[string]sides{".github/workflows/ci.yml": {actions, strings.Replace(actions, "    steps:", "          - pair:\n              elixir: \"1.18.0-rc.0\"\n              otp: \"27.0\"\n            experimental: true\n    steps:", 1)}}, ""},
		{"colours switched off in CI", map[string]sides{".gitlab-ci.yml": {gitlab, strings.Replace(gitlab, "  script:", "  variables:\n    NO_COLOR: \"1\"\n  script:", 1)}}, ""},
		{"a readiness loop in a Makefile", map[string]sides{"Makefile": {makefile, polled}}, ""},
	})
}

func TestTestSupportAndHelpersReadWhole(t *testing.T) {
	flags := "defmodule App.FlagHelpers do\n  @moduledoc \"\"\"\n  Flags for tests.\n  \"\"\"\n\n  def enable_flag(flag) do\n    {:ok, true} = FunWithFlags.enable(flag)\n  end\nend\n"
	flagsDoc := strings.Replace(flags, "  Flags for tests.\n", "  Flags for tests. Modules using them run alone:\n\n      use AppWeb.ConnCase, async: false\n", 1)
	liveTest := "defmodule AppWeb.EditorLiveTest do\n  use AppWeb.ConnCase, async: true\n  import App.FlagHelpers\n\n  test \"editor\", %{conn: conn} do\n    enable_flag(:editor)\n    assert conn\n  end\nend\n"
	helper := "exclude =\n  if System.otp_release() < \"25\" do\n    [:distributed]\n  else\n    []\n  end\n\nExUnit.start(exclude: exclude)\n"
	ttl := "defmodule TTLTest do\n  use ExUnit.Case, async: true\n\n  @ttl 100\n\n  test \"expires\" do\n    :ok = Cache.put(:a, 1, ttl: @ttl)\n    Process.sleep(@ttl * 2)\n    refute Cache.get(:a)\n  end\nend\n"
	runWholeCases(t, []wholeCase{
		{"a support module's doc example is text", map[string]sides{"test/support/flag_helpers.ex": {flags, flagsDoc}}, ""},
		{"a module made to run alone that uses support touching global flags",
			map[string]sides{"test/support/flag_helpers.ex": {flags, flagsDoc}, "test/app_web/editor_live_test.exs": {liveTest, strings.Replace(liveTest, "async: true", "async: false", 1)}}, ""},
		{"the suite's exclusion made to hold unless a variable is set", map[string]sides{"test/test_helper.exs": {helper, strings.Replace(helper, "< \"25\" do", "< \"25\" or System.get_env(\"DISTRIBUTED\") != \"1\" do", 1)}}, "tag-excluded"},
		{"sleeps lengthened through a new attribute", map[string]sides{"test/ttl_test.exs": {ttl, strings.Replace(strings.Replace(ttl, "  @ttl 100\n", "  @ttl 100\n  @expiry_wait @ttl * 10\n", 1), "Process.sleep(@ttl * 2)", "Process.sleep(@expiry_wait)", 1)}}, "sleep-lengthened"},
	})
}

// wholeCase is a change of files read whole, and the concern it must
// raise ("" for none).
type wholeCase struct {
	name  string
	files map[string]sides
	rule  string
}

func runWholeCases(t *testing.T, cases []wholeCase) {
	t.Helper()
	runWholeCasesFor(t, JobFlaky, cases)
}

func runWholeCasesFor(t *testing.T, job Job, cases []wholeCase) {
	t.Helper()
	for _, c := range cases {
		r := checkWholeFor(t, job, c.files)
		switch {
		case c.rule == "" && r.Verdict == VerdictConcern:
			t.Errorf("%s: called a concern: %+v", c.name, r.Findings)
		case c.rule != "" && !hasConcern(r, c.rule):
			t.Errorf("%s: want a %s concern, got %+v", c.name, c.rule, r.Findings)
		}
	}
}

// Checks restructured, not lost: moved into a helper of the file that
// still asserts them, a poll replaced by a wait for the message, a start
// moved after what it needs.
func TestRestructuredChecksAreKept(t *testing.T) {
	spans := "defmodule TelemetryTest do\n  use ExUnit.Case, async: true\n\n  test \"post\" do\n    post()\n    assert_receive {:telemetry, :start, m}\n    assert is_integer(m.time)\n    assert_receive {:telemetry, :stop, s}\n    assert s.duration >= 0\n    assert s.bytes == 2\n  end\n\n  test \"get\" do\n    get()\n    assert_receive {:telemetry, :start, m}\n    assert is_integer(m.time)\n    assert_receive {:telemetry, :stop, s}\n    assert s.duration >= 0\n    assert s.bytes == 0\n  end\nend\n"
	spansHelped := "defmodule TelemetryTest do\n  use ExUnit.Case, async: true\n\n  test \"post\" do\n    post()\n    s = assert_span()\n    assert s.bytes == 2\n  end\n\n  test \"get\" do\n    get()\n    s = assert_span()\n    assert s.bytes == 0\n  end\n\n  defp assert_span do\n    assert_receive {:telemetry, :start, m}\n    assert is_integer(m.time)\n    assert_receive {:telemetry, :stop, s}\n    assert s.duration >= 0\n    s\n  end\nend\n"
	polled := "defmodule ExitTest do\n  use ExUnit.Case, async: true\n\n  test \"exits\" do\n    {:ok, conn} = Conn.start_link()\n    Conn.kill(conn)\n    wait_until_dead(conn)\n    refute Process.alive?(conn)\n  end\n\n  defp wait_until_dead(pid, n \\\\ 20) do\n    if Process.alive?(pid) and n > 0 do\n      Process.sleep(50)\n      wait_until_dead(pid, n - 1)\n    end\n  end\nend\n"
	monitored := "defmodule ExitTest do\n  use ExUnit.Case, async: true\n\n  test \"exits\" do\n    {:ok, conn} = Conn.start_link()\n    ref = Process.monitor(conn)\n    Conn.kill(conn)\n    assert_receive {:DOWN, ^ref, :process, ^conn, :killed}, 1_000\n    refute Process.alive?(conn)\n  end\nend\n"
	poller := "defmodule App.PollerHelpers do\n  def start_poller(opts) do\n    pid = start_supervised!({Poller, opts})\n    Mox.allow(App.Mock, self(), pid)\n    pid\n  end\nend\n"
	allowedFirst := "defmodule App.PollerHelpers do\n  def start_poller(opts) do\n    name = {:via, Registry, {App.Registry, make_ref()}}\n    Mox.allow(App.Mock, self(), fn -> GenServer.whereis(name) end)\n    start_supervised!({Poller, Keyword.put(opts, :name, name)})\n  end\nend\n"
	collected := "defmodule EventsTest do\n  use ExUnit.Case, async: true\n\n  setup do\n    {:ok, collector} =\n      start_supervised(\n        {Collector, [[:app, :stop]]}\n      )\n\n    %{collector: collector}\n  end\n\n  test \"stops\", %{collector: collector} do\n    App.run()\n    assert [{[:app, :stop], _, _}] = Collector.events(collector)\n  end\nend\n"
	forwarded := "defmodule EventsTest do\n  use ExUnit.Case, async: true\n\n  setup do\n    id = make_ref()\n    :telemetry.attach(id, [:app, :stop], &__MODULE__.forward/4, self())\n    on_exit(fn -> :telemetry.detach(id) end)\n  end\n\n  test \"stops\" do\n    App.run()\n    assert_receive {[:app, :stop], _, _}\n  end\n\n  def forward(event, m, meta, pid), do: send(pid, {event, m, meta})\nend\n"
	racing := "defmodule CounterTest do\n  use ExUnit.Case, async: true\n\n  test \"counts\" do\n    {:ok, a} =\n      start_supervised(\n        {Bumper, []}\n      )\n\n    Counter.bump()\n    assert Counter.get() >= 1\n  end\nend\n"
	runWholeCases(t, []wholeCase{
		{"a setup's collector process replaced by a handler that sends each event", map[string]sides{"test/events_test.exs": {collected, forwarded}}, ""},
		{"a process a test started to race the counter removed", map[string]sides{"test/counter_test.exs": {racing, strings.Replace(racing, "    {:ok, a} =\n      start_supervised(\n        {Bumper, []}\n      )\n", "    :ok = Counter.reset()\n", 1)}}, "concurrency-reduced"},
		{"assertions moved into a helper that asserts", map[string]sides{"test/telemetry_test.exs": {spans, spansHelped}}, ""},
		{"a start moved after the mock's allowance", map[string]sides{"test/support/poller_helpers.ex": {poller, allowedFirst}}, ""},
	})
	// The poll's call and its definition in hunks of their own, as git
	// shows them: the block of the wait removed no sleep.
	diff := "--- a/test/exit_test.exs\n+++ b/test/exit_test.exs\n@@ -5,4 +5,5 @@\n     {:ok, conn} = Conn.start_link()\n+    ref = Process.monitor(conn)\n     Conn.kill(conn)\n-    wait_until_dead(conn)\n+    assert_receive {:DOWN, ^ref, :process, ^conn, :killed}, 1_000\n     refute Process.alive?(conn)\n@@ -9,8 +10,1 @@\n   end\n-\n-  defp wait_until_dead(pid, n \\\\ 20) do\n-    if Process.alive?(pid) and n > 0 do\n-      Process.sleep(50)\n-      wait_until_dead(pid, n - 1)\n-    end\n-  end\n"
	d, err := ParseDiff(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	if r := CheckFiles(d, JobFlaky, map[string]string{"test/exit_test.exs": polled}, map[string]string{"test/exit_test.exs": monitored}); r.Verdict == VerdictConcern {
		t.Errorf("a poll replaced by a monitor's message: called a concern: %+v", r.Findings)
	}
}

// A check rewritten into another that says as much: a value folded into
// the pattern that bound it, Phoenix's response helpers, a type's own
// equality, a setup's fixture no longer made with a bang call.
func TestChecksRewrittenToSayAsMuch(t *testing.T) {
	mod := func(body string) string {
		return "defmodule RunnerTest do\n  use ExUnit.Case, async: true\n\n" + body + "end\n"
	}
	test := func(lines ...string) string {
		return "  test \"runs\" do\n    job_id = Runner.start()\n" + strings.Join(lines, "\n") + "\n  end\n"
	}
	runWholeCases(t, []wholeCase{
		{"the values checked after a receive pinned in its pattern", map[string]sides{"test/runner_test.exs": {
			mod(test("    assert_receive {:done, id, result}, 1_000", "    assert id == job_id", "    assert result == {:ok, 42}")),
			mod(test("    assert_receive {:done, ^job_id, {:ok, 42}}, 1_000"))}}, ""},
		{"a bound value's range made the literal it must be", map[string]sides{"test/runner_test.exs": {
			mod(test("    assert {:error, :throttled, retry_after} = Runner.hit(job_id)", "    assert retry_after in 1..1_000")),
			mod(test("    assert {:error, :throttled, 500} = Runner.hit(job_id)"))}}, ""},
		{"rows read in order, their fields matched in one pattern", map[string]sides{"test/runner_test.exs": {
			mod(test("    assert [first, second] = Repo.all(from r in Reply, where: r.job_id == ^job_id)", "    assert first.body == \"Umbrella, always.\"", "    assert second.body == \"Poncho.\"")),
			mod(test("    replies = Repo.all(from r in Reply, where: r.job_id == ^job_id, order_by: r.id)", "    assert [%Reply{body: \"Umbrella, always.\"}, %Reply{body: \"Poncho.\"}] = replies"))}}, ""},
		{"a status and a body read through json_response", map[string]sides{"test/runner_test.exs": {
			mod(test("    conn = get(build_conn(), \"/jobs/1\")", "    assert conn.status == 200", "    assert conn.resp_body == ~s({\"id\":1})")),
			mod(test("    conn = get(build_conn(), \"/jobs/1\")", "    assert json_response(conn, 200) == %{\"id\" => job_id}"))}}, ""},
		{"decimals compared by their own equality", map[string]sides{"test/runner_test.exs": {
			mod(test("    assert Runner.total(job_id) == Decimal.new(\"10.50\")")),
			mod(test("    assert Decimal.equal?(Runner.total(job_id), \"10.50\")"))}}, ""},
		{"a setup's directory given by tmp_dir", map[string]sides{"test/runner_test.exs": {
			mod("  setup do\n    File.mkdir_p!(\"tmp/out\")\n    :ok\n  end\n\n  test \"writes\" do\n    path = Path.join(\"tmp/out\", \"a.csv\")\n    Runner.write(path)\n    assert File.read!(path) == \"a\"\n  end\n"),
			mod("  @moduletag :tmp_dir\n\n  test \"writes\", %{tmp_dir: dir} do\n    path = Path.join(dir, \"a.csv\")\n    Runner.write(path)\n    assert \"a\" == File.read!(path)\n  end\n")}}, ""},
		{"the same two checks given an argument", map[string]sides{"test/runner_test.exs": {
			mod(test("    assert {:ok, names} = Cache.names()", "    assert {:ok, ^names} = Cache.names()")),
			mod(test("    assert {:ok, names} = Cache.names(job_id)", "    assert {:ok, ^names} = Cache.names(job_id)"))}}, ""},
	})
}

// Waits raised where the tests run or in the code under test.
func TestWaitsRaisedElsewhere(t *testing.T) {
	travis := "language: elixir\nscript:\n  - mix test\n"
	renderer := "defmodule Ink.Renderer do\n  def render(port, md) do\n    send(port, {self(), {:command, md}})\n\n    receive do\n      {^port, {:data, html}} -> {:ok, html}\n    after\n      5_000 ->\n        {:error, :timeout}\n    end\n  end\nend\n"
	runWholeCases(t, []wholeCase{
		{"a wait raised where a variable with a default is set", map[string]sides{"config/test.exs": {"import Config\n\nconfig :wallaby, driver: Wallaby.Chrome\n", "import Config\n\nconfig :wallaby, driver: Wallaby.Chrome,\n  max_wait_time: if(System.get_env(\"CI\", \"\") != \"\", do: 10_000, else: 3_000)\n"}}, "timer-stretched"},
		{"a repo timeout raised only in CI", map[string]sides{"config/test.exs": {"import Config\n\nconfig :app, App.Repo,\n  pool_size: 10\n", "import Config\n\nci? = System.get_env(\"CI\") == \"true\"\n\nconfig :app, App.Repo,\n  pool_size: 10,\n  timeout: if(ci?, do: 60_000, else: 15_000)\n"}}, "timer-stretched"},
		{"travis_wait on the suite", map[string]sides{".travis.yml": {travis, strings.Replace(travis, "- mix test", "- travis_wait 30 mix test", 1)}}, "test-timeout-raised"},
		{"a receive's after raised through a compile_env attribute", map[string]sides{"lib/ink/renderer.ex": {renderer,
			strings.Replace(strings.Replace(renderer, "      5_000 ->", "      @reply_timeout ->", 1), "  def render", "  @reply_timeout Application.compile_env(:ink, :reply_timeout, 30_000)\n\n  def render", 1)}}, "receive-timeout-raised"},
	})
}

// A module made to run alone is a concern when, read whole, it touches
// nothing global; a function that says it sets what is global is.
func TestModulesMadeToRunAloneReadWhole(t *testing.T) {
	backend := "defmodule Nx.BackendTest do\n  use ExUnit.Case, async: true\n\n  test \"returns the previous backend\" do\n    assert Nx.%s(TestBackend) == {Nx.BinaryBackend, []}\n  end\nend\n"
	global, local := fmt.Sprintf(backend, "global_default_backend"), fmt.Sprintf(backend, "default_backend")
	serial := func(s string) string { return strings.Replace(s, "async: true", "async: false", 1) }
	runWholeCases(t, []wholeCase{
		{"a module that sets the global default backend made to run alone", map[string]sides{"test/nx/backend_test.exs": {global, serial(global)}}, ""},
		{"a module that sets its own process's backend made to run alone", map[string]sides{"test/nx/backend_test.exs": {local, serial(local)}}, "async-disabled"},
	})
}
