// A scripted MCP client on the official TypeScript SDK's streamable HTTP
// transport, driven by toolwarden's e2e tests (serve_clients_test.go) to
// prove that `toolwarden serve` works with the client most MCP hosts are
// built on.
//
//   MCP_SDK=<path to @modelcontextprotocol/sdk> node serve-client.mjs '<script JSON>'
//
// The script is {"url", "token" (sent as "Authorization: Bearer <token>"
// when present), "elicitation": bool, "answers": [...], "steps": [{"op":
// "list"} | {"op": "call", "name", "arguments"}]}. Each answer is an
// option ("allow_once", ...) accepted as {decision: answer}, or "decline"
// or "cancel". The client prints one JSON object: {"connected", "error":
// {"code", "message"} (when connecting failed), "sessionId",
// "protocolVersion", "results": [...], "asked": [elicitation params...]}.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const sdk = process.env.MCP_SDK;
if (!sdk) {
  console.error('MCP_SDK is not set');
  process.exit(2);
}
const load = (p) => import(pathToFileURL(path.join(sdk, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { ElicitRequestSchema } = await load('types.js');

const script = JSON.parse(process.argv[2]);
const answers = [...(script.answers ?? [])];
const asked = [];
const out = { connected: false, results: [], asked };

const capabilities = script.elicitation ? { elicitation: {} } : {};
const client = new Client({ name: 'toolwarden-e2e-serve-ts', version: '1.0.0' }, { capabilities });
if (script.elicitation) {
  // What a host's approval dialog does: show the request, give the
  // person's answer back on the same session.
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    const answer = answers.shift();
    if (answer === 'cancel') return { action: 'cancel' };
    if (answer === undefined || answer === 'decline') return { action: 'decline' };
    return { action: 'accept', content: { decision: answer } };
  });
}

const requestInit = script.token ? { headers: { Authorization: `Bearer ${script.token}` } } : undefined;
const transport = new StreamableHTTPClientTransport(new URL(script.url), { requestInit });
try {
  await client.connect(transport);
} catch (err) {
  // The test asserts on a refused connection (no token, a wrong one), so
  // it is an answer, not a crash.
  out.error = { code: err?.code ?? null, message: String(err?.message ?? err) };
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}
out.connected = true;
out.sessionId = transport.sessionId ?? '';
out.protocolVersion = transport.protocolVersion ?? '';

const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
for (const step of script.steps ?? []) {
  try {
    if (step.op === 'list') {
      const res = await client.listTools();
      out.results.push({ op: 'list', tools: res.tools.map((t) => t.name) });
    } else if (step.op === 'call') {
      const res = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
      out.results.push({ op: 'call', name: step.name, isError: res.isError === true, text: textOf(res) });
    } else {
      throw new Error(`unknown step op ${JSON.stringify(step.op)}`);
    }
  } catch (err) {
    out.results.push({ op: step.op, name: step.name, thrown: String(err?.message ?? err) });
  }
}
// Ends the session as a host does when it closes (DELETE with the id).
await transport.terminateSession().catch(() => {});
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
