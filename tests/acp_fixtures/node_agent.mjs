// An ACP agent written with the official TypeScript SDK (npm @agentclientprotocol/sdk).
//
// Prompts it understands (anything else is echoed):
//   fs PATH   read PATH, ask permission, then write PATH + ".copy" (upper-cased) if allowed
//   term      run `echo from-terminal` in a client terminal
//   sleep     send updates until session/cancel, then stop with "cancelled"
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const cancelled = new Map();
let sessions = 0;

function say(client, sessionId, text) {
  return client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

const app = acp
  .agent({ name: "node-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { promptCapabilities: { image: true } },
    agentInfo: { name: "node-agent", version: "1" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    sessions += 1;
    return { sessionId: `sess_node_${sessions}` };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const cancel = cancelled.get(params.sessionId);
    if (cancel) cancel();
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId, prompt } = params;
    let isCancelled = false;
    let wake = () => {};
    cancelled.set(sessionId, () => {
      isCancelled = true;
      wake();
    });
    const text = prompt.map((block) => block.text ?? "").join("");
    if (text.startsWith("fs ")) {
      const path = text.slice(3);
      const { content } = await client.request(acp.methods.client.fs.readTextFile, { sessionId, path });
      await client.notify(acp.methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "tool_call", toolCallId: "call_1", title: `Copy ${path}`, kind: "edit", status: "pending" },
      });
      const permission = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "call_1", title: `Copy ${path}` },
        options: [
          { optionId: "yes", name: "Yes", kind: "allow_once" },
          { optionId: "no", name: "No", kind: "reject_once" },
        ],
      });
      const allowed = permission.outcome.outcome === "selected" && permission.outcome.optionId === "yes";
      if (allowed) {
        await client.request(acp.methods.client.fs.writeTextFile, {
          sessionId,
          path: `${path}.copy`,
          content: content.toUpperCase(),
        });
      }
      await say(client, sessionId, `read '${content}', allowed=${allowed ? "True" : "False"}`);
    } else if (text === "term") {
      const terminal = await client.createTerminal({ sessionId, command: "echo", args: ["from-terminal"] });
      const status = await terminal.waitForExit();
      const output = await terminal.currentOutput();
      await terminal.release();
      await say(client, sessionId, `exit=${status.exitCode} output=${JSON.stringify(output.output)}`);
    } else if (text === "sleep") {
      while (!isCancelled) {
        await say(client, sessionId, "working");
        await new Promise((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
      return { stopReason: "cancelled" };
    } else {
      for (const block of prompt) {
        await say(client, sessionId, block.type === "image" ? `image of ${block.data.length} chars` : block.text);
      }
    }
    return { stopReason: "end_turn" };
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
