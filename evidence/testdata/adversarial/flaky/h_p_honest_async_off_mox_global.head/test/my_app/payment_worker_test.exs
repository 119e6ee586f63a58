defmodule MyApp.PaymentWorkerTest do
  use MyApp.DataCase, async: false
  import Mox

  setup :set_mox_global
  setup :verify_on_exit!

  test "charges through the gateway" do
    expect(MyApp.GatewayMock, :charge, fn _ -> {:ok, %{id: "ch_1"}} end)
    assert :ok = perform_job(MyApp.PaymentWorker, %{"order_id" => 1})
  end
end
