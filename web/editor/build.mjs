// Builds web/static/live.js, the editor's bundle, from src/ with esbuild.
//
// The bundle is committed and embedded in the binary (no npm at run time).
// Its first line names the SHA-256 of what it was built from (sourceHash
// below: every file under src/, package.json, package-lock.json and this
// script); web/bundle_test.go computes the same hash and fails when the
// bundle is older than its sources. The build is reproducible: the same
// sources and lock file give the same bytes (no dates, no absolute paths).
//
//   npm run build               writes ../static/live.js
//   node build.mjs --out FILE   writes FILE instead (the freshness test)
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

// inputs lists the files the bundle is made from, as slash-separated
// paths relative to web/editor, sorted by byte order.
function inputs() {
  const out = ["build.mjs", "package-lock.json", "package.json"];
  const walk = (rel) => {
    for (const e of readdirSync(join(here, rel), { withFileTypes: true })) {
      const p = rel + "/" + e.name;
      if (e.isDirectory()) {
        walk(p);
      } else if (e.isFile()) {
        out.push(p);
      }
    }
  };
  walk("src");
  return out.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

// sourceHash is the SHA-256 of a manifest with one line per input:
// "<sha256 of the file, hex> <path>\n".
export function sourceHash() {
  const manifest = inputs()
    .map((p) => createHash("sha256").update(readFileSync(join(here, p))).digest("hex") + " " + p + "\n")
    .join("");
  return createHash("sha256").update(manifest).digest("hex");
}

const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
const outFile = outIndex >= 0 ? args[outIndex + 1] : join(here, "..", "static", "live.js");

const result = await build({
  absWorkingDir: here,
  entryPoints: ["src/main.js"],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  charset: "utf8",
  legalComments: "none",
  write: false,
  logLevel: "warning",
});
const banner =
  "/* quire live editor: built by web/editor/build.mjs (npm run build in web/editor); do not edit.\n" +
  " * CodeMirror 6 (MIT, Marijn Haverbeke and others), bundled with esbuild.\n" +
  " * sources-sha256: " + sourceHash() + " */\n";
writeFileSync(outFile, banner + result.outputFiles[0].text);
