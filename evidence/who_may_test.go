package evidence

import (
	"strings"
	"testing"
)

// Who may do what, compared before and after with the files read whole:
// a loosening found wherever requests are let in, a rewrite that asks as
// much left alone.
// A route moved between scopes keeps its guard only where the new scope
// pipes it through as much.
func TestARouteMovedOutOfItsGuardedScope(t *testing.T) {
	router := "defmodule AppWeb.Router do\n  use AppWeb, :router\n\n  pipeline :browser do\n    plug :fetch_session\n  end\n\n  pipeline :admin do\n    plug AppWeb.RequireAdmin\n  end\n\n  scope \"/\", AppWeb do\n    pipe_through :browser\n\n    get \"/\", PageController, :index\n  end\n\n  scope \"/admin\", AppWeb do\n    pipe_through [:browser, :admin]\n\n    get \"/reports\", ReportController, :index\n    delete \"/users/:id\", UserController, :delete\n  end\nend\n"
	route := "    delete \"/users/:id\", UserController, :delete\n"
	without := strings.Replace(router, route, "", 1)
	public := strings.Replace(without, "    get \"/\", PageController, :index\n", "    get \"/\", PageController, :index\n"+route, 1)
	renamed := strings.Replace(without, "    get \"/\", PageController, :index\n", "    get \"/\", PageController, :index\n    delete \"/admin/users/:id\", UserController, :delete\n", 1)
	// The same plug under another pipeline's name guards as much.
	admins := strings.Replace(strings.Replace(without, "  pipeline :admin do\n    plug AppWeb.RequireAdmin\n  end\n", "  pipeline :admin do\n    plug AppWeb.RequireAdmin\n  end\n\n  pipeline :staff do\n    plug AppWeb.RequireAdmin\n  end\n", 1), "  end\nend\n", "  end\n\n  scope \"/staff\", AppWeb do\n    pipe_through [:browser, :staff]\n\n"+route+"  end\nend\n", 1)
	guarded := strings.Replace(without, "  end\nend\n", "  end\n\n  scope \"/manage\", AppWeb do\n    pipe_through [:browser, :admin]\n\n"+route+"  end\nend\n", 1)
	// Given its own helper name in a scope of its own, without the admin pipeline.
	helper := strings.Replace(without, "  end\nend\n", "  end\n\n  scope \"/admin\", AppWeb do\n    pipe_through :browser\n\n    delete \"/users/:id\", UserController, :delete, as: :admin_user\n  end\nend\n", 1)
	for name, c := range map[string]struct {
		head    string
		concern bool
	}{
		"moved into the public scope under its full path":                 {renamed, true},
		"moved into the public scope":                                     {public, true},
		"moved under a pipeline of another name with the same plug":       {admins, false},
		"moved into another guarded scope":                                {guarded, false},
		"moved with a helper name of its own to a scope without the plug": {helper, true},
	} {
		r := checkWholeFor(t, JobAlert, map[string]sides{"lib/app_web/router.ex": {router, c.head}})
		if got := hasConcern(r, "pipeline-changed"); got != c.concern {
			t.Errorf("%s: concern %v, want %v: %+v", name, got, c.concern, r.Findings)
		}
	}
}

