defmodule MyApp.RateTableTest do
  use ExUnit.Case, async: false

  setup do
    :ets.delete_all_objects(:rate_table)
    :ok
  end

  test "stores the latest rate" do
    MyApp.RateTable.put("EUR", 1.1)
    assert [{"EUR", 1.1}] = :ets.lookup(:rate_table, "EUR")
  end
end
