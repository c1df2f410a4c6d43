// validate.mjs DOCUMENT.json OPERATION_ID STATUS [MEDIA_TYPE] < body
// Validates a live answer (stdin) against the response schema the OpenAPI document gives
// for that operation and status (tests/integration/lib.sh's expect_schema). Ajv's JSON
// Schema 2020-12 validator, as OpenAPI 3.1's schemas are, with formats (date-time) checked.
// Exit 0 valid; 1 invalid (the errors on stderr); 2 the document names no such answer.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [docFile, opId, status, media = "application/json"] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docFile, "utf8"));
const esc = (s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const deref = (node, at) => {
	while (node && node.$ref) {
		at = node.$ref.slice(1);
		node = at.split("/").slice(1).reduce((o, k) => o?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
	}
	return [node, at];
};

let found = null;
for (const [path, item] of Object.entries(doc.paths ?? {}))
	for (const [method, op] of Object.entries(item))
		if (op?.operationId === opId) found = [path, method, op];
if (!found) {
	console.error(`no operation ${opId} in ${docFile}`);
	process.exit(2);
}
const [path, method, op] = found;
const [resp, at] = deref(op.responses?.[status],
	`/paths/${esc(path)}/${method}/responses/${status}`);
if (!resp) {
	console.error(`${opId} documents no ${status} answer`);
	process.exit(2);
}
if (!resp.content?.[media]?.schema) {
	console.error(`${opId} ${status} documents no ${media} body`);
	process.exit(2);
}
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, "oas");
const validate = ajv.compile({ $ref: `oas#${at}/content/${esc(media)}/schema` });
const text = readFileSync(0, "utf8");
let body;
try {
	body = JSON.parse(text);
} catch (e) {
	console.error(`the body is not JSON: ${e.message}`);
	process.exit(1);
}
if (validate(body)) process.exit(0);
for (const e of validate.errors.slice(0, 10))
	console.error(`${e.instancePath || "(the body)"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
process.exit(1);
