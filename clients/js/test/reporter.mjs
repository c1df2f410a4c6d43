// A node --test reporter for tests/integration/t_sdk_js.sh: one line a test,
// "ok<TAB>file: name" or "fail<TAB>file: name<TAB>why", which the suite turns into lib.sh
// checks (so a failure is named). Suites and file wrappers are not tests of their own.
import { basename } from "node:path";

export default async function* reporter(source) {
	for await (const ev of source) {
		if (ev.type !== "test:pass" && ev.type !== "test:fail") continue;
		const d = ev.data;
		if (d.details?.type === "suite" || !d.file || d.name === d.file) continue;
		const name = `${basename(d.file)}: ${d.name}`.replace(/[\t\n]/g, " ");
		if (ev.type === "test:pass") {
			yield d.skip ? `skip\t${name}\n` : `ok\t${name}\n`;
		} else {
			const e = d.details?.error;
			const why = String(e?.cause?.message ?? e?.message ?? e).replace(/\s+/g, " ").slice(0, 400);
			yield `fail\t${name}\t${why}\n`;
		}
	}
}
