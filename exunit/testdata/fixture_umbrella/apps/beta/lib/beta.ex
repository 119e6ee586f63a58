defmodule Beta do
  @moduledoc "Second umbrella app; one of its tests always fails."

  def words(s), do: String.split(s)
end
