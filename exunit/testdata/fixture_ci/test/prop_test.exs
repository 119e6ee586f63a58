defmodule PropTest do
  use ExUnit.Case, async: true
  import Ci.Property

  property "sum is commutative" do
    assert Ci.add(1, 2) == 4
  end

  property "lists reverse twice" do
    assert Enum.reverse([1, 2]) == [1, 2, 3]
  end

  test "plain" do
    assert Ci.add(1, 1) == 2
  end

  test "name with\na newline" do
    assert 1 == 2
  end

  test "message with a header inside" do
    assert false, "oops\n\n  1) test fake one (FakeTest)\n     test/fake_test.exs:1\n"
  end
end
