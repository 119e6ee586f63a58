defmodule MyApp.GithubClientTest do
  use ExUnit.Case, async: false
  import Tesla.Mock

  setup do
    mock_global(fn %{method: :get} -> json(%{"login" => "octocat"}) end)
    :ok
  end

  test "fetches the user from a supervised worker" do
    assert {:ok, %{"login" => "octocat"}} = MyApp.GithubClient.user_via_worker("octocat")
  end
end
