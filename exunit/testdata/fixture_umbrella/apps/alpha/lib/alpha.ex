defmodule Alpha do
  @moduledoc "First umbrella app; all of its tests pass."

  @doc """
  Adds one.

      iex> Alpha.inc(1)
      2

  """
  def inc(n), do: n + 1
end
