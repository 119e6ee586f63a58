package evidence

import (
	"strings"
	"testing"
)

// Where requests, sockets and joins are let in: each way through a gate
// must still check something, a plug's when clause is compared by the
// actions it covers, a plug moved into the router is found there, and an
// Ash policy given one more way to pass lets more through.
func TestGatesReadWhole(t *testing.T) {
	verify := "defmodule AppWeb.Plugs.VerifySignature do\n  import Plug.Conn\n  require Logger\n\n  def init(opts), do: opts\n\n  def call(conn, _opts) do\n    with [signature] <- get_req_header(conn, \"x-hub-signature-256\"),\n         :ok <- verify(conn.assigns.raw_body, signature, secret()) do\n      conn\n    else\n      error ->\n        Logger.warning(\"rejected: #{inspect(error)}\")\n        conn |> send_resp(401, \"invalid signature\") |> halt()\n    end\n  end\nend\n"
	unsigned := strings.Replace(verify, "    else\n", "    else\n      [] ->\n        Logger.warning(\"no signature header\")\n        conn\n\n", 1)
	stricter := strings.Replace(verify, "         :ok <- verify(", "         :ok <- fresh(conn),\n         :ok <- verify(", 1)
	join := "defmodule AppWeb.ProjectChannel do\n  use AppWeb, :channel\n\n  def join(\"project:\" <> id, _payload, socket) do\n    user = socket.assigns.current_user\n\n    if Projects.member?(id, user.id) do\n      {:ok, assign(socket, :project_id, id)}\n    else\n      {:error, %{reason: \"unauthorized\"}}\n    end\n  end\nend\n"
	guest := strings.Replace(join, "    user = socket.assigns.current_user\n\n    if Projects.member?(id, user.id) do\n      {:ok, assign(socket, :project_id, id)}\n    else\n      {:error, %{reason: \"unauthorized\"}}\n    end\n", "    case socket.assigns.current_user do\n      nil ->\n        {:ok, assign(socket, project_id: id, read_only: true)}\n\n      user ->\n        if Projects.member?(id, user.id) do\n          {:ok, assign(socket, :project_id, id)}\n        else\n          {:error, %{reason: \"unauthorized\"}}\n        end\n    end\n", 1)
	parsed := strings.Replace(join, "    if Projects.member?(id, user.id) do\n      {:ok, assign(socket, :project_id, id)}\n    else\n      {:error, %{reason: \"unauthorized\"}}\n    end\n", "    with {project_id, \"\"} <- Integer.parse(id),\n         true <- Projects.member?(project_id, user.id) do\n      {:ok, assign(socket, :project_id, project_id)}\n    else\n      false -> {:error, %{reason: \"unauthorized\"}}\n      _ -> {:error, %{reason: \"invalid project\"}}\n    end\n", 1)
	hook := "defmodule AppWeb.UserAuthLive do\n  def on_mount(:require_owner, _params, session, socket) do\n    socket = mount_current_user(socket, session)\n    user = socket.assigns.current_user\n\n    if Properties.owner?(user) do\n      {:cont, socket}\n    else\n      {:halt, redirect(socket, to: \"/\")}\n    end\n  end\nend\n"
	expired := strings.Replace(hook, "    user = socket.assigns.current_user\n\n    if Properties.owner?(user) do\n      {:cont, socket}\n    else\n      {:halt, redirect(socket, to: \"/\")}\n    end\n", "\n    case socket.assigns.current_user do\n      nil ->\n        {:halt, redirect(socket, to: \"/users/log_in\")}\n\n      user ->\n        if Properties.owner?(user) do\n          {:cont, socket}\n        else\n          {:halt, redirect(socket, to: \"/\")}\n        end\n    end\n", 1)
	controller := "defmodule AppWeb.ReportController do\n  use AppWeb, :controller\n\n  plug :authorize_report when action in [:show, :edit, :update, :delete]\n\n  def show(conn, _), do: render(conn, :show)\nend\n"
	everyAction := strings.Replace(controller, " when action in [:show, :edit, :update, :delete]", "", 1)
	butIndex := strings.Replace(controller, "when action in [:show, :edit, :update, :delete]", "when action != :index", 1)
	policy := "defmodule Helpdesk.Ticket do\n  use Ash.Resource, authorizers: [Ash.Policy.Authorizer]\n\n  policies do\n    policy action_type(:read) do\n      authorize_if expr(reporter_id == ^actor(:id))\n    end\n  end\nend\n"
	access := "defmodule AppWeb.Plugs.VerifyAccess do\n  import Plug.Conn\n\n  def call(conn, _opts) do\n    case identify(conn) do\n      {:ok, user} ->\n        assign(conn, :user, user)\n\n      {:error, :unauthorized} ->\n        FallbackController.call(conn, {:error, :unauthorized})\n    end\n  end\n\n  defp identify(conn) do\n    with {:ok, token} <- token(conn),\n         {:ok, user} <- Auth.verify(token) do\n      Logger.metadata(user_id: user.id)\n      {:ok, user}\n    else\n      {:error, :not_found} -> {:error, :unauthorized}\n    end\n  end\nend\n"
	outage := strings.Replace(strings.Replace(access, "        FallbackController.call(conn, {:error, :unauthorized})\n", "        FallbackController.call(conn, {:error, :unauthorized})\n\n      {:error, :unavailable} ->\n        conn\n        |> send_resp(503, \"unavailable\")\n        |> halt()\n", 1), "      {:error, :not_found} -> {:error, :unauthorized}\n", "      {:error, :not_found} -> {:error, :unauthorized}\n      {:error, reason} -> unavailable(reason)\n", 1)
	outage = strings.Replace(outage, "  defp identify(conn) do\n", "  defp unavailable(reason) do\n    Logger.error(inspect(reason))\n    {:error, :unavailable}\n  end\n\n  defp identify(conn) do\n", 1)
	letThrough := strings.Replace(outage, "        conn\n        |> send_resp(503, \"unavailable\")\n        |> halt()\n", "        conn\n", 1)
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"an outage answered 503 and halted, through a helper that logs and errs", map[string]sides{"lib/app_web/plugs/verify_access.ex": {access, outage}}, ""},
		{"an outage let through", map[string]sides{"lib/app_web/plugs/verify_access.ex": {access, letThrough}}, "authorization-changed"},
		{"a with's else branch that goes on unsigned", map[string]sides{"lib/app_web/plugs/verify_signature.ex": {verify, unsigned}}, "authorization-changed"},
		{"a with given one more check", map[string]sides{"lib/app_web/plugs/verify_signature.ex": {verify, stricter}}, ""},
		{"a join that admits a nil user", map[string]sides{"lib/app_web/channels/project_channel.ex": {join, guest}}, "authorization-changed"},
		{"a join that parses its id before the same check", map[string]sides{"lib/app_web/channels/project_channel.ex": {join, parsed}}, ""},
		{"a hook that refuses a nil user before the same check", map[string]sides{"lib/app_web/user_auth_live.ex": {hook, expired}}, ""},
		{"a plug's actions turned into every action but others", map[string]sides{"lib/app_web/controllers/report_controller.ex": {controller, strings.Replace(controller, "when action in [:show, :edit, :update, :delete]", "when action not in [:index, :new, :create]", 1)}}, ""},
		{"a plug's actions turned into every action but a guarded one", map[string]sides{"lib/app_web/controllers/report_controller.ex": {controller, strings.Replace(controller, "when action in [:show, :edit, :update, :delete]", "when action not in [:index, :delete]", 1)}}, "plug-changed"},
		{"a plug given every action", map[string]sides{"lib/app_web/controllers/report_controller.ex": {controller, strings.Replace(controller, " when action in [:show, :edit, :update, :delete]", "", 1)}}, ""},
		{"a plug for every action limited to some", map[string]sides{"lib/app_web/controllers/report_controller.ex": {everyAction, strings.Replace(everyAction, "plug :authorize_report\n", "plug :authorize_report when action in [:show, :update]\n", 1)}}, "plug-changed"},
		{"a plug for every action but index made every action but two", map[string]sides{"lib/app_web/controllers/report_controller.ex": {butIndex, strings.Replace(butIndex, "when action != :index", "when action not in [:index, :export]", 1)}}, "plug-changed"},
		{"a plug for every action but index written as a list", map[string]sides{"lib/app_web/controllers/report_controller.ex": {butIndex, strings.Replace(butIndex, "when action != :index", "when action not in [:index]", 1)}}, ""},
		{"an Ash policy that passes on any actor", map[string]sides{"lib/helpdesk/ticket.ex": {policy, strings.Replace(policy, "    policy action_type(:read) do\n", "    policy action_type(:read) do\n      authorize_if actor_present()\n", 1)}}, "policy-widened"},
		{"a new Ash policy for another action", map[string]sides{"lib/helpdesk/ticket.ex": {policy, strings.Replace(policy, "  policies do\n", "  policies do\n    policy action(:close) do\n      authorize_if relates_to_actor_via(:assignee)\n    end\n\n", 1)}}, ""},
	})
}

