// The official TypeScript SDK's client (installed with server-everything, which depends on
// it) drives a
// 2025-11-25 task server over stdio; prints one JSON report on stdout.
// usage: node sdk_client.mjs COMMAND [ARG ...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "sdk-tasks-probe", version: "1.0.0" });
await client.connect(transport);
const report = { capabilities: client.getServerCapabilities() };
report.tools = (await client.listTools()).tools.map((t) => [t.name, t.execution ?? null]);

async function stream(name, args, options) {
  const seen = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args }, undefined, options)) {
    if (message.type === "taskCreated") seen.push(["taskCreated", message.task.status, message.task.taskId]);
    else if (message.type === "taskStatus") seen.push(["taskStatus", message.task.status]);
    else if (message.type === "result") seen.push(["result", message.result.content[0].text, message.result._meta]);
    else seen.push(["error", message.error.code, message.error.message]);
  }
  return seen;
}

report.shout = await stream("shout", { text: "hi" });
report.double = await stream("double", { x: 21 }, { task: { ttl: 60000 } });
const taskId = report.double[0][2];
report.get = await client.experimental.tasks.getTask(taskId);
report.list = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
try {
  await client.experimental.tasks.cancelTask(taskId);
  report.cancelTerminal = "accepted";
} catch (error) {
  report.cancelTerminal = error.code;
}
await client.close();
console.log(JSON.stringify(report));
