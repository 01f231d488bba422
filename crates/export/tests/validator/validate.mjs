// Runs the Khronos glTF validator over each .glb/.gltf given on the command
// line and prints one JSON array of {file, report} to stdout.
// Used by crates/export/tests/validator.rs; install with
// `npm ci --prefix crates/export/tests/validator`.
import fs from "node:fs/promises";
import path from "node:path";

let validator;
try {
  validator = await import("gltf-validator");
} catch (error) {
  console.error(
    "gltf-validator is not installed; run `npm ci --prefix crates/export/tests/validator`\n" +
      String(error),
  );
  process.exit(2);
}
const validateBytes = validator.validateBytes ?? validator.default.validateBytes;

const reports = [];
for (const file of process.argv.slice(2)) {
  const data = await fs.readFile(file);
  const report = await validateBytes(new Uint8Array(data), {
    uri: path.basename(file),
    maxIssues: 0,
    externalResourceFunction: async (uri) =>
      new Uint8Array(await fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)))),
  });
  reports.push({ file, report });
}
process.stdout.write(JSON.stringify(reports));