// A function plug moved out of a controller into a router pipeline is
// kept where the pipeline guards every route to the controller.
func TestAPlugMovedIntoTheRouter(t *testing.T) {
	controller := "defmodule AppWeb.MemberController do\n  use AppWeb, :controller\n\n  plug :require_org_admin\n\n  def index(conn, _), do: render(conn, :index)\n\n  defp require_org_admin(conn, _) do\n    if Orgs.admin?(conn.assigns.org, conn.assigns.current_user), do: conn, else: conn |> send_resp(403, \"\") |> halt()\n  end\nend\n"
	moved := "defmodule AppWeb.MemberController do\n  use AppWeb, :controller\n\n  def index(conn, _), do: render(conn, :index)\nend\n"
	router := "defmodule AppWeb.Router do\n  use AppWeb, :router\n\n  pipeline :browser do\n    plug :fetch_session\n  end\n\n  scope \"/orgs/:slug\", AppWeb do\n    pipe_through :browser\n\n    resources \"/members\", MemberController, only: [:index]\n    get \"/members/export\", MemberController, :export\n  end\nend\n"
	guarded := strings.Replace(strings.Replace(router, "  scope", "  pipeline :org_admin do\n    plug AppWeb.Plugs.RequireOrgAdmin\n  end\n\n  scope", 1), "pipe_through :browser", "pipe_through [:browser, :org_admin]", 1)
	half := strings.Replace(strings.Replace(router, "  scope", "  pipeline :org_admin do\n    plug AppWeb.Plugs.RequireOrgAdmin\n  end\n\n  scope \"/orgs/:slug\", AppWeb do\n    pipe_through [:browser, :org_admin]\n\n    resources \"/members\", MemberController, only: [:index]\n  end\n\n  scope", 1), "    resources \"/members\", MemberController, only: [:index]\n    get", "    get", 1)
	forExport := strings.Replace(controller, "plug :require_org_admin\n", "plug :require_org_admin when action in [:export]\n", 1)
	split := func(first, second string) string {
		return strings.Replace(router, "  scope \"/orgs/:slug\", AppWeb do\n    pipe_through :browser\n\n    resources \"/members\", MemberController, only: [:index]\n    get \"/members/export\", MemberController, :export\n  end\n",
			"  pipeline :org_admin do\n    plug AppWeb.Plugs.RequireOrgAdmin\n  end\n\n  scope \"/orgs/:slug\", AppWeb do\n    pipe_through [:browser, :org_admin]\n\n"+first+"  end\n\n  scope \"/orgs/:slug\", AppWeb do\n    pipe_through :browser\n\n"+second+"  end\n", 1)
	}
	index, export := "    get \"/members\", MemberController, :index\n", "    get \"/members/export\", MemberController, :export\n"
	exportGuarded, indexGuarded := split(export, index), split(index, export)
	plug := "defmodule AppWeb.Plugs.RequireOrgAdmin do\n  def init(opts), do: opts\n  def call(conn, _), do: conn\nend\n"
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"moved into a pipeline every route to it goes through", map[string]sides{"lib/app_web/controllers/member_controller.ex": {controller, moved}, "lib/app_web/router.ex": {router, guarded}, "lib/app_web/plugs/require_org_admin.ex": {"", plug}}, ""},
		{"moved into a pipeline one route to it skips", map[string]sides{"lib/app_web/controllers/member_controller.ex": {controller, moved}, "lib/app_web/router.ex": {router, half}, "lib/app_web/plugs/require_org_admin.ex": {"", plug}}, "plug-removed"},
		// A plug that ran for some actions needs the router's plug on those.
		{"a plug for one action moved into a pipeline that route goes through", map[string]sides{"lib/app_web/controllers/member_controller.ex": {forExport, moved}, "lib/app_web/router.ex": {router, exportGuarded}, "lib/app_web/plugs/require_org_admin.ex": {"", plug}}, ""},
		{"a plug for one action moved into a pipeline only the others go through", map[string]sides{"lib/app_web/controllers/member_controller.ex": {forExport, moved}, "lib/app_web/router.ex": {router, indexGuarded}, "lib/app_web/plugs/require_org_admin.ex": {"", plug}}, "plug-removed"},
	})
}

