defmodule Hexpm.Repository.PackageTest do
  use Hexpm.DataCase

  alias Hexpm.Repository.Package

  setup do
    user = insert(:user)
    %{user: user, repository: insert(:repository)}
  end

  test "create package and get", %{user: user, repository: repository} do
    package = Package.build(repository, user, pkg_meta(%{name: "ecto", description: "DSL"}))
    assert %Package{name: "ecto"} = Repo.insert!(package)
    assert Repo.get_by!(Package, name: "ecto").description == "DSL"
  end

  test "update package", %{user: user, repository: repository} do
    package = insert(:package, repository_id: repository.id, package_owners: [build(:package_owner, user: user)])
    Package.update(package, %{"meta" => %{"description" => "New"}}) |> Repo.update!()
    assert Repo.get_by!(Package, name: package.name).meta.description == "New"
  end
end
