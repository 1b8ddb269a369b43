// A scripted MCP client on the official TypeScript SDK, driven by
// toolwarden's e2e tests (internal/e2e/typescript_test.go) to prove interop.
//
//   MCP_SDK=<path to @modelcontextprotocol/sdk> node tsclient.mjs '<script JSON>'
//
// The script is {"command", "args", "elicitation": bool, "answers": [...],
// "roots": [folders] (declares roots when present), "steps": [{"op":
// "list"} | {"op": "call", "name", "arguments"} | {"op": "setRoots",
// "roots"} (then notifies the server) | {"op": "waitFor", "name",
// "arguments", "contains"} (calls until the text contains it, 10 s) |
// {"op": "run", "name": command, "arguments": {"args": [...]}} (runs a
// command to its end between two calls; text is its stdout) |
// {"op": "waitListChanged"} (waits, 10 s, for a
// notifications/tools/list_changed not yet waited for or reset) |
// {"op": "resetListChanged"} (forgets those received so far; text is how
// many) | {"op": "signal",
// "name": "SIGHUP"} (signals the server process)]}.
// Each answer is an option ("allow_once", ...) accepted as {decision:
// answer}, "decline", "cancel", or "hold" (never answered). The client prints one JSON object: {"results":
// [...], "asked": [elicitation params...]}.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const sdk = process.env.MCP_SDK;
if (!sdk) {
  console.error('MCP_SDK is not set');
  process.exit(2);
}
const load = (p) => import(pathToFileURL(path.join(sdk, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport, getDefaultEnvironment } = await load('client/stdio.js');
const { ElicitRequestSchema, ListRootsRequestSchema, ToolListChangedNotificationSchema } = await load('types.js');

const script = JSON.parse(process.argv[2]);
const answers = [...(script.answers ?? [])];
const asked = [];

const capabilities = {};
if (script.elicitation) capabilities.elicitation = {};
if (script.roots) capabilities.roots = { listChanged: true };
const client = new Client({ name: 'toolwarden-e2e-ts', version: '1.0.0' }, { capabilities });
let roots = script.roots ?? [];
if (script.roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: path.basename(dir) })),
  }));
}
// Tool list changes the server announced and no waitListChanged step
// consumed yet, and the step waiting for one.
let listChanges = 0;
let onListChanged = null;
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  listChanges++;
  if (onListChanged) onListChanged();
});
const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
if (script.elicitation) {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    asked.push(request.params);
    const answer = answers.shift();
    if (answer === 'hold') {
      // Leaves the prompt open, as a person who walked away would, until
      // the server cancels it or the client closes.
      return await new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' })));
    }
    if (answer === 'cancel') {
      return { action: 'cancel' };
    }
    if (answer === undefined || answer === 'decline') {
      return { action: 'decline' };
    }
    return { action: 'accept', content: { decision: answer } };
  });
}

const transport = new StdioClientTransport({
  command: script.command,
  args: script.args,
  env: { ...getDefaultEnvironment(), ...(script.env ?? {}) },
  stderr: 'inherit',
});
await client.connect(transport);

const results = [];
for (const step of script.steps) {
  try {
    if (step.op === 'list') {
      const res = await client.listTools();
      results.push({ op: 'list', tools: res.tools.map((t) => t.name) });
    } else if (step.op === 'call') {
      // Optional: "timeout" (ms) and "resetTimeoutOnProgress", as a client
      // sets them per request; "progress" counts the notifications seen.
      let progress = 0;
      const opts = step.timeout ? { timeout: step.timeout } : {};
      if (step.resetTimeoutOnProgress) Object.assign(opts, { resetTimeoutOnProgress: true, onprogress: () => { progress++; } });
      const res = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
      results.push({ op: 'call', name: step.name, isError: res.isError === true, text: textOf(res), progress });
    } else if (step.op === 'setRoots') {
      roots = step.roots;
      await client.sendRootsListChanged();
      results.push({ op: 'setRoots' });
    } else if (step.op === 'waitFor') {
      const until = Date.now() + 10000;
      let res;
      do {
        res = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
        if (textOf(res).includes(step.contains)) break;
        await new Promise((r) => setTimeout(r, 50));
      } while (Date.now() < until);
      results.push({ op: 'waitFor', name: step.name, isError: res.isError === true, text: textOf(res) });
    } else if (step.op === 'run') {
      const out = execFileSync(step.name, step.arguments?.args ?? [], { encoding: 'utf8' });
      results.push({ op: 'run', name: step.name, text: out });
    } else if (step.op === 'waitListChanged') {
      if (listChanges === 0) {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no notifications/tools/list_changed within 10 s')), 10000);
          onListChanged = () => { clearTimeout(timer); resolve(); };
        }).finally(() => { onListChanged = null; });
      }
      listChanges--;
      results.push({ op: 'waitListChanged' });
    } else if (step.op === 'resetListChanged') {
      results.push({ op: 'resetListChanged', text: String(listChanges) });
      listChanges = 0;
    } else if (step.op === 'signal') {
      process.kill(transport.pid, step.name);
      results.push({ op: 'signal', name: step.name });
    }
  } catch (err) {
    results.push({ op: step.op, name: step.name, thrown: String(err?.message ?? err) });
  }
}
await client.close();
process.stdout.write(JSON.stringify({ results, asked }) + '\n');
