defmodule Ci do
  @moduledoc "The fixture of the CI-shaped logs: its tests are in test/."
  def add(a, b), do: a + b
end
