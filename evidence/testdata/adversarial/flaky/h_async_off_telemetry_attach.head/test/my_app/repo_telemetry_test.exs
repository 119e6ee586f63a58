defmodule MyApp.RepoTelemetryTest do
  use MyApp.DataCase

  setup do
    :telemetry.attach("repo-query-test", [:my_app, :repo, :query], &__MODULE__.handle/4, self())
    on_exit(fn -> :telemetry.detach("repo-query-test") end)
  end

  def handle(_event, measurements, _meta, pid), do: send(pid, {:query, measurements})

  test "emits a query event" do
    Repo.all(MyApp.Post)
    assert_receive {:query, %{total_time: _}}
  end
end
