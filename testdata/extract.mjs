// extract.mjs writes the small test-data subsets used by internal/testenv.
//
// Usage: node extract.mjs <openapi-pkg-dir> <webhooks-examples-pkg-dir> <testdata-dir>
//
// Each *-pkg-dir is an unpacked npm tarball (the "package" directory).
// Invoked by regenerate.sh; not meant to be run on its own.
import { readFileSync, writeFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const [openapiDir, webhooksDir, outDir] = process.argv.slice(2);
if (!openapiDir || !webhooksDir || !outDir) {
  console.error("usage: node extract.mjs <openapi-pkg-dir> <webhooks-pkg-dir> <testdata-dir>");
  process.exit(2);
}

const readJSON = (p) => JSON.parse(readFileSync(p, "utf8"));
const fail = (msg) => {
  console.error(`extract.mjs: ${msg}`);
  process.exit(1);
};

// ---------------------------------------------------------------- OpenAPI

const WANTED = `
GET /app
GET /app/installations
POST /app/installations/{installation_id}/access_tokens
GET /installation/repositories
GET /repos/{owner}/{repo}
GET /repos/{owner}/{repo}/contents/{path}
GET /repos/{owner}/{repo}/collaborators/{username}/permission
GET /repos/{owner}/{repo}/issues/{issue_number}
POST /repos/{owner}/{repo}/issues
PATCH /repos/{owner}/{repo}/issues/{issue_number}
GET /repos/{owner}/{repo}/issues/{issue_number}/comments
POST /repos/{owner}/{repo}/issues/{issue_number}/comments
GET /repos/{owner}/{repo}/issues/comments/{comment_id}
PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}
POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions
POST /repos/{owner}/{repo}/issues/{issue_number}/labels
GET /repos/{owner}/{repo}/labels/{name}
POST /repos/{owner}/{repo}/labels
POST /repos/{owner}/{repo}/check-runs
PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}
GET /repos/{owner}/{repo}/commits/{ref}/check-runs
GET /repos/{owner}/{repo}/commits/{ref}/check-suites
GET /repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs
GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations
GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs
GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs
POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches
GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs
POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs
GET /repos/{owner}/{repo}/tarball/{ref}
GET /repos/{owner}/{repo}/pulls/{pull_number}
GET /repos/{owner}/{repo}/pulls/{pull_number}/files
POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers
GET /repos/{owner}/{repo}/commits
GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments
POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions
POST /repos/{owner}/{repo}/commits/{commit_sha}/comments
GET /repos/{owner}/{repo}/commits/{commit_sha}/comments
PATCH /repos/{owner}/{repo}/comments/{comment_id}
GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls
GET /repos/{owner}/{repo}/compare/{basehead}
GET /repos/{owner}/{repo}/installation
GET /repos/{owner}/{repo}/issues
GET /app/hook/deliveries
POST /app/hook/deliveries/{delivery_id}/attempts
POST /app-manifests/{code}/conversions
`
  .trim()
  .split("\n")
  .map((l) => l.trim().split(/\s+/));

const OPENAPI_FILE = "generated/api.github.com.json";
const openapiPkg = readJSON(join(openapiDir, "package.json"));
const spec = readJSON(join(openapiDir, OPENAPI_FILE));

// resolve follows local "#/..." $refs (repeatedly) and returns the target.
function resolve(node) {
  const seen = new Set();
  while (node && typeof node === "object" && typeof node.$ref === "string") {
    const ref = node.$ref;
    if (!ref.startsWith("#/")) fail(`unsupported non-local $ref ${ref}`);
    if (seen.has(ref)) fail(`circular $ref ${ref}`);
    seen.add(ref);
    let cur = spec;
    for (const raw of ref.slice(2).split("/")) {
      const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      if (cur == null || !(key in cur)) fail(`dangling $ref ${ref}`);
      cur = cur[key];
    }
    node = cur;
  }
  return node;
}

// propertiesOf returns the union of property names of a schema, descending
// into allOf/oneOf/anyOf.
function propertiesOf(schema) {
  schema = resolve(schema);
  const out = new Set();
  if (!schema || typeof schema !== "object") return out;
  for (const k of Object.keys(schema.properties ?? {})) out.add(k);
  for (const kw of ["allOf", "oneOf", "anyOf"]) {
    for (const sub of schema[kw] ?? []) for (const k of propertiesOf(sub)) out.add(k);
  }
  return out;
}

// requiredOf returns the names that are required in every valid body:
// the schema's own "required", plus everything required by all allOf
// members, plus what is required by *every* oneOf/anyOf alternative.
function requiredOf(schema) {
  schema = resolve(schema);
  const out = new Set();
  if (!schema || typeof schema !== "object") return out;
  for (const k of schema.required ?? []) out.add(k);
  for (const sub of schema.allOf ?? []) for (const k of requiredOf(sub)) out.add(k);
  for (const kw of ["oneOf", "anyOf"]) {
    const alts = (schema[kw] ?? []).map(requiredOf);
    if (alts.length === 0) continue;
    for (const k of alts[0]) if (alts.every((s) => s.has(k))) out.add(k);
  }
  return out;
}

const byPath = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const operations = [];
const missing = [];
for (const [method, path] of WANTED) {
  const op = spec.paths?.[path]?.[method.toLowerCase()];
  if (!op) {
    missing.push(`${method} ${path}`);
    continue;
  }
  let required = [];
  let props = [];
  const body = resolve(op.requestBody);
  const schema = body?.content?.["application/json"]?.schema;
  if (schema) {
    required = [...requiredOf(schema)].sort(byPath);
    props = [...propertiesOf(schema)].sort(byPath);
  }
  operations.push({
    method,
    path,
    operation_id: op.operationId ?? "",
    required_body: required,
    body_properties: props,
  });
}
if (missing.length) {
  fail(`missing from ${OPENAPI_FILE}:\n  ${missing.join("\n  ")}`);
}
operations.sort((a, b) => byPath(a.path, b.path) || byPath(a.method, b.method));

mkdirSync(join(outDir, "openapi"), { recursive: true });
writeFileSync(
  join(outDir, "openapi", "github-subset.json"),
  JSON.stringify(
    { source: `${openapiPkg.name}@${openapiPkg.version} ${OPENAPI_FILE}`, operations },
    null,
    2,
  ) + "\n",
);
console.log(`wrote openapi/github-subset.json (${operations.length} operations)`);

// --------------------------------------------------------------- Webhooks

const WEBHOOKS = [
  ["issues", "labeled"],
  ["issues", "edited"],
  ["installation", "created"],
  ["installation_repositories", "added"],
  ["workflow_run", "completed"],
  ["check_run", "completed"],
  ["pull_request", "closed"],
  ["pull_request", "synchronize"],
  ["pull_request_review", "submitted"],
  ["issue_comment", "created"],
  ["check_suite", "completed"],
  ["push", null],
];

const WEBHOOKS_FILE = "api.github.com/index.json";
const webhooksPkg = readJSON(join(webhooksDir, "package.json"));
const defs = readJSON(join(webhooksDir, WEBHOOKS_FILE));

const hooksDir = join(outDir, "webhooks");
mkdirSync(hooksDir, { recursive: true });
for (const f of readdirSync(hooksDir)) {
  if (f.endsWith(".json")) rmSync(join(hooksDir, f));
}
for (const [event, action] of WEBHOOKS) {
  const def = defs.find((d) => d.name === event);
  if (!def) fail(`webhook event ${event} not in ${WEBHOOKS_FILE}`);
  const ex = def.examples.find((e) => (action === null ? true : e.action === action));
  if (!ex) fail(`no example for ${event}.${action} in ${WEBHOOKS_FILE}`);
  const name = action === null ? `${event}.json` : `${event}.${action}.json`;
  writeFileSync(join(hooksDir, name), JSON.stringify(ex, null, 2) + "\n");
  console.log(`wrote webhooks/${name}`);
}
writeFileSync(
  join(hooksDir, "SOURCE"),
  `${webhooksPkg.name}@${webhooksPkg.version} ${WEBHOOKS_FILE}\n` +
    "First example of each event/action; regenerate with testdata/regenerate.sh.\n",
);
