package setup

import "html/template"

const style = `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#1f2328}
button{font-size:1em;padding:.5em 1.2em;background:#1f883d;color:#fff;border:0;border-radius:6px;cursor:pointer}
.err{background:#ffebe9;border:1px solid #ff8182;padding:.5em 1em;border-radius:6px} code{background:#f6f8fa;padding:0 .3em}
fieldset{border:1px solid #d0d7de;border-radius:6px;margin:1em 0} label{display:block;margin:.3em 0}</style>`

var startPage = template.Must(template.New("start").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>Register pitcrew</title>` + style + `</head><body>
<h1>Register pitcrew as a GitHub App</h1>
{{with .Error}}<p class="err" id="error">{{.}}</p>{{end}}
<p>pitcrew has no GitHub App yet. Register one: GitHub creates it from pitcrew's manifest (<code>app.yml</code>) and sends you back here.</p>
{{with .HookURL}}<div class="err" id="webhook-warning"><p>GitHub.com cannot deliver webhooks to <code>{{.}}</code>, the URL this registration gives it: {{$.HookWhy}}. Registered like this, the app would never receive an event.</p>
<p>On a laptop, create a channel on <a href="https://smee.io">smee.io</a>, set <code>PITCREW_WEBHOOK_PROXY_URL</code> to its URL and restart pitcrew: GitHub then posts to the channel and pitcrew reads it itself. On a server, set <code>PITCREW_PUBLIC_URL</code> to the address GitHub reaches it at. (A GitHub Enterprise Server on the same network may reach it as it is.)</p></div>{{end}}
<form method="post" action="/setup/start">
{{with .Token}}<input type="hidden" name="setup_token" value="{{.}}">{{end}}
<fieldset><legend>Register it on</legend>
<label><input type="radio" name="account" value="personal" checked> my personal account</label>
<label><input type="radio" name="account" value="organization"> an organisation: <input name="org" id="org" placeholder="organisation name" maxlength="39"></label>
</fieldset>
<button type="submit" id="register">Register on GitHub</button>
</form></body></html>`))

// missingPage is shown instead of the registration form while settings
// pitcrew needs to start are missing: an app registered now could not run.
var missingPage = template.Must(template.New("missing").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>Register pitcrew</title>` + style + `</head><body>
<h1>First, the sandbox settings</h1>
<p>pitcrew sends its agent through the sandbox sessions API, and an app registered now could not start without these:</p>
<ul id="missing">{{range .Missing}}<li>{{.}}</li>{{end}}</ul>
<p>Set them in the environment (or in the file given with <code>-config</code>), then restart pitcrew and open this page again.</p>
</body></html>`))

var continuePage = template.Must(template.New("continue").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>Register pitcrew</title>` + style + `</head><body>
<h1>Continue on GitHub</h1>
<p>GitHub will show the app's name, events and permissions before creating it.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit" id="continue">Create the app on GitHub</button>
</form></body></html>`))

var donePage = template.Must(template.New("done").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>pitcrew registered</title>` + style + `</head><body>
<h1>{{.Name}} is registered</h1>
<p>Its credentials are in <code>{{.Path}}</code>, readable by you only.</p>
{{with .Restart}}<p class="err">{{.}}</p>{{else}}<p>pitcrew is now serving webhooks.</p>{{end}}
<p><a href="{{.Install}}" id="install">Install it on your repositories</a></p>
</body></html>`))
