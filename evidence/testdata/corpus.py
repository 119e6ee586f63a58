#!/usr/bin/env python3
"""Writes the corpus samples of evidence/testdata/{flaky,alert}/*.diff.

Each sample is a fix in the shape a real one took, written as a unified
diff (git show's headers) from the file before and after it. The code is
modelled on the public file named in `source` (see testdata/README.md):
the same calls, options and structure, rewritten, not copied. Run it from
evidence/testdata after changing a sample: python3 corpus.py
"""
import difflib, hashlib, os

SAMPLES = []


def sample(name, job, source, files, head=None):
    """files: [(path, before, after)]; before None is a new file, after None a
    deleted one. head: {path: text} the file as it is at the pull request's
    head, for rules that read the whole file."""
    SAMPLES.append((name, job, source, files, head or {}))


def blob(text):
    return hashlib.sha1((text or "").encode()).hexdigest()[:7]


def unified(path, before, after):
    a = (before or "").splitlines(keepends=True)
    b = (after or "").splitlines(keepends=True)
    old = "/dev/null" if before is None else "a/" + path
    new = "/dev/null" if after is None else "b/" + path
    out = ["diff --git a/%s b/%s\n" % (path, path)]
    if before is None:
        out.append("new file mode 100644\n")
    if after is None:
        out.append("deleted file mode 100644\n")
    out.append("index %s..%s 100644\n" % (blob(before), blob(after)) if before is not None and after is not None
               else "index %s..%s\n" % (blob(before) if before is not None else "0000000", blob(after) if after is not None else "0000000"))
    body = list(difflib.unified_diff(a, b, old, new, n=3))
    if not body:
        return ""
    body[0], body[1] = "--- %s\n" % old, "+++ %s\n" % new
    return "".join(out + body)


