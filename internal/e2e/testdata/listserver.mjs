// A stdio MCP server that lists the tool definitions given as its one
// argument (a JSON array), as they are: the adversarial hook tests use it
// as "another server" whose annotations claim whatever the test says.
import { createInterface } from "node:readline";

const tools = JSON.parse(process.argv[2] ?? "[]");
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");

createInterface({ input: process.stdin }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return;
  switch (msg.method) {
    case "initialize":
      return send({ id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "listserver", version: "1.0.0" } } });
    case "tools/list":
      return send({ id: msg.id, result: { tools } });
    case "tools/call":
      return send({ id: msg.id, result: { content: [{ type: "text", text: "done" }] } });
    case "ping":
      return send({ id: msg.id, result: {} });
  }
  send({ id: msg.id, error: { code: -32601, message: "method not found" } });
});
