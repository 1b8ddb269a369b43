// A small MCP server on the official TypeScript SDK's low-level Server,
// run by toolwarden's e2e tests behind wrap: the SDK writes the id of an
// answer last ({"result":...,"jsonrpc":"2.0","id":N}), and announces the
// serverInfo given here, title included.
//
//   MCP_SDK=<path to @modelcontextprotocol/sdk> node tsserver.mjs
//
// Tools: big {n} returns n bytes of text; echo {message}.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const sdk = process.env.MCP_SDK;
if (!sdk) {
  console.error('MCP_SDK is not set');
  process.exit(2);
}
const load = (p) => import(pathToFileURL(path.join(sdk, 'dist', 'esm', p)).href);
const { Server } = await load('server/index.js');
const { StdioServerTransport } = await load('server/stdio.js');
const { ListToolsRequestSchema, CallToolRequestSchema } = await load('types.js');

const server = new Server(
  { name: 'ts-upstream', version: '7.8.9', title: 'TS Upstream' },
  { capabilities: { tools: {} }, instructions: 'a TypeScript SDK server for the e2e tests' },
);
const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'big', description: 'Returns n bytes of text.', inputSchema: { type: 'object', properties: { n: { type: 'number' } } }, annotations: readOnly },
    { name: 'echo', description: 'Echoes its message.', inputSchema: { type: 'object', properties: { message: { type: 'string' } } }, annotations: readOnly },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  if (req.params.name === 'big') {
    return { content: [{ type: 'text', text: 'x'.repeat(Number(args.n ?? 0)) }] };
  }
  return { content: [{ type: 'text', text: 'echo: ' + String(args.message ?? '') }] };
});
await server.connect(new StdioServerTransport());
