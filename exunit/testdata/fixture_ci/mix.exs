defmodule Ci.MixProject do
  use Mix.Project

  # CI_TEST_PATH lets the generator point ExUnit at the tests through another
  # path (a symlink), so it prints absolute locations as CI containers do.
  def project,
    do: [app: :ci, version: "0.1.0", elixir: "~> 1.14", deps: [], test_paths: [System.get_env("CI_TEST_PATH", "test")]]
end