// Who may do what written as data: a list of the roles allowed, a
// missing scope list's default, a refusal that guarded a tenant, an Ash
// bypass; and rewrites that keep it.
func TestGrantsWrittenAsData(t *testing.T) {
	channel := "defmodule AppWeb.RoomChannel do\n  use AppWeb, :channel\n\n  @moderator_roles [:owner, :moderator]\n\n  def handle_in(\"delete\", %{\"id\" => id}, socket) do\n    if socket.assigns.role in @moderator_roles do\n      Chat.delete_message(id)\n      {:reply, :ok, socket}\n    else\n      {:reply, {:error, %{reason: \"forbidden\"}}, socket}\n    end\n  end\nend\n"
	policy := "defmodule App.Policy do\n  def can?(%User{role: role}, :export) when role in [:owner, :admin], do: true\n  def can?(_, _), do: false\nend\n"
	scopes := "defmodule AppWeb.Plugs.RequireScope do\n  def call(conn, scope) do\n    token = conn.assigns.token\n    granted = token.scopes\n    if scope in granted, do: conn, else: halt(conn)\n  end\nend\n"
	repo := "defmodule App.Repo do\n  use Ecto.Repo, otp_app: :app\n  require Logger\n\n  def prepare_query(_operation, query, opts) do\n    cond do\n      opts[:skip_org_id] || opts[:schema_migration] ->\n        {query, opts}\n\n      org_id = opts[:org_id] ->\n        {where(query, org_id: ^org_id), opts}\n\n      true ->\n        raise \"expected org_id or skip_org_id to be set\"\n    end\n  end\nend\n"
	events := "defmodule App.Events do\n  require Logger\n\n  def handle(%{\"type\" => type} = event) do\n    case type do\n      \"order.paid\" -> Orders.paid(event)\n      _ -> raise \"unknown event type #{type}\"\n    end\n  end\nend\n"
	invoice := "defmodule App.Invoice do\n  use Ash.Resource, authorizers: [Ash.Policy.Authorizer]\n\n  policies do\n    policy action_type(:read) do\n      authorize_if relates_to_actor_via(:account)\n    end\n  end\nend\n"
	middleware := "defmodule AppWeb.Middleware.Authorize do\n  @behaviour Absinthe.Middleware\n\n  def call(%{context: context} = resolution, role) do\n    user = context.current_user\n\n    if user && user.role == role do\n      resolution\n    else\n      Absinthe.Resolution.put_result(resolution, {:error, \"forbidden\"})\n    end\n  end\nend\n"
	abilities := "defmodule App.Abilities do\n  defimpl Canada.Can, for: User do\n    def can?(%User{id: id}, :edit, %Post{author_id: id}), do: true\n    def can?(%User{}, _action, _resource), do: false\n  end\nend\n"
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"a role list widened", map[string]sides{"lib/app_web/channels/room_channel.ex": {channel, strings.Replace(channel, "[:owner, :moderator]", "[:owner, :moderator, :member]", 1)}}, "role-changed"},
		{"a role list narrowed", map[string]sides{"lib/app_web/channels/room_channel.ex": {channel, strings.Replace(channel, "[:owner, :moderator]", "[:owner]", 1)}}, ""},
		{"a guard's roles widened", map[string]sides{"lib/app/policy.ex": {policy, strings.Replace(policy, "[:owner, :admin]", "[:owner, :admin, :member]", 1)}}, "role-changed"},
		{"a missing scope list that grants all", map[string]sides{"lib/app_web/plugs/require_scope.ex": {scopes, strings.Replace(scopes, "granted = token.scopes\n", "granted = token.scopes || ApiTokens.all_scopes()\n", 1)}}, "role-changed"},
		{"a missing scope list given the allowed ones", map[string]sides{"lib/app_web/plugs/require_scope.ex": {scopes, strings.Replace(scopes, "granted = token.scopes\n", "granted = token.scopes || allowed_scopes(token)\n", 1)}}, ""},
		{"a missing scope list that grants none", map[string]sides{"lib/app_web/plugs/require_scope.ex": {scopes, strings.Replace(scopes, "granted = token.scopes\n", "granted = token.scopes || []\n", 1)}}, ""},
		{"a tenant check that now logs and goes on", map[string]sides{"lib/app/repo.ex": {repo, strings.Replace(repo, "        raise \"expected org_id or skip_org_id to be set\"\n", "        Logger.warning(\"query without org_id, running unscoped\")\n        {query, opts}\n", 1)}}, "check-removed"},
		{"an unknown event that now logs", map[string]sides{"lib/app/events.ex": {events, strings.Replace(events, "      _ -> raise \"unknown event type #{type}\"\n", "      _ -> Logger.warning(\"unknown event type #{type}\")\n", 1)}}, ""},
		{"an Ash bypass for a role", map[string]sides{"lib/app/invoice.ex": {invoice, strings.Replace(invoice, "  policies do\n", "  policies do\n    bypass actor_attribute_equals(:role, :support) do\n      authorize_if always()\n    end\n\n", 1)}}, "policy-widened"},
		{"AshAuthentication's bypass for its actions", map[string]sides{"lib/app/invoice.ex": {invoice, strings.Replace(invoice, "  policies do\n", "  policies do\n    bypass AshAuthentication.Checks.AshAuthenticationInteraction do\n      authorize_if always()\n    end\n\n", 1)}}, ""},
		{"a context read with Map.get", map[string]sides{"lib/app_web/middleware/authorize.ex": {middleware, strings.Replace(middleware, "user = context.current_user", "user = Map.get(context, :current_user)", 1)}}, ""},
		{"a refusing implementation for nil added", map[string]sides{"lib/app/abilities.ex": {abilities, strings.Replace(abilities, "  end\nend\n", "  end\n\n  defimpl Canada.Can, for: Atom do\n    def can?(nil, _action, _resource), do: false\n  end\nend\n", 1)}}, ""},
	})
}

