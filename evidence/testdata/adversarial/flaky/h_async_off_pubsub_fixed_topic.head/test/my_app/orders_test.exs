defmodule MyApp.OrdersTest do
  use MyApp.DataCase, async: false

  setup do
    Phoenix.PubSub.subscribe(MyApp.PubSub, "orders")
  end

  test "broadcasts order_created" do
    {:ok, order} = Orders.create(%{total: 10})
    assert_receive {:order_created, ^order}
  end
end
