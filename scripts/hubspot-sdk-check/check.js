// check.js checks the requests bookingsaga's HubSpot adapter sends
// (internal/hubspot/testdata/requests.json, which the adapter's tests keep
// current) against HubSpot's own Node SDK, @hubspot/api-client, whose
// operations and models are generated from HubSpot's OpenAPI documents:
// the path and method are an operation of the API file named, each query
// parameter is one it sets, and the body has only the model's fields,
// every required one, each of its type.
//
//   node check.js REQUESTS.json node_modules/@hubspot/api-client
'use strict';
const fs = require('fs');
const path = require('path');

const [requestsFile, sdkDir] = process.argv.slice(2);
const codegen = path.join(sdkDir, 'lib', 'codegen');
const problems = [];

// operationText is the text of the SDK function that builds path with
// method, from its localVarPath to the next one.
function operationText(api, template, method) {
  const src = fs.readFileSync(path.join(codegen, api), 'utf8');
  const marker = `localVarPath = '${template}'`;
  for (let at = src.indexOf(marker); at >= 0; at = src.indexOf(marker, at + 1)) {
    const next = src.indexOf('localVarPath = ', at + marker.length);
    const text = src.slice(at, next < 0 ? undefined : next);
    if (text.includes(`HttpMethod.${method})`)) return text;
  }
  return null;
}

// model reads a model's fields from its .js (names, types) and its .d.ts
// (which are optional).
function model(dir, name) {
  const js = require(path.resolve(path.join(dir, name)));
  const cls = js[name];
  const dts = fs.readFileSync(path.join(dir, name + '.d.ts'), 'utf8');
  const fields = {};
  for (const a of cls.getAttributeTypeMap()) {
    const optional = new RegExp(`['"]?${a.name}['"]?\\?:`).test(dts);
    fields[a.baseName] = { type: a.type, required: !optional };
  }
  return fields;
}

function checkValue(where, dir, type, value) {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) return problems.push(`${where}: not an array`);
    return value.forEach((v, i) => checkValue(`${where}[${i}]`, dir, array[1], v));
  }
  if (type === '{ [key: string]: string; }') {
    if (typeof value !== 'object' || value === null) return problems.push(`${where}: not an object`);
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') problems.push(`${where}.${k}: not a string`);
    }
    return;
  }
  if (['string', 'boolean', 'number'].includes(type)) {
    if (typeof value !== type) problems.push(`${where}: ${JSON.stringify(value)} is not a ${type}`);
    return;
  }
  if (fs.existsSync(path.join(dir, type + '.js'))) return checkObject(where, dir, type, value);
  if (/Enum$/.test(type) && typeof value === 'string') return;
  problems.push(`${where}: unknown SDK type ${type}`);
}

function checkObject(where, dir, name, value) {
  const fields = model(dir, name);
  for (const k of Object.keys(value)) {
    if (!fields[k]) problems.push(`${where}: ${k} is no field of ${name}`);
  }
  for (const [k, f] of Object.entries(fields)) {
    if (value[k] === undefined) {
      if (f.required) problems.push(`${where}: ${name}.${k} is required`);
      continue;
    }
    checkValue(`${where}.${k}`, dir, f.type, value[k]);
  }
}

const requests = JSON.parse(fs.readFileSync(requestsFile, 'utf8'));
for (const r of requests) {
  const where = `${r.method} ${r.path}`;
  const text = operationText(r.api, r.path, r.method);
  if (!text) {
    problems.push(`${where}: no such operation in ${r.api}`);
    continue;
  }
  for (const q of r.query || []) {
    if (!text.includes(`Param("${q}"`)) problems.push(`${where}: query ${q} is not one the SDK sets`);
  }
  if (r.body !== undefined) {
    if (!r.model) problems.push(`${where}: a body without a model to check it against`);
    else checkObject(where, path.join(codegen, path.dirname(r.model)), path.basename(r.model), r.body);
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const version = JSON.parse(fs.readFileSync(path.join(sdkDir, 'package.json'), 'utf8')).version;
console.log(`${requests.length} HubSpot requests match @hubspot/api-client ${version}`);