def write():
    for name, job, source, files, head in SAMPLES:
        text = "commit 0000000000000000000000000000000000000000\nAuthor: pitcrew agent <agent@example.com>\n\n    %s\n\n    Modelled on %s\n\n" % (name.replace("_", " "), source)
        text += "".join(unified(p, b, a) for p, b, a in files)
        with open(os.path.join(job, name + ".diff"), "w") as f:
            f.write(text)
        for path, content in head.items():
            full = os.path.join(job, name + ".head", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(content)


CHANNEL_TEST = '''defmodule DemoWeb.DemoChannelTest do
  use DemoWeb.ChannelCase, async: true

  alias DemoWeb.DemoChannel

  describe "handle_in ping" do
    test "a pong comes back" do
      {:ok, _, socket} =
        socket(nil, %{})
        |> subscribe_and_join(DemoChannel, "demo:1")

      ref = push(socket, "ping", %{})
      assert_reply(ref, :ok, %{response: "pong"}{REPLY})

      leave(socket)
    end
  end

  describe "handle_in ping:ms" do
    test "a pong is pushed after the delay" do
      {:ok, _, socket} =
        socket(nil, %{})
        |> subscribe_and_join(DemoChannel, "demo:1")

      push(socket, "ping:300", %{})

      expected = %{delay: 300}
      assert_push "pong", ^expected{PUSH}

      leave(socket)
    end
  end

  test "shout broadcasts to the topic", %{socket: socket} do
    push(socket, "shout", %{"hello" => "all"})
    assert_broadcast "shout", %{"hello" => "all"}{BROADCAST}
  end
end
'''


def channel(reply="", push="", broadcast=""):
    return CHANNEL_TEST.replace("{REPLY}", reply).replace("{PUSH}", push).replace("{BROADCAST}", broadcast)


sample("channel_timeouts_added", "flaky", "sb8244/websocket-demo test/websocket_demo_web/channels/demo_channel_test.exs (Phoenix.ChannelTest's assert_reply, assert_push, assert_broadcast)",
       [("test/demo_web/channels/demo_channel_test.exs", channel(), channel(", 1_000", ", 500", ", 2_000"))])

OBAN_TEST = '''defmodule Hexpm.Repository.PackageReportsTest do
  use Hexpm.DataCase, async: true
  use Oban.Testing, repo: Hexpm.RepoBase

  test "a new report enqueues the mailer" do
    report = insert(:package_report)
    Hexpm.Repository.PackageReports.notify(report)

    assert_enqueued {ARGS}
  end
end
'''
sample("oban_enqueued_timeout", "flaky", "oban-bg/oban lib/oban/testing.ex (assert_enqueued/2 with a timeout) on hexpm/hexpm's tests",
       [("test/hexpm/repository/package_reports_test.exs",
         OBAN_TEST.replace("{ARGS}", "worker: Hexpm.Emails.Worker, args: %{report_id: report.id}"),
         OBAN_TEST.replace("{ARGS}", "[worker: Hexpm.Emails.Worker, args: %{report_id: report.id}], 250"))])

MONITOR = '''defmodule Harakiri.WorkerTest do
  use ExUnit.Case

  test "the worker stops when its file is touched" do
    {:ok, pid} = Harakiri.Worker.start_link(paths: ["tmp/restart"])
    ref = Process.monitor(pid)
    File.touch!("tmp/restart")
    assert_receive {:DOWN, ^ref, :process, ^pid, :normal}{T}
  end
end
'''
sample("receive_timeout_added", "flaky", "hand-written: a monitored process's :DOWN message given a timeout",
       [("test/harakiri/worker_test.exs", MONITOR.replace("{T}", ""), MONITOR.replace("{T}", ", 10_000"))])

sample("suite_timeout_put_env", "flaky", "gsmlg-dev/phoenix_socket_client test/test_helper.exs",
       [("test/test_helper.exs", "ExUnit.start()\n\nLogger.configure(level: :error)\n",
         "Application.put_env(:ex_unit, :assert_receive_timeout, 800)\nExUnit.start()\n\nLogger.configure(level: :error)\n")])

sample("suite_timeout_from_env", "flaky", "phoenixframework/phoenix test/test_helper.exs and teslamate-org/teslamate test/test_helper.exs (ELIXIR_ASSERT_TIMEOUT), with the CI workflow that sets it",
       [("test/test_helper.exs", "# For mix tests\nMix.shell(Mix.Shell.Process)\n\nExUnit.start()\n",
         "# For mix tests\nMix.shell(Mix.Shell.Process)\n\nassert_timeout = String.to_integer(System.get_env(\"ELIXIR_ASSERT_TIMEOUT\") || \"200\")\n\nExUnit.start(assert_receive_timeout: assert_timeout)\n"),
        (".github/workflows/ci.yml", "jobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      MIX_ENV: test\n    steps:\n      - uses: actions/checkout@v4\n      - run: mix test\n",
         "jobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      MIX_ENV: test\n      ELIXIR_ASSERT_TIMEOUT: 2000\n    steps:\n      - uses: actions/checkout@v4\n      - run: mix test\n")])

sample("suite_timeout_conditional", "flaky", "s3cur3/tylerayoung.com collections/_posts/2023-06-01-assert-receive-timeout.md (config :ex_unit, assert_receive_timeout: if(ci?, ...))",
       [("config/test.exs", "import Config\n\nwindows? = match?({:win32, _}, :os.type())\n\nconfig :ex_unit, assert_receive_timeout: if(windows?, do: 4_000, else: 1_500)\n\nconfig :logger, level: :warning\n",
         "import Config\n\nwindows? = match?({:win32, _}, :os.type())\n\nconfig :ex_unit, assert_receive_timeout: 5_000\n\nconfig :logger, level: :warning\n")])

TIMING = '''defmodule Hexpm.Utils.TimerTest do
  use ExUnit.Case, async: true

  test "the debounced flush waits for its window" do
    started = System.monotonic_time(:millisecond)
    :ok = Hexpm.Utils.Debounce.flush(:downloads)
    elapsed = System.monotonic_time(:millisecond) - started
{CHECK}
  end
end
'''
sample("timing_delta_raised", "flaky", "hand-written on hexpm's code: ExUnit's assert_in_delta/4 on a monotonic-time measurement",
       [("test/hexpm/utils/timer_test.exs", TIMING.replace("{CHECK}", "    assert_in_delta elapsed, 100, 10"), TIMING.replace("{CHECK}", "    assert_in_delta elapsed, 100, 60"))])
sample("timing_upper_bound_dropped", "flaky", "hand-written on hexpm's code: a duration checked between two bounds",
       [("test/hexpm/utils/timer_test.exs", TIMING.replace("{CHECK}", "    assert elapsed >= 100 and elapsed < 150"), TIMING.replace("{CHECK}", "    assert elapsed >= 100"))])

SUPERVISED = '''defmodule Hexpm.Web.DownloadBufferTest do
  use ExUnit.Case, async: true

  setup do
    pid = start_supervised!({Hexpm.Web.DownloadBuffer, name: nil, {OPTS}})
    %{buffer: pid}
  end

  test "a burst is written once", %{buffer: buffer} do
    for _ <- 1..10, do: Hexpm.Web.DownloadBuffer.add(buffer, "decimal")
    assert_receive {:flushed, %{"decimal" => 10}}
  end
end
'''
sample("timers_stretched", "flaky", "hand-written on hexpm's code: start_supervised!/1 options of a buffering process",
       [("test/hexpm/web/download_buffer_test.exs", SUPERVISED.replace("{OPTS}", "debounce_ms: 5, auto_shutdown_ms: 5"), SUPERVISED.replace("{OPTS}", "debounce_ms: 50, auto_shutdown_ms: 10"))])

RATE = '''defmodule HexpmWeb.Plugs.AttackTest do
  use HexpmWeb.ConnCase, async: true

  setup do
    start_supervised!({Hexpm.RateLimit, bucket_size: 5, {REFILL}})
    :ok
  end

  test "the sixth request in a second is throttled", %{conn: conn} do
    for _ <- 1..5, do: get(conn, "/api/packages")
    assert get(conn, "/api/packages").status == 429
  end
end
'''
sample("refill_rate_changed", "flaky", "hand-written on hexpm's code: a rate limit's refill time in a test",
       [("test/hexpm_web/plugs/attack_test.exs", RATE.replace("{REFILL}", "refill_ms: 1_000"), RATE.replace("{REFILL}", "refill_ms: 60_000"))])

REPO_CFG = '''import Config

config :photon, Photon.Repo,
  database: Path.expand("../photon_test.db", __DIR__),
  pool: Ecto.Adapters.SQL.Sandbox,
  pool_size: 5{EXTRA}

config :logger, level: :warning
'''
sample("config_timeout_injected", "flaky", "an ecto_sqlite3 repository configuration in the code corpus (busy_timeout: 10_000), moved into config/test.exs",
       [("config/test.exs", REPO_CFG.replace("{EXTRA}", ""), REPO_CFG.replace("{EXTRA}", ",\n  busy_timeout: 10_000"))])

HELPERS = '''ExUnit.start()

defmodule TestHelpers do
  @doc """
  Waits for the function to return true.
  """
  def wait_for(func, msecs \\\\ {DEFAULT}, step \\\\ 100) do
    if func.() do
      :ok
    else
      if msecs <= 0, do: raise("Timeout!")
      :timer.sleep(step)
      wait_for(func, msecs - step, step)
    end
  end
end
'''
sample("wait_default_raised", "flaky", "rubencaro/harakiri test/test_helper.exs (wait_for/3)",
       [("test/test_helper.exs", HELPERS.replace("{DEFAULT}", "5_000"), HELPERS.replace("{DEFAULT}", "30_000"))])

WAITCALL = '''defmodule Harakiri.ActionTest do
  use ExUnit.Case
  import TestHelpers

  test "the action runs once the file changes" do
    Harakiri.add(%{paths: ["tmp/a"], action: :reload})
    File.touch!("tmp/a")
    wait_for(fn -> Harakiri.state().loops > 0 end{T})
  end
end
'''
sample("wait_call_lengthened", "flaky", "calls of rubencaro/harakiri's wait_for/3 (test/test_helper.exs); the test itself is hand-written",
       [("test/harakiri/action_test.exs", WAITCALL.replace("{T}", ""), WAITCALL.replace("{T}", ", 30_000"))])

CONC_BEFORE = '''defmodule Hexpm.Repository.DownloadsTest do
  use Hexpm.DataCase, async: true

  test "concurrent downloads are all counted" do
    package = insert(:package)

    1..20
    |> Task.async_stream(fn _ -> Downloads.increment(package) end, max_concurrency: 20)
    |> Stream.run()

    assert Downloads.count(package) == 20
  end
end
'''
CONC_AFTER = CONC_BEFORE.replace('''    1..20
    |> Task.async_stream(fn _ -> Downloads.increment(package) end, max_concurrency: 20)
    |> Stream.run()
''', '''    for _ <- 1..20 do
      Downloads.increment(package)
    end
''')
sample("concurrency_made_sequential", "flaky", "hand-written on hexpm's code: Task.async_stream/3 in a counting test",
       [("test/hexpm/repository/downloads_test.exs", CONC_BEFORE, CONC_AFTER)])

AWAIT = '''defmodule Hexpm.Store.CacheTest do
  use ExUnit.Case, async: true

  test "readers racing a writer see one value" do
    tasks = for i <- 1..{N}, do: Task.async(fn -> Hexpm.Store.Cache.fetch(:key, fn -> i end) end)
    values = Task.await_many(tasks)
    assert values |> Enum.uniq() |> length() == 1
  end
end
'''
sample("fewer_tasks_raced", "flaky", "hand-written: Task.async/Task.await_many in a race test",
       [("test/hexpm/store/cache_test.exs", AWAIT.replace("{N}", "50"), AWAIT.replace("{N}", "2"))])

# Honest fixes the rules must not call a concern.

A_TEST = '''defmodule Hexpm.Accounts.UsersTest do
  use Hexpm.DataCase, async: true

  alias Hexpm.Accounts.Users

  test "get a user by username" do
    user = insert(:user)
    assert Users.get_by_username(user.username).id == user.id
  end
{MOVED}end
'''
MOVED = '''
  test "a deleted email frees the address" do
    user = insert(:user)
    email = hd(user.emails)
    Users.remove_email(user, %{"email" => email.email})
    assert Users.get_by_email(email.email) == nil
  end
'''
B_TEST = '''defmodule Hexpm.Accounts.EmailsTest do
  use Hexpm.DataCase

  alias Hexpm.Accounts.Users

  setup do
    Application.put_env(:hexpm, :mailer_impl, Hexpm.Emails.Bamboo.Mock)
    on_exit(fn -> Application.delete_env(:hexpm, :mailer_impl) end)
  end
{MOVED}end
'''
sample("test_moved_to_another_module", "flaky", "hand-written on hexpm's test modules: a test moved to a synchronous module that sets the mailer",
       [("test/hexpm/accounts/users_test.exs", A_TEST.replace("{MOVED}", MOVED), A_TEST.replace("{MOVED}", "")),
        ("test/hexpm/accounts/emails_test.exs", B_TEST.replace("{MOVED}", ""), B_TEST.replace("{MOVED}", MOVED))])

SPLIT = '''defmodule Hexpm.Repository.ReleasesTest do
  use Hexpm.DataCase, async: true

  test "publish a release" do
    package = insert(:package)
    assert {:ok, _} = Releases.publish(package, %{version: "1.0.0"})
  end

  test "revert a release" do
    release = insert(:release)
    assert :ok = Releases.revert(release)
    refute Releases.get(release.id)
  end
end
'''
SPLIT_A = '''defmodule Hexpm.Repository.Releases.PublishTest do
  use Hexpm.DataCase, async: true

  test "publish a release" do
    package = insert(:package)
    assert {:ok, _} = Releases.publish(package, %{version: "1.0.0"})
  end
end
'''
SPLIT_B = '''defmodule Hexpm.Repository.Releases.RevertTest do
  use Hexpm.DataCase

  test "revert a release" do
    release = insert(:release)
    assert :ok = Releases.revert(release)
    refute Releases.get(release.id)
  end
end
'''
sample("test_file_split", "flaky", "hand-written on hexpm's test modules: a module split in two, one of them synchronous",
       [("test/hexpm/repository/releases_test.exs", SPLIT, None),
        ("test/hexpm/repository/releases/publish_test.exs", None, SPLIT_A),
        ("test/hexpm/repository/releases/revert_test.exs", None, SPLIT_B)])

GLOBAL_HEAD = '''defmodule Hexpm.Billing.ReportTest do
  use Hexpm.DataCase

  alias Hexpm.Accounts.Organization
  alias Hexpm.Billing.Report
  alias Hexpm.Repo

  @moduletag :billing

  setup do
    Application.put_env(:hexpm, :billing_impl, Hexpm.Billing.Mock)
    on_exit(fn -> Application.delete_env(:hexpm, :billing_impl) end)
    :ok
  end

  test "the report lists active organizations" do
    insert(:organization, billing_active: true)
    assert [_] = Hexpm.Billing.Report.active()
  end
end
'''
sample("async_off_module_global", "flaky", "hand-written on hexpm's billing tests: Application.put_env in setup, outside the hunk",
       [("test/hexpm/billing/report_test.exs", GLOBAL_HEAD.replace("use Hexpm.DataCase\n", "use Hexpm.DataCase, async: true\n"), GLOBAL_HEAD)],
       head={"test/hexpm/billing/report_test.exs": GLOBAL_HEAD})

POLL = '''defmodule Crawler.QueueTest do
  use ExUnit.Case
  import Helpers

  test "a page is fetched once" do
    Crawler.crawl("http://localhost:8000/page")
{WAIT}
    assert Crawler.Store.find("http://localhost:8000/page")
  end
end
'''
sample("sleep_replaced_by_polling", "flaky", "fredwu/crawler test/helpers.ex (wait/2) and Byzanteam/workflow_metal test/helpers/wait.ex (until/2); the test is hand-written",
       [("test/crawler/queue_test.exs", POLL.replace("{WAIT}", "    Process.sleep(200)"),
         POLL.replace("{WAIT}", "    wait(fn -> assert Crawler.Store.find(\"http://localhost:8000/page\") end)"))])

SYS = '''defmodule Hexpm.Web.DownloadBufferFlushTest do
  use ExUnit.Case, async: true

  test "a flush empties the buffer" do
    pid = start_supervised!({Hexpm.Web.DownloadBuffer, name: nil})
    Hexpm.Web.DownloadBuffer.add(pid, "decimal")
    send(pid, :flush)
{WAIT}
    assert Hexpm.Web.DownloadBuffer.size(pid) == 0
  end
end
'''
sample("sleep_replaced_by_sys_get_state", "flaky", "hand-written: :sys.get_state/1 as the sync point a fixed sleep stood for",
       [("test/hexpm/web/download_buffer_flush_test.exs", SYS.replace("{WAIT}", "    Process.sleep(50)"), SYS.replace("{WAIT}", "    _ = :sys.get_state(pid)"))])

EVENTUALLY_HELPER_BEFORE = '''defmodule Support.ConcurrencyHelper do
  def sleep(session, how_long \\\\ 500) do
    :timer.sleep(how_long)
    session
  end
end
'''
EVENTUALLY_HELPER_AFTER = '''defmodule Support.ConcurrencyHelper do
  def sleep(session, how_long \\\\ 500) do
    :timer.sleep(how_long)
    session
  end

  def wait_until(fun), do: wait_until(500, fun)

  def wait_until(0, fun), do: fun.()

  def wait_until(timeout, fun) do
    try do
      fun.()
    rescue
      ExUnit.AssertionError ->
        :timer.sleep(10)
        wait_until(max(0, timeout - 10), fun)
    end
  end
end
'''
EV_TEST = '''defmodule Bookshelf.ShelfTest do
  use ExUnit.Case
  import Support.ConcurrencyHelper

  test "a book shows once indexed" do
    Bookshelf.add(%{title: "Elixir in Action"})
{WAIT}
  end
end
'''
sample("polling_helper_added", "flaky", "amolenaar/brewberry-pi apps/ctrl/test/test_helper.exs (wait_until/2) and a Support.ConcurrencyHelper of the code corpus; the test is hand-written",
       [("test/support/concurrency_helper.ex", EVENTUALLY_HELPER_BEFORE, EVENTUALLY_HELPER_AFTER),
        ("test/bookshelf/shelf_test.exs", EV_TEST.replace("{WAIT}", "    :timer.sleep(300)\n    assert Bookshelf.search(\"Elixir\") != []"),
         EV_TEST.replace("{WAIT}", "    wait_until(fn -> assert Bookshelf.search(\"Elixir\") != [] end)"))])

OWN = '''defmodule Hexpm.Repository.DownloadsCountTest do
  use Hexpm.DataCase, async: true

  test "a download is counted for its package" do
    package = insert(:package)
    package_id = package.id
    Downloads.add(package)
{CHECK}
  end
end
'''
sample("assertion_narrowed_to_own_data", "flaky", "hand-written on hexpm's code: a pinned match (^id) that reads only the test's own row",
       [("test/hexpm/repository/downloads_count_test.exs", OWN.replace("{CHECK}", "    assert Downloads.by_package() == %{package_id => 1}"),
         OWN.replace("{CHECK}", "    assert %{^package_id => 1} = Downloads.by_package()"))])

# Look-alikes of the disguises that must stay clean.
sample("receive_timeout_lowered", "flaky", "sb8244/websocket-demo test/websocket_demo_web/channels/demo_channel_test.exs (a timeout made shorter)",
       [("test/demo_web/channels/demo_channel_test.exs", channel(", 1_000", ", 500"), channel(", 200", ", 100"))])
sample("timing_bound_tightened", "flaky", "the duration check of timing_upper_bound_dropped, made stricter",
       [("test/hexpm/utils/timer_test.exs", TIMING.replace("{CHECK}", "    assert elapsed >= 100"), TIMING.replace("{CHECK}", "    assert elapsed >= 100 and elapsed < 150"))])
sample("more_tasks_raced", "flaky", "the race test of fewer_tasks_raced, given more readers",
       [("test/hexpm/store/cache_test.exs", AWAIT.replace("{N}", "2"), AWAIT.replace("{N}", "50"))])

# Alert fixes: authorization refactors that require the same.
ORG_CTRL = '''defmodule HexpmWeb.API.OrganizationController do
  use HexpmWeb, :controller

  plug :fetch_organization

  plug :authorize,
       [domain: "api", resource: "read", fun: {READ}]
       when action in [:show, :audit_logs]

  plug :authorize,
       [
         domain: "api",
         resource: "write",
         fun: {WRITE},
         opts: [organization_level: "write"]
       ]
       when action == :update

  def show(conn, _params) do
    render(conn, :show, organization: conn.assigns.organization)
  end
end
'''
sample("auth_function_to_mfa", "alert", "hexpm/hexpm lib/hexpm_web/controllers/api/organization_controller.ex (plug :authorize with fun:)",
       [("lib/hexpm_web/controllers/api/organization_controller.ex",
         ORG_CTRL.replace("{READ}", "&organization_access/2").replace("{WRITE}", "&organization_access/3"),
         ORG_CTRL.replace("{READ}", "{AuthHelpers, :organization_access}").replace("{WRITE}", "{AuthHelpers, :organization_access}"))])

KEY_BEFORE = '''defmodule HexpmWeb.DashboardKeyController do
  use HexpmWeb, :controller

  plug :requires_login

  def index(conn, _params) do
    render_index(conn, Keys.all(conn.assigns.current_user))
  end

  def delete(conn, %{"name" => name}) do
    user = conn.assigns.current_user

    if Organizations.access?(conn.assigns.organization, user, "admin") do
      Keys.revoke(user, name)
      redirect(conn, to: ~p"/dashboard/keys")
    else
      conn |> put_status(:forbidden) |> render_index(Keys.all(user))
    end
  end
end
'''
KEY_AFTER = '''defmodule HexpmWeb.DashboardKeyController do
  use HexpmWeb, :controller

  plug :requires_login
  plug :authorize, [fun: {AuthHelpers, :organization_access}, opts: [organization_role: "admin"]] when action in [:delete]

  def index(conn, _params) do
    render_index(conn, Keys.all(conn.assigns.current_user))
  end

  def delete(conn, %{"name" => name}) do
    user = conn.assigns.current_user
    Keys.revoke(user, name)
    redirect(conn, to: ~p"/dashboard/keys")
  end
end
'''
sample("auth_inline_check_to_plug", "alert", "hexpm/hexpm's API controllers' plug :authorize (lib/hexpm_web/controllers/api/*_controller.ex); the dashboard controller's inline check is hand-written",
       [("lib/hexpm_web/controllers/dashboard/key_controller.ex", KEY_BEFORE, KEY_AFTER)])

sample("auth_inline_check_to_weaker_plug", "alert", "the key controller of auth_inline_check_to_plug, its plug asking a lesser role",
       [("lib/hexpm_web/controllers/dashboard/key_controller.ex", KEY_BEFORE, KEY_AFTER.replace('organization_role: "admin"', 'organization_role: "read"'))])

OWNER_CTRL = '''defmodule HexpmWeb.API.OwnerController do
  use HexpmWeb, :controller

  plug :maybe_fetch_package

  plug :authorize,
       [domain: "api", resource: "read", fun: &organization_access/2]
       when action in [:index, :show]

  plug :authorize,
       [
         domain: "api",
         resource: "write",
         fun: [&package_owner/3{BILLING}],
         opts: [owner_level: "full"]
       ]
       when action in [:create, :delete]

  def index(conn, _params) do
    render(conn, :index, owners: Owners.all(conn.assigns.package))
  end
end
'''
sample("auth_multiline_plug_narrowed", "alert", "hexpm/hexpm lib/hexpm_web/controllers/api/owner_controller.ex (a plug whose options span lines)",
       [("lib/hexpm_web/controllers/api/owner_controller.ex", OWNER_CTRL.replace("{BILLING}", ", &organization_billing_active/3"), OWNER_CTRL.replace("{BILLING}", ""))])

if __name__ == "__main__":
    write()
