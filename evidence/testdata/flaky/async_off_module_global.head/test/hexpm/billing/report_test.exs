defmodule Hexpm.Billing.ReportTest do
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
