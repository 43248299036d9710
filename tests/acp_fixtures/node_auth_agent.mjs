// An ACP agent that needs a login, written with the official TypeScript SDK
// (npm @agentclientprotocol/sdk). It refuses session/new and prompts with -32000 until
// logged in, and supports logout (agentCapabilities.auth.logout):
//   node-login     (agent)     authenticate("node-login") logs this process in
//   node-terminal  (terminal)  only when the client advertises auth.terminal: running this
//                              script with --login (and NODE_FIXTURE_LOGIN=1) reads a token
//                              from the terminal into $HOME/.node-fixture-token
// Prompts: "whoami" says how it is logged in; "fail" answers -32603 with data
// {message, details}; anything else is echoed.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const TOKEN = join(process.env.HOME ?? ".", ".node-fixture-token");

if (process.argv.includes("--login")) {
  if (process.env.NODE_FIXTURE_LOGIN !== "1") process.exit(3);
  process.stdout.write("node login: type your token: ");
  const lines = createInterface({ input: process.stdin });
  const token = await new Promise((resolve) => {
    lines.once("line", resolve);
    lines.once("close", () => resolve(""));
  });
  lines.close();
  if (!token.trim()) process.exit(1);
  writeFileSync(TOKEN, token.trim());
  process.stdout.write("node login: logged in\n");
  process.exit(0);
}

let loggedIn = null;
let sessions = 0;

function how() {
  if (loggedIn) return loggedIn;
  return existsSync(TOKEN) ? "node-terminal" : null;
}

function check() {
  if (!how()) throw acp.RequestError.authRequired();
}

const app = acp
  .agent({ name: "node-auth-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    const authMethods = [{ id: "node-login", name: "Node login", description: "The agent logs you in" }];
    if (params.clientCapabilities?.auth?.terminal) {
      authMethods.push({
        type: "terminal",
        id: "node-terminal",
        name: "Node terminal login",
        args: ["--login"],
        env: { NODE_FIXTURE_LOGIN: "1" },
      });
    }
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { auth: { logout: {} } },
      agentInfo: { name: "node-auth-agent", version: "1" },
      authMethods,
    };
  })
  .onRequest(acp.methods.agent.authenticate, ({ params }) => {
    if (params.methodId !== "node-login") {
      throw acp.RequestError.invalidParams({ message: `cannot authenticate ${params.methodId}` });
    }
    loggedIn = "node-login";
    return {};
  })
  .onRequest(acp.methods.agent.logout, () => {
    loggedIn = null;
    rmSync(TOKEN, { force: true });
    return {};
  })
  .onRequest(acp.methods.agent.session.new, () => {
    check();
    sessions += 1;
    return { sessionId: `sess_node_auth_${sessions}` };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {})
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    check();
    const text = params.prompt.map((block) => block.text ?? "").join("");
    if (text === "fail") {
      throw acp.RequestError.internalError({ message: "the node backend is down", details: "try later" });
    }
    await client.notify(acp.methods.client.session.update, {
      sessionId: params.sessionId,
      update: {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: text === "whoami" ? `logged in with ${how()}` : text },
      },
    });
    return { stopReason: "end_turn" };
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
await connection.closed;
