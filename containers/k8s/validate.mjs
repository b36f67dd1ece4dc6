// Validates Kubernetes objects against the Kubernetes API schema, offline:
// the npm package kubernetes-models ships validators generated from the
// Kubernetes OpenAPI definitions (types, enums, required fields, formats).
//
//   node containers/k8s/validate.mjs MODELS_DIR < objects.json
//
// MODELS_DIR: a node_modules directory holding kubernetes-models
// (scripts/setup.sh installs it under /opt/profcpu-k8s/node_modules).
// stdin: a JSON array of {"file", "object"}; an object without apiVersion and
// kind is a container spec (kubectl debug --custom) checked as an
// EphemeralContainer. Prints one line per object; exits 1 if any is invalid,
// 2 if the validator itself cannot run.
import { readFileSync, existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const modelsDir = process.argv[2];
const root = modelsDir && join(modelsDir, "kubernetes-models");
if (!root || !existsSync(join(root, "package.json"))) {
  console.error(`validate.mjs: kubernetes-models not found in '${modelsDir}' (scripts/setup.sh installs it)`);
  process.exit(2);
}

// apiVersion "apps/v1" -> kubernetes-models/apps/v1/KIND.js; "v1" -> v1/KIND.js
async function modelFor(object) {
  const typed = object.apiVersion !== undefined || object.kind !== undefined;
  const path = typed ? join(root, ...String(object.apiVersion).split("/"), `${object.kind}.js`)
                     : join(root, "v1", "EphemeralContainer.js");
  if (!existsSync(path)) throw new Error(`no schema for apiVersion ${object.apiVersion} kind ${object.kind}`);
  const module = await import(pathToFileURL(path).href);
  return module[typed ? object.kind : "EphemeralContainer"];
}

const entries = JSON.parse(readFileSync(0, "utf8"));
let failures = 0;
for (const { file, object } of entries) {
  try {
    const Model = await modelFor(object);
    new Model(object).validate();
    console.log(`ok ${file}: ${object.kind ?? "EphemeralContainer"} ${object.metadata?.name ?? object.name ?? ""}`);
  } catch (e) {
    failures++;
    console.log(`INVALID ${file}: ${e.message}`);
  }
}
process.exit(failures ? 1 : 0);