// A loader the checks read, a check function outside the web layer, and
// a call that stops being told who asks.
func TestLoadersChecksAndScopes(t *testing.T) {
	hooks := "defmodule AppWeb.LiveAuth do\n  def on_mount(:ensure_authenticated, _params, session, socket) do\n    socket = mount_current_user(socket, session)\n    if socket.assigns.current_user, do: {:cont, socket}, else: {:halt, redirect(socket, to: \"/login\")}\n  end\n\n  defp mount_current_user(socket, session) do\n    assign_new(socket, :current_user, fn -> Accounts.get_user_by_session_token(session[\"user_token\"]) end)\n  end\nend\n"
	tolerant := strings.Replace(hooks, "Accounts.get_user_by_session_token(session[\"user_token\"])", "case session do\n      %{\"user_token\" => token} when is_binary(token) -> Accounts.get_user_by_session_token(token)\n      _ -> nil\n    end", 1)
	sharing := "defmodule Drop.Sharing do\n  def open(%Share{} = share, password) do\n    with :ok <- check_password(share, password), do: {:ok, share.file}\n  end\n\n  defp check_password(%Share{password_hash: nil}, _), do: :ok\n  defp check_password(%Share{password_hash: hash}, password) do\n    if Bcrypt.verify_pass(password, hash), do: :ok, else: {:error, :forbidden}\n  end\nend\n"
	live := "defmodule AppWeb.ProjectLive.Show do\n  use AppWeb, :live_view\n\n  def handle_params(%{\"id\" => id}, _uri, socket) do\n    user = socket.assigns.current_user\n    project = Projects.get_project!(user, id)\n    {:noreply, assign(socket, :project, project)}\n  end\nend\n"
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"a loader made to tolerate a missing token", map[string]sides{"lib/app_web/live_auth.ex": {hooks, tolerant}}, ""},
		{"a check that now admits a missing password", map[string]sides{"lib/drop/sharing.ex": {sharing, strings.Replace(sharing, "  defp check_password(%Share{password_hash: hash}, password) do", "  defp check_password(%Share{}, nil), do: :ok\n\n  defp check_password(%Share{password_hash: hash}, password) do", 1)}}, "authorization-changed"},
		{"a record loaded without who asks", map[string]sides{"lib/app_web/live/project_live/show.ex": {live, strings.Replace(live, "    user = socket.assigns.current_user\n    project = Projects.get_project!(user, id)\n", "    project = Projects.get_project!(id)\n", 1)}}, "check-removed"},
		{"a record loaded with who asks", map[string]sides{"lib/app_web/live/project_live/show.ex": {live, strings.Replace(live, "Projects.get_project!(user, id)", "Projects.get_project!(user, id, preload: [:members])", 1)}}, ""},
	})
}

