// An ACP client written with the official TypeScript SDK (npm @agentclientprotocol/sdk).
//
// It drives the demo agent (examples/acp/demo_agent.py) through every command, answering
// the agent's callbacks itself, and writes what it saw as JSON to the report file.
//
//   node node_client.mjs REPORT WORKSPACE                # the agent is on our stdio
//   node node_client.mjs REPORT WORKSPACE --spawn CMD... # spawn the agent ourselves
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [reportPath, workspace, mode, ...agentCommand] = process.argv.slice(2);

const updates = [];
const calls = [];
let permissionRequests = 0;
let updateWaiter = null;
const terminals = new Map();

function notifyUpdate() {
  if (updateWaiter) {
    const resolve = updateWaiter;
    updateWaiter = null;
    resolve();
  }
}

function terminalStatus(terminal) {
  if (terminal.exit === null) return null;
  return terminal.exit.signal ? { exitCode: null, signal: terminal.exit.signal } : { exitCode: terminal.exit.code, signal: null };
}

const app = acp
  .client({ name: "node-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
    notifyUpdate();
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    calls.push("session/request_permission");
    permissionRequests += 1;
    const allow = params.options.find((option) => option.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    calls.push("fs/read_text_file");
    return { content: readFileSync(params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    calls.push("fs/write_text_file");
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, ({ params }) => {
    calls.push("terminal/create");
    const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, detached: true });
    const terminal = { child, output: "", exit: null, exited: null };
    terminal.exited = new Promise((resolve) => {
      child.on("close", (code, signal) => {
        terminal.exit = { code, signal };
        resolve();
      });
    });
    child.stdout.on("data", (data) => (terminal.output += data.toString()));
    child.stderr.on("data", (data) => (terminal.output += data.toString()));
    const terminalId = `term_${terminals.size + 1}`;
    terminals.set(terminalId, terminal);
    return { terminalId };
  })
  .onRequest(acp.methods.client.terminal.output, ({ params }) => {
    calls.push("terminal/output");
    const terminal = terminals.get(params.terminalId);
    return { output: terminal.output, truncated: false, exitStatus: terminalStatus(terminal) };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    calls.push("terminal/wait_for_exit");
    const terminal = terminals.get(params.terminalId);
    await terminal.exited;
    return terminalStatus(terminal);
  })
  .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
    calls.push("terminal/kill");
    const terminal = terminals.get(params.terminalId);
    if (terminal.exit === null) process.kill(-terminal.child.pid, "SIGKILL");
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, ({ params }) => {
    calls.push("terminal/release");
    const terminal = terminals.get(params.terminalId);
    if (terminal.exit === null) process.kill(-terminal.child.pid, "SIGKILL");
    terminals.delete(params.terminalId);
    return {};
  });

function waitForUpdate() {
  return new Promise((resolve) => (updateWaiter = resolve));
}

async function scenario(ctx) {
  const report = {};
  report.initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    clientInfo: { name: "node-client", version: "1" },
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  const sessionId = session.sessionId;
  const prompt = (text) =>
    ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  report.hello = (await prompt("hello from the SDK")).stopReason;
  const commands = ["/read notes.txt", "/write out.txt written by demo", "/run --timeout 0.5 sleep 30", "/run echo hi", "/plan"];
  report.commands = (await prompt(commands.join("\n"))).stopReason;
  const before = updates.length;
  const turn = prompt("/sleep 600");
  while (!updates.slice(before).some((update) => update.sessionUpdate === "tool_call_update")) {
    await waitForUpdate();
  }
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  report.cancelled = (await turn).stopReason;
  // A request before which nothing is wrong, after a bad one: the connection lives on.
  try {
    await ctx.request(acp.methods.agent.session.prompt, { sessionId: "sess_unknown", prompt: [] });
    report.unknownSession = null;
  } catch (error) {
    report.unknownSession = error.code;
  }
  report.afterError = (await prompt("still alive")).stopReason;
  report.updates = updates;
  report.calls = calls;
  report.permission_requests = permissionRequests;
  report.out_txt = readFileSync(`${workspace}/out.txt`, "utf8");
  return report;
}

let stream;
let child = null;
if (mode === "--spawn") {
  child = spawn(agentCommand[0], agentCommand.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
} else {
  stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
}

const timer = setTimeout(() => {
  console.error("node client: timed out");
  process.exit(3);
}, 60000);
try {
  const report = await app.connectWith(stream, scenario);
  writeFileSync(reportPath, JSON.stringify(report));
} catch (error) {
  console.error("node client failed:", error);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  if (child) child.stdin.end();
}
process.exit(process.exitCode ?? 0);
