package evidence

import (
	"strings"
	"testing"
)

// Test support read as the code every test module uses: a case template
// that tags or serialises every module, a helper that checks less, and a
// helper extracted that checks as much.
func TestTestSupportChanges(t *testing.T) {
	integration := "defmodule App.IntegrationCase do\n  use ExUnit.CaseTemplate\n\n  using do\n    quote do\n      @moduletag :integration\n    end\n  end\nend\n"
	helper := "exclude = [:slow]\n\nExUnit.start(exclude: exclude)\n"
	tagged := "defmodule App.TransportTest do\n  use ExUnit.Case, async: true\n\n  test \"retries\" do\n    assert App.Transport.send(:ok) == :ok\n  end\nend\n"
	channel := "defmodule AppWeb.ChannelCase do\n  use ExUnit.CaseTemplate\n\n  defmacro assert_single_broadcast(event, pattern) do\n    quote do\n      Phoenix.ChannelTest.assert_broadcast(unquote(event), unquote(pattern))\n      Phoenix.ChannelTest.refute_broadcast(unquote(event), _, 50)\n    end\n  end\nend\n"
	data := "defmodule App.DataCase do\n  use ExUnit.CaseTemplate\n\n  using do\n    quote do\n      alias App.Repo\n    end\n  end\n\n  setup tags do\n    pid = Ecto.Adapters.SQL.Sandbox.start_owner!(App.Repo, shared: not tags[:async])\n    on_exit(fn -> Ecto.Adapters.SQL.Sandbox.stop_owner(pid) end)\n  end\nend\n"
	serial := strings.Replace(data, "  using do\n    quote do\n      alias App.Repo\n    end\n  end\n", "  defmacro __using__(opts) do\n    quote do\n      unquote(super(Keyword.put(opts, :async, false)))\n      alias App.Repo\n    end\n  end\n", 1)
	limiter := strings.Replace(serial, "  setup tags do\n", "  setup tags do\n    :ets.delete_all_objects(:rate_limits)\n", 1)
	runWholeCases(t, []wholeCase{
		{"every module of a case template tagged flaky on CI", map[string]sides{"test/support/integration_case.ex": {integration, strings.Replace(integration, "@moduletag :integration\n", "@moduletag :integration\n      @moduletag :flaky_on_ci\n", 1)}}, "test-tagged-flaky"},
		{"a tag excluded on CI through the helper's variable", map[string]sides{"test/test_helper.exs": {helper, strings.Replace(helper, "\nExUnit", "exclude = if System.get_env(\"CI\"), do: [:stripe | exclude], else: exclude\n\nExUnit", 1)}}, "tag-excluded"},
		{"a test tagged with what the helper's variable now excludes over lines", map[string]sides{
			"test/test_helper.exs":        {"ExUnit.start()\n", "exclude =\n  if System.get_env(\"INTEGRATION\") do\n    []\n  else\n    [:integration]\n  end\n\nExUnit.start(exclude: exclude)\n"},
			"test/app/transport_test.exs": {tagged, strings.Replace(tagged, "  test \"retries\"", "  @tag :integration\n  test \"retries\"", 1)}}, "test-skipped"},
		{"a qualified refute dropped from a support macro", map[string]sides{"test/support/channel_case.ex": {channel, strings.Replace(channel, "      Phoenix.ChannelTest.refute_broadcast(unquote(event), _, 50)\n", "", 1)}}, "assertion-deleted"},
		{"a case template that makes every module run alone", map[string]sides{"test/support/data_case.ex": {data, serial}}, "async-disabled"},
		{"a case template that makes every module sharing a table run alone", map[string]sides{"test/support/data_case.ex": {strings.Replace(data, "  setup tags do\n", "  setup tags do\n    :ets.delete_all_objects(:rate_limits)\n", 1), limiter}}, ""},
	})
}

// Checks moved into an assertion helper of the diff's test support that
// pins what the test compared: the test checks as much, and the
// helper's wait, in a file the diff adds, was chosen.
func TestAnAssertionHelperExtractedIntoSupport(t *testing.T) {
	test := "defmodule AppWeb.SignupTest do\n  use AppWeb.ConnCase, async: true\n\n  test \"sends the confirmation\", %{conn: conn} do\n    post(conn, \"/signup\", email: \"a@b.c\")\n    assert_receive {:email, sent}\n    assert sent.to == \"a@b.c\"\n    assert sent.subject == \"Confirm\"\n  end\nend\n"
	helped := strings.Replace(strings.Replace(test, "    assert_receive {:email, sent}\n    assert sent.to == \"a@b.c\"\n    assert sent.subject == \"Confirm\"\n", "    sent = assert_email_to(\"a@b.c\", \"Confirm\")\n", 1), "async: true\n", "async: true\n  import App.MailAssertions\n", 1)
	mail := "defmodule App.MailAssertions do\n  import ExUnit.Assertions\n\n  defmacro assert_email_to(address, subject, timeout \\\\ 100) do\n    quote do\n      address = unquote(address)\n      subject = unquote(subject)\n      assert_receive {:email, %{to: ^address, subject: ^subject} = email}, unquote(timeout)\n      email\n    end\n  end\nend\n"
	loose := strings.Replace(mail, "%{to: ^address, subject: ^subject} = email", "email", 1)
	runWholeCases(t, []wholeCase{
		{"a helper that pins what the test compared", map[string]sides{"test/app_web/signup_test.exs": {test, helped}, "test/support/mail_assertions.ex": {"", mail}}, ""},
		{"a helper that takes any email", map[string]sides{"test/app_web/signup_test.exs": {test, helped}, "test/support/mail_assertions.ex": {"", loose}}, "assertion-deleted"},
	})
}
