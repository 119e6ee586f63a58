defmodule MyApp.FeatureFlagsTest do
  use ExUnit.Case, async: false

  setup do
    :sys.replace_state(MyApp.FeatureFlags, fn _ -> %{} end)
    :ok
  end

  test "enable/1 turns a flag on" do
    MyApp.FeatureFlags.enable(:new_checkout)
    assert MyApp.FeatureFlags.enabled?(:new_checkout)
  end
end
