defmodule BetaTest do
  use ExUnit.Case

  test "words/1 splits on spaces" do
    assert Beta.words("a b") == ["a", "b"]
  end

  describe "words/1" do
    test "keeps punctuation (always fails)" do
      assert Beta.words("a, b") == ["a", "b"]
    end
  end
end
