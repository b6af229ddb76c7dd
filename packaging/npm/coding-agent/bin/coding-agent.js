#!/usr/bin/env node
// Runs the coding-agent binary of this platform, installed by npm as one of
// this package's optional dependencies (@coding-agent/coding-agent-<os>-<cpu>),
// with the same arguments, stdio and exit status.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const supported = {
  darwin: ["arm64", "x64"],
  linux: ["arm64", "x64"],
  win32: ["arm64", "x64"],
};
const { platform, arch } = process;
if (!supported[platform]?.includes(arch)) {
  console.error(`coding-agent: no build for ${platform}-${arch} (builds: darwin, linux and win32 on arm64 and x64)`);
  process.exit(1);
}
const pkg = `@coding-agent/coding-agent-${platform}-${arch}`;
const exe = platform === "win32" ? "coding-agent.exe" : "coding-agent";
let binary;
try {
  binary = fileURLToPath(import.meta.resolve(`${pkg}/bin/${exe}`));
} catch {}
if (!binary || !existsSync(binary)) {
  console.error(`coding-agent: ${pkg} is not installed: npm skipped the optional dependency for this platform. ` +
    `Reinstall without --omit=optional (or --no-optional), or install ${pkg} yourself.`);
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
// Signals go to the whole process group from a terminal; from an editor,
// forward the ones that end us so the agent can stop its children.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => {
  console.error(`coding-agent: cannot run ${binary}: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
