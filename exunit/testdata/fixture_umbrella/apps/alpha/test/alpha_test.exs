defmodule AlphaTest do
  use ExUnit.Case
  doctest Alpha

  test "inc/1 adds one" do
    assert Alpha.inc(41) == 42
  end
end