// A check in an action moved into a plug the change adds in front of it,
// asking for the same values; one that asks for others, or runs for
// fewer actions, is still a check removed.
func TestAChecksMovedIntoAPlug(t *testing.T) {
	controller := "defmodule API.GroupController do\n  use API, :controller\n\n  def create(conn, params) do\n    with :ok <- ensure_admin(conn.assigns.subject),\n         {:ok, group} <- Groups.create(params) do\n      render(conn, :show, group: group)\n    end\n  end\n\n  def delete(conn, %{\"id\" => id}) do\n    with :ok <- ensure_admin(conn.assigns.subject),\n         {:ok, group} <- Groups.delete(id) do\n      render(conn, :show, group: group)\n    end\n  end\n\n  defp ensure_admin(%Subject{actor: %{type: :account_admin_user}}), do: :ok\n  defp ensure_admin(_), do: {:error, :forbidden}\nend\n"
	plugged := func(opts string) string {
		moved := strings.ReplaceAll(controller, "    with :ok <- ensure_admin(conn.assigns.subject),\n         {:ok", "    with {:ok")
		moved = strings.Replace(moved, "\n  defp ensure_admin(%Subject{actor: %{type: :account_admin_user}}), do: :ok\n  defp ensure_admin(_), do: {:error, :forbidden}\n", "", 1)
		return strings.Replace(moved, "  use API, :controller\n", "  use API, :controller\n\n  plug API.Plugs.RequireActorType, "+opts+"\n", 1)
	}
	path := "lib/api/controllers/group_controller.ex"
	runWholeCasesFor(t, JobAlert, []wholeCase{
		{"a check moved into a plug that asks the same type of every action", map[string]sides{path: {controller, plugged("[types: [:account_admin_user]] when action in [:create, :delete]")}}, ""},
		{"a check moved into a plug that asks another type", map[string]sides{path: {controller, plugged("[types: [:account_user]] when action in [:create, :delete]")}}, "check-removed"},
		{"a check moved into a plug that runs for one of its actions", map[string]sides{path: {controller, plugged("[types: [:account_admin_user]] when action in [:create]")}}, "check-removed"},
	})
}