func TestWhoMayDoWhatReadWhole(t *testing.T) {
	controller := "defmodule AppWeb.ConversationController do\n  use AppWeb, :controller\n\n  plug(:authorize when action in [:show, :delete, :archive])\n\n  def show(conn, _), do: render(conn, :show)\nend\n"
	scope := "defmodule AppWeb.Plugs.RequireScope do\n  def has_scope?(%Token{scopes: scopes}, resource, permission) do\n    Enum.member?(scopes, resource <> \":\" <> permission)\n  end\nend\n"
	mount := "defmodule AppWeb.Mounts.FetchOrgUser do\n  def on_mount(:default, %{\"org\" => org}, _session, socket) do\n    case Orgs.member(org, socket.assigns.user) do\n      nil -> {:halt, redirect(socket, to: \"/\")}\n      member -> {:cont, assign(socket, :org_user, member)}\n    end\n  end\nend\n"
	auth := "defmodule AppWeb.UserAuth do\n  def require_authenticated_user(conn, _opts) do\n    if conn.assigns.current_user do\n      conn\n    else\n      conn |> redirect(to: \"/login\") |> halt()\n    end\n  end\nend\n"
	guardian := "defmodule AppWeb.Guardian do\n  def resource_from_claims(%{\"sub\" => id}) do\n    user = Accounts.get_user(id)\n    {:ok, user}\n  end\nend\n"
	roles := "defmodule AppWeb.Middleware.Authorize do\n  def correct_role?(%{roles: roles}, role) do\n    role in roles\n  end\n\n  def correct_role?(_, _), do: false\nend\n"
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"an action dropped from a parenthesised plug's when", map[string]sides{"lib/app_web/controllers/conversation_controller.ex": {controller, strings.Replace(controller, ", :archive]", "]", 1)}}, "plug-changed"},
		{"a clause added to a plug's check that lets through tokens without scopes", map[string]sides{"lib/app_web/plugs/require_scope.ex": {scope, strings.Replace(scope, "  def has_scope?(%Token{scopes: scopes}", "  def has_scope?(%Token{scopes: nil}, _resource, _permission), do: true\n\n  def has_scope?(%Token{scopes: scopes}", 1)}}, "authorization-changed"},
		{"an on_mount hook given a clause that admits a missing user", map[string]sides{"lib/app_web/mounts/fetch_org_user.ex": {mount, strings.Replace(mount, "  def on_mount(:default, %{", "  def on_mount(:default, _params, _session, %{assigns: %{user: nil}} = socket) do\n    {:cont, assign(socket, :org_user, nil)}\n  end\n\n  def on_mount(:default, %{", 1)}}, "authorization-changed"},
		{"an assign read by brackets", map[string]sides{"lib/app_web/user_auth.ex": {auth, strings.Replace(auth, "conn.assigns.current_user", "conn.assigns[:current_user]", 1)}}, ""},
		{"a deleted user refused instead of handed on as nil", map[string]sides{"lib/app_web/guardian.ex": {guardian, strings.Replace(guardian, "    user = Accounts.get_user(id)\n    {:ok, user}\n", "    case Accounts.get_user(id) do\n      nil -> {:error, :resource_not_found}\n      user -> {:ok, user}\n    end\n", 1)}}, ""},
		{"a guard added to a role clause", map[string]sides{"lib/app_web/middleware/authorize.ex": {roles, strings.Replace(roles, "def correct_role?(%{roles: roles}, role) do", "def correct_role?(%{roles: roles}, role) when is_list(roles) do", 1)}}, ""},
	})
}

// A role renamed wherever it is written, its declaration included, to a
// name new to the code changes who may do what in nothing; renamed into a
// role that exists, or in one clause alone, it does.
func TestARoleRenamedThroughout(t *testing.T) {
	perms := "defmodule App.Permissions do\n  def can?(member, :publish, group) do\n    role(member, group) in [:chair, :editor]\n  end\n\n  def can?(member, :edit, post) do\n    case role(member, post.group_id) do\n      role when role in [:chair, :editor] -> true\n      _ -> false\n    end\n  end\nend\n"
	schema := "defmodule App.Volunteer do\n  use Ecto.Schema\n\n  @roles [:chair, :editor, :member]\n\n  schema \"volunteers\" do\n    field :role, Ecto.Enum, values: @roles, default: :member\n  end\nend\n"
	rename := func(s, to string) string { return strings.ReplaceAll(s, ":editor", to) }
	permsPath, schemaPath := "lib/app/permissions.ex", "lib/app/volunteer.ex"
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"a role renamed throughout, its declaration included", map[string]sides{permsPath: {perms, rename(perms, ":maintainer")}, schemaPath: {schema, rename(schema, ":maintainer")}}, ""},
		{"a role renamed into one that exists", map[string]sides{permsPath: {perms, strings.Replace(rename(perms, ":member"), "[:chair, :member]", "[:chair, :member]", -1)}, schemaPath: {schema, strings.Replace(schema, ":editor, ", "", 1)}}, "authorization-changed"},
		{"a role changed in the policy alone", map[string]sides{permsPath: {perms, rename(perms, ":maintainer")}}, "authorization-changed"},
	})
}
