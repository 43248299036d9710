// An @a2a-js/sdk client against an A2A agent (the rpcweave TCK agent in the tests).
//
//   node js_client.mjs BASE_URL BINDING          (BINDING: JSONRPC or HTTP+JSON)
//
// Prints one JSON object per line: {"step": ..., ...}. Exits non-zero on an unexpected
// failure, printing {"step": "fatal", "error": ...}.
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
} from "@a2a-js/sdk";

const [baseUrl, binding] = process.argv.slice(2);

function out(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function request(messageId, text, extra = {}) {
  return SendMessageRequest.fromJSON({
    message: { messageId, role: "ROLE_USER", parts: [{ text }], ...extra },
  });
}

function resultJSON(result) {
  // SendMessageResult is a Task or a Message: tell them apart by their members.
  if (result && "status" in result) return { task: Task.toJSON(result) };
  return { message: Message.toJSON(result) };
}

async function main() {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
      preferredTransports: [binding],
    })
  );
  const client = await factory.createFromUrl(baseUrl);
  out({ step: "card", protocol: client.protocolVersion });

  const done = await client.sendMessage(request("tck-complete-task-js-" + binding, "hi"));
  out({ step: "send", result: resultJSON(done) });

  const reply = await client.sendMessage(request("tck-message-response-js-" + binding, "hi"));
  out({ step: "reply", result: resultJSON(reply) });

  const events = [];
  for await (const event of client.sendMessageStream(
    request("tck-stream-artifact-chunked-js-" + binding, "stream")
  )) {
    events.push(StreamResponse.toJSON(event));
  }
  out({ step: "stream", events });

  const taskId = done.id;
  const got = await client.getTask(GetTaskRequest.fromJSON({ id: taskId, historyLength: 1 }));
  out({ step: "get", task: Task.toJSON(got) });

  try {
    await client.cancelTask(CancelTaskRequest.fromJSON({ id: taskId }));
    out({ step: "cancel-terminal", error: null });
  } catch (e) {
    out({ step: "cancel-terminal", error: e.constructor.name, message: String(e.message) });
  }

  try {
    await client.getTask(GetTaskRequest.fromJSON({ id: "no-such-task" }));
    out({ step: "get-unknown", error: null });
  } catch (e) {
    out({ step: "get-unknown", error: e.constructor.name, message: String(e.message) });
  }

  const listed = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 2 }));
  out({ step: "list", count: listed.tasks.length, next: listed.nextPageToken, total: listed.totalSize });

  const asked = await client.sendMessage(request("tck-input-required-js-" + binding, "ask"));
  const answered = await client.sendMessage(
    request("answer-js-" + binding, "the answer", { taskId: asked.id, contextId: asked.contextId })
  );
  out({ step: "multi-turn", first: Task.toJSON(asked).status.state, then: Task.toJSON(answered).status.state, same: asked.id === answered.id });
}

main().catch((e) => {
  out({ step: "fatal", error: String(e && e.stack ? e.stack : e) });
  process.exit(1);
});
